package pctd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/topic"
)

// Aggregator is PC-TD's coordinator half (the paper's server). Init draws
// the first topics p(w|z) from the run's seed; each round it sums the
// parties' M_t, clips negative entries, adds Config.Beta, normalizes each
// topic (Eq. 11), applies the word-relation step (Eq. 13) when
// Config.Embeddings is set, and broadcasts the result. After Config.Rounds
// rounds the broadcast is the final model.
type Aggregator struct {
	cfg     Config
	k, v    int
	parties []string
	vocab   []string
	seed    uint64
	rel     *Relation
	phi     []float64 // K×V, the latest topics
	rounds  int
	spent   [][]privacy.Event
	// avg and avgW are the weighted sum of the summed M of the rounds
	// averaged so far (Config.AverageLast) and the sum of their weights.
	avg  []float64
	avgW float64
}

// setupConfig parses and checks the parameters of s and returns the
// configuration with its defaults.
func setupConfig(s fed.Setup) (Config, error) {
	cfg, err := ParseConfig(s.Params)
	if err != nil {
		return Config{}, err
	}
	if len(s.Parties) == 0 {
		return Config{}, errors.New("pctd: setup has no parties")
	}
	if len(s.Vocab) == 0 {
		return Config{}, errors.New("pctd: setup has an empty vocabulary")
	}
	cfg = cfg.withDefaults()
	if _, err := cfg.roundEvent(1); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// NewAggregator returns the coordinator half for s. With
// Config.Embeddings it reads the embedding file and builds R here, once.
func NewAggregator(s fed.Setup) (*Aggregator, error) {
	cfg, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	a := &Aggregator{cfg: cfg, k: cfg.Topics, v: len(s.Vocab), parties: s.Parties, vocab: s.Vocab, seed: s.Seed,
		spent: make([][]privacy.Event, len(s.Parties))}
	if cfg.Embeddings != "" {
		e, err := eval.LoadEmbeddings(cfg.Embeddings, s.Vocab)
		if err != nil {
			return nil, fmt.Errorf("pctd: word relations: %w", err)
		}
		if e.Covered() == 0 {
			return nil, fmt.Errorf("pctd: word relations: %s has no vector for any of the %d vocabulary words", cfg.Embeddings, len(s.Vocab))
		}
		a.rel = NewRelation(e, a.v, cfg.RelationNeighbours, cfg.RelationCutoff, cfg.Workers)
	}
	return a, nil
}

// Relation returns the word-relation matrix, nil without embeddings.
func (a *Aggregator) Relation() *Relation { return a.rel }

// InitialTopics returns the first topics the coordinator draws for k
// topics over v words from seed: every p(w|z) proportional to ½ + U(0, 1),
// which breaks the symmetry between topics without favouring any word
// much. Train starts from the same draw.
func InitialTopics(seed uint64, k, v int) []float64 {
	r := rng.Derive(seed, "pctd", "init")
	phi := make([]float64, k*v)
	for t := range k {
		row := phi[t*v : (t+1)*v]
		var s float64
		for w := range row {
			row[w] = 0.5 + r.Float64()
			s += row[w]
		}
		for w := range row {
			row[w] /= s
		}
	}
	return phi
}

// Init implements fed.Aggregator: the first topics, drawn from the seed.
func (a *Aggregator) Init() (fed.Step, error) {
	a.phi = onWire(InitialTopics(a.seed, a.k, a.v), a.k, a.v)
	return fed.Step{Payload: encodeModel(a.phi, a.k, a.v)}, nil
}

// Aggregate implements fed.Aggregator.
func (a *Aggregator) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	sum := make([]float64, a.v*a.k)
	for _, u := range updates {
		if u.Party < 0 || u.Party >= len(a.parties) {
			return fed.Step{}, fmt.Errorf("pctd: round %d: update from unknown party %d", round, u.Party)
		}
		m, err := decodeUpdate(u.Payload, a.k, a.v)
		if err != nil {
			return fed.Step{}, fmt.Errorf("pctd: round %d: party %s: %w", round, u.ID, err)
		}
		for i, x := range m {
			sum[i] += x
		}
		a.spent[u.Party] = append(a.spent[u.Party], u.Spent...)
	}
	if len(updates) > 0 {
		a.update(round, sum, len(updates))
	}
	a.rounds = round
	step := fed.Step{Payload: encodeModel(a.phi, a.k, a.v)}
	step.Done = round >= a.cfg.Rounds
	return step, nil
}

// update makes the topics of round from the sum m of the M_t of parties
// parties (Eq. 11); in the rounds Config.AverageLast averages, m is added
// to the running average, weighted by its precision, and the last round's
// topics come from the average. It reads released sums only.
func (a *Aggregator) update(round int, m []float64, parties int) {
	if a.cfg.averaged() && round >= a.cfg.firstAveraged() {
		if a.avg == nil {
			a.avg = make([]float64, len(m))
		}
		w := weight(a.cfg.sumNoiseStd(round, parties))
		for i, x := range m {
			a.avg[i] += w * x
		}
		a.avgW += w
		if round >= a.cfg.Rounds {
			m = make([]float64, len(a.avg))
			for i, x := range a.avg {
				m[i] = x / a.avgW
			}
		}
	}
	a.phi = onWire(mStep(m, a.k, a.v, a.cfg.Beta, a.rel, a.cfg.RelationTau), a.k, a.v)
}

