package ftm

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// Learner is FTM's party half. On its first round it privatizes every token
// (or sentence) once with the thresholded Laplace mechanism and reports
// that release in the round's Spent events; every round it trains its
// local model by private MH on the privatized vectors — from random topics
// in the first round, from the composed local model the coordinator sent
// in later rounds — and sends the topic-normalized local model M̂_p with
// its document count n_p.
type Learner struct {
	cfg   Config
	party int
	id    string
	ks    []int // K_p of every party
	k     int
	alpha float64
	vocab []string
	seed  uint64
	docs  *corpus.Corpus // the party's documents, clipped to MaxDocTokens
	mech  *privacy.ThresholdedLaplace
	noise *privacy.Source
	st    *store
	ch    *chain
	local []float64 // M̂_p of the latest round
	final *modelMsg // M* from the final broadcast
	round int       // latest round learned
	spent []privacy.Event
	// charged is set once a step carrying the privatization's event has
	// been returned; until then every step carries it, so a release is
	// never made without its charge (a failed first round privatizes but
	// charges nothing, and the next round must charge).
	charged bool
}

// NewLearner returns party's half for its documents docs, whose word ids
// index s.Vocab.
func NewLearner(s fed.Setup, party int, docs *corpus.Corpus) (*Learner, error) {
	cfg, ks, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	if party < 0 || party >= len(ks) {
		return nil, fmt.Errorf("ftm: party %d outside [0, %d)", party, len(ks))
	}
	if docs == nil {
		return nil, errors.New("ftm: nil corpus")
	}
	if err := docs.Validate(); err != nil {
		return nil, fmt.Errorf("ftm: party %d: %w", party, err)
	}
	v := len(s.Vocab)
	if docs.V > v {
		return nil, fmt.Errorf("ftm: party %d: corpus vocabulary of %d words, larger than the federation's %d", party, docs.V, v)
	}
	sentences := cfg.Model == ModelSLDA
	if sentences && !docs.HasUnits() {
		return nil, fmt.Errorf("ftm: party %d: SentenceLDA needs sentence boundaries in the corpus", party)
	}
	if docs.NumDocs() == 0 || docs.NumTokens() == 0 {
		return nil, fmt.Errorf("ftm: party %d has no tokens to train on", party)
	}
	c := clipCorpus(docs, cfg.MaxDocTokens, sentences)
	if c == docs {
		cp := *docs
		c = &cp
	}
	c.V = v
	l := &Learner{cfg: cfg, party: party, id: s.Parties[party], ks: ks, k: ks[party], alpha: cfg.alphaFor(ks[party]),
		vocab: s.Vocab, seed: s.Seed, docs: c}
	if !cfg.NoNoise {
		if l.mech, err = newMechanism(cfg.Epsilon, cfg.tauFor(v), v); err != nil {
			return nil, err
		}
		if cfg.SecureNoise {
			l.noise = privacy.NewSecureSource()
		} else {
			l.noise = privacy.NewSeededSource(s.Seed)
		}
	}
	return l, nil
}

// Plan implements fed.Planner: the round that privatizes releases the
// thresholded Laplace vectors of every word occurrence once (ε per word
// occurrence, parallel composition over the tokens); later rounds only
// post-process them and release nothing new.
func (l *Learner) Plan(round int) ([]privacy.Event, error) {
	if l.charged || l.mech == nil {
		return nil, nil
	}
	return l.cfg.Events()
}

// Learn implements fed.Learner.
func (l *Learner) Learn(round int, broadcast []byte) (fed.Step, error) {
	ctx := context.Background()
	kind, err := messageKind(broadcast)
	if err != nil {
		return fed.Step{}, fmt.Errorf("ftm: round %d: broadcast: %w", round, err)
	}
	var composed *modelMsg
	switch kind {
	case kindStart:
	case kindModel:
		m, err := decodeModel(broadcast, len(l.vocab), l.k)
		if err != nil {
			return fed.Step{}, fmt.Errorf("ftm: round %d: broadcast: %w", round, err)
		}
		if m.k != l.k {
			return fed.Step{}, fmt.Errorf("ftm: round %d: composed model has %d topics, want %d", round, m.k, l.k)
		}
		composed = &m
	default:
		return fed.Step{}, fmt.Errorf("ftm: round %d: broadcast of kind %d, want a start or a model", round, kind)
	}
	spent, err := l.Plan(round)
	if err != nil {
		return fed.Step{}, err
	}
	if l.st == nil {
		if err := l.privatize(ctx); err != nil {
			return fed.Step{}, fmt.Errorf("ftm: round %d: %w", round, err)
		}
	}
	if err := l.train(ctx, round, composed); err != nil {
		return fed.Step{}, fmt.Errorf("ftm: round %d: %w", round, err)
	}
	l.spent = append(l.spent, spent...)
	l.charged = l.charged || len(spent) > 0
	l.round = round
	l.local = l.ch.rows()
	payload := encodeUpdate(updateMsg{docs: int64(l.docs.NumDocs()), k: l.k, v: len(l.vocab), rows: l.local})
	return fed.Step{Payload: payload, Spent: spent}, nil
}

