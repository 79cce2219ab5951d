package pctd

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// Learner is PC-TD's party half: one EM iteration per round. It cuts its
// documents into semantic units once; every round it runs the E-step of
// Eq. 5 against the broadcast topics — with fresh Gaussian noise on every
// unit's counts (VariantUnit) or on the exact counts (VariantSSP) —,
// updates its θ_d (Eq. 7), which never leave it, and sends M_t (Eq. 10),
// with Gaussian noise added to the whole of M_t for VariantSSP. Every
// round is a release, charged before it leaves.
type Learner struct {
	cfg   Config
	party int
	id    string
	vocab []string
	seed  uint64
	em    *em
	noise *privacy.Source
	last  []float64 // the latest topics received
	final []float64 // the final model, after Finish
	round int
	spent []privacy.Event
}

// NewLearner returns party's half for its documents docs, whose word ids
// index s.Vocab.
func NewLearner(s fed.Setup, party int, docs *corpus.Corpus) (*Learner, error) {
	cfg, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	if party < 0 || party >= len(s.Parties) {
		return nil, fmt.Errorf("pctd: party %d outside [0, %d)", party, len(s.Parties))
	}
	if docs == nil {
		return nil, errors.New("pctd: nil corpus")
	}
	if err := docs.Validate(); err != nil {
		return nil, fmt.Errorf("pctd: party %d: %w", party, err)
	}
	v := len(s.Vocab)
	if docs.V > v {
		return nil, fmt.Errorf("pctd: party %d: corpus vocabulary of %d words, larger than the federation's %d", party, docs.V, v)
	}
	if docs.NumTokens() == 0 {
		return nil, fmt.Errorf("pctd: party %d has no tokens to train on", party)
	}
	window, _ := windowOf(cfg.Units)
	us := buildUnits(docs, window, cfg.MaxDocTokens)
	l := &Learner{cfg: cfg, party: party, id: s.Parties[party], vocab: s.Vocab, seed: s.Seed, em: newEM(us, cfg.Topics, v)}
	l.em.alpha = cfg.ThetaPrior
	if !cfg.NoNoise {
		if cfg.SecureNoise {
			l.noise = privacy.NewSecureSource()
		} else {
			l.noise = privacy.NewSeededSource(s.Seed)
		}
	}
	return l, nil
}

// Plan implements fed.Planner: every round releases M_t, one Gaussian
// mechanism at the configured unit with the round's noise (nothing with
// NoNoise).
func (l *Learner) Plan(round int) ([]privacy.Event, error) { return l.cfg.roundEvent(round) }

// Learn implements fed.Learner.
func (l *Learner) Learn(round int, broadcast []byte) (fed.Step, error) {
	phi, err := decodeModel(broadcast, l.cfg.Topics, len(l.vocab))
	if err != nil {
		return fed.Step{}, fmt.Errorf("pctd: round %d: broadcast: %w", round, err)
	}
	if err := l.cfg.checkClear(round); err != nil {
		return fed.Step{}, err
	}
	spent, err := l.Plan(round)
	if err != nil {
		return fed.Step{}, err
	}
	m, err := l.em.iterate(context.Background(), phi, l.noiseFor(round), l.cfg.Workers)
	if err != nil {
		return fed.Step{}, fmt.Errorf("pctd: round %d: %w", round, err)
	}
	if l.cfg.Variant == VariantSSP {
		onGrid(m) // as under secure aggregation (secure.go)
	}
	l.last, l.round = phi, round
	l.spent = append(l.spent, spent...)
	return fed.Step{Payload: encodeUpdate(m, l.cfg.Topics, len(l.vocab)), Spent: spent}, nil
}

// noiseFor returns how round draws its noise: streams labelled by the
// party's id and the round.
func (l *Learner) noiseFor(round int) noise {
	nz := noise{variant: l.cfg.Variant, path: l.cfg.NoisePath}
	if l.noise == nil {
		return nz
	}
	nz.std = l.cfg.at(round).noiseStd()
	nz.stream = func(labels ...any) *rand.Rand {
		return l.noise.Stream(append([]any{"pctd", "party", l.id, "round", round}, labels...)...)
	}
	return nz
}