// onWire returns phi as the parties decode it from a broadcast (float32,
// renormalized), so that the coordinator's model is exactly theirs.
func onWire(phi []float64, k, v int) []float64 {
	out, err := decodeModel(encodeModel(phi, k, v), k, v)
	if err != nil {
		panic(fmt.Sprintf("pctd: topics do not survive their own encoding: %v", err))
	}
	return out
}

// mStep turns the summed M (V×K, word-major) into topics (K×V): negative
// entries clipped to zero, β added, each topic normalized (Eq. 11), then
// with rel the word-relation step of Eq. 13 with tradeoff tau.
func mStep(m []float64, k, v int, beta float64, rel *Relation, tau float64) []float64 {
	phi := make([]float64, k*v)
	for t := range k {
		row := phi[t*v : (t+1)*v]
		var s float64
		for w := range row {
			row[w] = max(m[w*k+t], 0) + beta
			s += row[w]
		}
		for w := range row {
			row[w] /= s
		}
		if rel != nil {
			rel.apply(row, tau)
		}
	}
	return phi
}

// Model implements fed.Modeler: the latest topics as a topic model with
// α = DefaultAlphaSum/K for inference, β, the vocabulary and provenance,
// including what each party declared it spent.
func (a *Aggregator) Model() (*topic.Model, error) {
	if a.phi == nil {
		return nil, errors.New("pctd: no model yet: the run has not started")
	}
	m := newModel(a.cfg, a.phi, a.vocab, a.seed, a.rounds)
	for p, evs := range a.spent {
		if spend, ok := spendOf(a.parties[p], evs, a.cfg.Delta); ok {
			m.Prov.Privacy = append(m.Prov.Privacy, spend)
		}
	}
	return m, nil
}

// newModel wraps topics phi (K×V) as a topic model.
func newModel(cfg Config, phi []float64, vocab []string, seed uint64, rounds int) *topic.Model {
	k, v := cfg.Topics, len(vocab)
	m := &topic.Model{Phi: append([]float64(nil), phi...), K: k, V: v, Vocab: vocab, Beta: cfg.Beta,
		Alpha: make([]float64, k),
		Prov:  topic.Provenance{Method: Name, Params: cfg.params(), Seed: seed, Iterations: 1, Rounds: rounds}}
	for t := range m.Alpha {
		m.Alpha[t] = DefaultAlphaSum / float64(k)
	}
	return m
}

// spendOf composes one party's events into its spend, at δ.
func spendOf(party string, evs []privacy.Event, delta float64) (topic.PrivacySpend, bool) {
	if len(evs) == 0 {
		return topic.PrivacySpend{}, false
	}
	c, err := accountant.Compose(evs, delta)
	if err != nil {
		return topic.PrivacySpend{}, false
	}
	return topic.PrivacySpend{Party: party, Epsilon: c.Epsilon, Delta: c.Delta, Unit: c.Unit}, true
}

// MarshalBinary implements encoding.BinaryMarshaler for the coordinator's
// checkpoints: the rounds done and the latest topics; with
// Config.AverageLast also the running average's weight and weighted sum.
func (a *Aggregator) MarshalBinary() ([]byte, error) {
	b := binary.LittleEndian.AppendUint64(nil, uint64(a.rounds))
	if a.phi == nil {
		return append(b, 0), nil
	}
	b = append(b, 1)
	for _, x := range a.phi {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	if a.cfg.averaged() {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(a.avgW))
		avg := a.avg
		if avg == nil {
			avg = make([]float64, a.k*a.v)
		}
		for _, x := range avg {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return b, nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (a *Aggregator) UnmarshalBinary(b []byte) error {
	if len(b) < 9 {
		return fmt.Errorf("%w: checkpoint truncated", errCodec)
	}
	rounds, has := int(binary.LittleEndian.Uint64(b)), b[8]
	b = b[9:]
	n := 8 * a.k * a.v
	if a.cfg.averaged() && has == 1 {
		n = 2*n + 8
	}
	switch {
	case has == 0 && len(b) == 0:
		a.rounds, a.phi, a.avg, a.avgW = rounds, nil, nil, 0
		return nil
	case has != 1 || len(b) != n:
		return fmt.Errorf("%w: checkpoint of %d bytes for %d × %d topics", errCodec, len(b), a.k, a.v)
	}
	var avg []float64
	var avgW float64
	if a.cfg.averaged() {
		tail := b[8*a.k*a.v:]
		avgW = math.Float64frombits(binary.LittleEndian.Uint64(tail))
		if math.IsNaN(avgW) || math.IsInf(avgW, 0) || avgW < 0 {
			return fmt.Errorf("%w: checkpoint's average weight is not finite and non-negative", errCodec)
		}
		avg = make([]float64, a.k*a.v)
		for i := range avg {
			avg[i] = math.Float64frombits(binary.LittleEndian.Uint64(tail[8+8*i:]))
			if math.IsNaN(avg[i]) || math.IsInf(avg[i], 0) {
				return fmt.Errorf("%w: checkpoint's average entry %d is not finite", errCodec, i)
			}
		}
		if avgW == 0 {
			avg = nil
		}
	}
	phi := make([]float64, a.k*a.v)
	for i := range phi {
		x := math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("%w: checkpoint entry %d is not finite and non-negative", errCodec, i)
		}
		phi[i] = x
	}
	a.rounds, a.phi, a.avg, a.avgW = rounds, phi, avg, avgW
	return nil
}