// privatize draws every item's privatized vector and builds the chain.
func (l *Learner) privatize(ctx context.Context) error {
	pc := privatizeConfig{noNoise: l.cfg.NoNoise, mech: l.mech, sentences: l.cfg.Model == ModelSLDA,
		blockSize: l.cfg.BlockSize, noiseMemory: l.cfg.NoiseMemory, workers: l.cfg.Workers}
	var idx privacy.Indexed
	if l.noise != nil {
		idx = l.noise.Indexed("ftm", "party", l.party, "privatize")
	}
	st, err := newStore(ctx, l.docs, pc, idx)
	if err != nil {
		return err
	}
	var mass float64
	if l.cfg.Debias != "" && l.mech != nil {
		mass = noiseMass(l.mech)
	}
	l.st = st
	l.ch = newChain(st, l.k, l.alpha, l.cfg.Beta, l.cfg.MHSteps, l.cfg.Workers, l.seed, []any{"ftm", "party", l.party}, mass)
	l.ch.debiasDraw = l.cfg.Debias == DebiasDraw
	return nil
}

// train runs one round of local iterations: from random topics when
// composed is nil, else from the composed model (used as Φ of the first
// sweep, whose word proposal alone re-initializes the topics).
func (l *Learner) train(ctx context.Context, round int, composed *modelMsg) error {
	ch := l.ch
	first := 1
	if composed == nil {
		if err := ch.initUniform(ctx, round); err != nil {
			return err
		}
	} else {
		rows := composed.rows
		if l.cfg.Debias == DebiasOutput {
			rows = ch.rebias(rows)
		}
		if err := ch.phi.set(ctx, l.cfg.Workers, rows); err != nil {
			return err
		}
		if err := ch.reinit(ctx, round); err != nil {
			return err
		}
		if err := ch.sweep(ctx, round, 1, sampleFull); err != nil {
			return err
		}
		first = 2
	}
	for it := first; it <= l.cfg.LocalIterations; it++ {
		if err := ch.drawPhi(ctx, round, it); err != nil {
			return err
		}
		if err := ch.sweep(ctx, round, it, sampleDelta); err != nil {
			return err
		}
	}
	return nil
}

// Finish implements fed.Finisher: it keeps the final global model M*.
func (l *Learner) Finish(final []byte) error {
	m, err := decodeModel(final, len(l.vocab), maxGlobal(l.cfg, l.ks))
	if err != nil {
		return fmt.Errorf("ftm: final broadcast: %w", err)
	}
	l.final = &m
	return nil
}

// Model implements fed.Modeler: the party's latest local model M̂_p (the
// topic-normalized counts of its last sweep), with α, β, the vocabulary
// and provenance, including this party's privacy spend.
func (l *Learner) Model() (*topic.Model, error) {
	if l.local == nil {
		return nil, errors.New("ftm: no local model yet: no round has been learned")
	}
	return l.model(l.local, l.k), nil
}

// Final returns the global model M* of the final broadcast, or an error
// before the run has finished.
func (l *Learner) Final() (*topic.Model, error) {
	if l.final == nil {
		return nil, errors.New("ftm: no final model: the run has not finished")
	}
	return l.model(l.final.rows, l.final.k), nil
}

func (l *Learner) model(rows []float64, k int) *topic.Model {
	m := &topic.Model{Phi: append([]float64(nil), rows...), K: k, V: len(l.vocab), Vocab: l.vocab,
		Alpha: make([]float64, k), Beta: l.cfg.Beta,
		Prov: topic.Provenance{Method: "ftm", Params: l.cfg.params(), Seed: l.seed,
			Iterations: l.cfg.LocalIterations, Rounds: l.round}}
	for t := range m.Alpha {
		m.Alpha[t] = l.cfg.alphaFor(k)
	}
	var eps float64
	for _, e := range l.spent {
		eps += e.Epsilon * float64(max(e.Count, 1))
	}
	if len(l.spent) > 0 {
		m.Prov.Privacy = []topic.PrivacySpend{{Party: l.id, Epsilon: eps, Unit: l.spent[0].Unit}}
	}
	return m
}

// Memory describes what a Learner holds for its items.
type Memory struct {
	Items   int   // tokens, or sentences for SentenceLDA
	Tokens  int   // word occurrences
	Entries int64 // non-zero entries of all privatized vectors
	// NoiseBytes is the compact encoding kept for the items within
	// Config.NoiseMemory; the others are regenerated on every visit.
	NoiseBytes int64
	// StateBytes is everything else kept per item beyond the corpus: the
	// topic assignments (2 bytes each) and the proposal words (4 bytes
	// each).
	StateBytes int64
	// StoredItems is the number of items whose vectors are kept encoded.
	StoredItems int
}

// Memory reports the Learner's per-item memory; it is zero before the
// first round.
func (l *Learner) Memory() Memory {
	if l.st == nil {
		return Memory{}
	}
	st := l.st
	stored := st.docStart[st.blocks[st.stored]]
	return Memory{
		Items: st.numItems(), Tokens: l.docs.NumTokens(), Entries: st.entries,
		NoiseBytes: st.encoded(), StoredItems: stored,
		StateBytes: 2*int64(len(l.ch.z)) + 4*int64(len(st.prop)+len(st.propStart)),
	}
}