// Finish implements fed.Finisher: it keeps the final topics.
func (l *Learner) Finish(final []byte) error {
	phi, err := decodeModel(final, l.cfg.Topics, len(l.vocab))
	if err != nil {
		return fmt.Errorf("pctd: final broadcast: %w", err)
	}
	l.final = phi
	return nil
}

// Model implements fed.Modeler: PC-TD has one global model, which every
// party holds — the final topics after the run, the latest received
// before — with this party's privacy spend.
func (l *Learner) Model() (*topic.Model, error) {
	phi := l.final
	if phi == nil {
		phi = l.last
	}
	if phi == nil {
		return nil, errors.New("pctd: no model yet: no round has been learned")
	}
	m := newModel(l.cfg, phi, l.vocab, l.seed, l.round)
	if spend, ok := spendOf(l.id, l.spent, l.cfg.Delta); ok {
		m.Prov.Privacy = []topic.PrivacySpend{spend}
	}
	return m, nil
}

// Theta returns the party's document-topic distributions θ_d (D×K,
// row-major) after its latest round; they never leave the party.
func (l *Learner) Theta() []float64 { return append([]float64(nil), l.em.theta...) }

// Memory describes what a Learner holds.
type Memory struct {
	Tokens, Units, Docs int
	// UnitBytes is the sparse count table (12 bytes per distinct word of
	// a unit, 8 per unit offset), ThetaBytes θ (8·D·K) and IterBytes the
	// per-iteration working set (shard sums, log φ and the noise matrix:
	// about 8·(numShards+3)·V·K).
	UnitBytes, ThetaBytes, IterBytes int64
}

// Memory reports the Learner's memory.
func (l *Learner) Memory() Memory {
	us := l.em.us
	k, v := int64(l.cfg.Topics), int64(len(l.vocab))
	return Memory{Tokens: us.tokens, Units: us.numUnits(), Docs: us.numDocs(),
		UnitBytes:  12*int64(len(us.w)) + 8*int64(len(us.start)+len(us.docUnit)),
		ThetaBytes: 8 * int64(len(l.em.theta)), IterBytes: 8 * (numShards + 3) * v * k}
}

// learnerMagic starts a Learner's binary state.
const learnerMagic = "pctd-learner/1\x00"

// MarshalBinary implements encoding.BinaryMarshaler so that a restarted
// party resumes with its θ_d, its round and its noise source (whose key
// regenerates the noise already released; keep it with the raw data).
func (l *Learner) MarshalBinary() ([]byte, error) {
	b := append([]byte(nil), learnerMagic...)
	b = binary.LittleEndian.AppendUint64(b, uint64(l.round))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(l.em.theta)))
	for _, x := range l.em.theta {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	var src []byte
	if l.noise != nil {
		var err error
		if src, err = l.noise.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(src)))
	return append(b, src...), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (l *Learner) UnmarshalBinary(b []byte) error {
	bad := fmt.Errorf("%w: learner state does not match this party's documents and configuration", errCodec)
	if len(b) < len(learnerMagic)+16 || string(b[:len(learnerMagic)]) != learnerMagic {
		return bad
	}
	b = b[len(learnerMagic):]
	round, n := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	b = b[16:]
	if n != uint64(len(l.em.theta)) || uint64(len(b)) < 8*n+8 {
		return bad
	}
	theta := make([]float64, n)
	for i := range theta {
		theta[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if math.IsNaN(theta[i]) || theta[i] < 0 || theta[i] > 1 {
			return bad
		}
	}
	b = b[8*n:]
	ns := binary.LittleEndian.Uint64(b)
	b = b[8:]
	if ns != uint64(len(b)) || (ns == 0) != (l.noise == nil) {
		return bad
	}
	if l.noise != nil {
		if err := l.noise.UnmarshalBinary(b); err != nil {
			return err
		}
	}
	l.round, l.em.theta = int(round), theta
	return nil
}
