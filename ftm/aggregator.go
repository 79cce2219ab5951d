package ftm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/topic"
)

// Aggregator is FTM's coordinator half (the papers' master). Each round it
// integrates the local models the parties sent into a global model M*
// (Integrate: top-L weighted Jaccard similarity, union-find, merges
// weighted by the parties' document counts) and composes a new local
// model for every party (Compose), sent as that party's broadcast. M* is
// built afresh from each round's local models unless Config.CarryGlobal
// is set. After the last round the broadcast is M* itself and the run is
// done.
type Aggregator struct {
	cfg     Config
	ks      []int // K_p per party
	parties []string
	vocab   []string
	seed    uint64
	last    []*updateMsg     // each party's latest local model, nil before its first
	global  []Topic          // M* of the latest round
	rounds  int              // rounds aggregated
	merges  []fed.TopicMerge // which topics M* of the latest round merged
}

// NewAggregator returns the coordinator half for s.
func NewAggregator(s fed.Setup) (*Aggregator, error) {
	cfg, ks, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	return &Aggregator{cfg: cfg, ks: ks, parties: s.Parties, vocab: s.Vocab, seed: s.Seed,
		last: make([]*updateMsg, len(ks))}, nil
}

// setupConfig parses and checks the parameters of s and returns the
// configuration with defaults and K_p per party.
func setupConfig(s fed.Setup) (Config, []int, error) {
	cfg, err := ParseConfig(s.Params)
	if err != nil {
		return Config{}, nil, err
	}
	if len(s.Parties) == 0 {
		return Config{}, nil, errors.New("ftm: setup has no parties")
	}
	if len(s.Vocab) == 0 {
		return Config{}, nil, errors.New("ftm: setup has an empty vocabulary")
	}
	ks, err := cfg.topicsFor(len(s.Parties))
	if err != nil {
		return Config{}, nil, err
	}
	return cfg.withDefaults(), ks, nil
}

// Init implements fed.Aggregator: the first broadcast tells every party to
// privatize its data and start from random topics.
func (a *Aggregator) Init() (fed.Step, error) {
	return fed.Step{Payload: encodeStart()}, nil
}

// Aggregate implements fed.Aggregator.
func (a *Aggregator) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	v := len(a.vocab)
	for _, u := range updates {
		if u.Party < 0 || u.Party >= len(a.ks) {
			return fed.Step{}, fmt.Errorf("ftm: round %d: update from unknown party %d", round, u.Party)
		}
		m, err := decodeUpdate(u.Payload, v, a.ks[u.Party])
		if err != nil {
			return fed.Step{}, fmt.Errorf("ftm: round %d: party %s: %w", round, u.ID, err)
		}
		if m.k != a.ks[u.Party] {
			return fed.Step{}, fmt.Errorf("ftm: round %d: party %s sent %d topics, want %d", round, u.ID, m.k, a.ks[u.Party])
		}
		a.last[u.Party] = &m
	}
	// The topics of this round, in party order; a party that sent nothing
	// this round contributes nothing.
	var topics []Topic
	var refs []fed.TopicRef // where each of topics came from
	if a.cfg.CarryGlobal {
		topics = append(topics, a.global...)
		for g := range a.global {
			refs = append(refs, fed.TopicRef{Party: carriedParty, Topic: g})
		}
	}
	sent := make([]bool, len(a.ks))
	for _, u := range updates {
		sent[u.Party] = true
	}
	for p, m := range a.last {
		if m == nil || !sent[p] {
			continue
		}
		for t := 0; t < m.k; t++ {
			topics = append(topics, Topic{Row: m.rows[t*v : (t+1)*v], Weight: float64(m.docs)})
			refs = append(refs, fed.TopicRef{Party: a.parties[p], Topic: t})
		}
	}
	if len(topics) > 0 {
		var members [][]int
		a.global, members = Integrate(topics, a.cfg.TopL, a.cfg.Xi)
		a.merges = mergesOf(a.global, members, topics, refs, a.cfg.TopL)
	}
	a.rounds = round
	if round >= a.cfg.Rounds {
		return fed.Step{Payload: encodeModel(globalMsg(a.global, v)), Done: true}, nil
	}
	step := fed.Step{Payload: encodeStart(), PerParty: make([][]byte, len(a.ks))}
	for p, m := range a.last {
		if m == nil || len(a.global) == 0 {
			continue // not trained yet: it starts afresh
		}
		local := make([][]float64, m.k)
		for t := range local {
			local[t] = m.rows[t*v : (t+1)*v]
		}
		rows, from := Compose(local, a.global, a.cfg.TopL, a.cfg.Xi)
		msg := modelMsg{k: m.k, v: v, weights: make([]float64, m.k), rows: make([]float64, 0, m.k*v)}
		for t, r := range rows {
			msg.rows = append(msg.rows, r...)
			msg.weights[t] = float64(m.docs)
			if from[t] >= 0 {
				msg.weights[t] = a.global[from[t]].Weight
			}
		}
		step.PerParty[p] = encodeModel(msg)
	}
	return step, nil
}

// carriedParty names, in merges, a topic of the previous round's M* that
// Config.CarryGlobal fed into this round's integration.
const carriedParty = "M* (previous round)"

// mergesOf describes which input topics each global topic merged, with each
// member's top-L similarity ρ to the merged topic.
func mergesOf(global []Topic, members [][]int, topics []Topic, refs []fed.TopicRef, l int) []fed.TopicMerge {
	out := make([]fed.TopicMerge, len(global))
	for g, ms := range members {
		top := TopL(global[g].Row, l)
		out[g] = fed.TopicMerge{Global: g, Members: make([]fed.TopicRef, len(ms))}
		for j, i := range ms {
			r := refs[i]
			r.Similarity = Similarity(TopL(topics[i].Row, l), top)
			out[g].Members[j] = r
		}
	}
	return out
}

// Merges implements fed.Merger: the merges of the latest aggregation, one
// entry per topic of M* in order. They are computed from the normalized
// local models the parties sent, so they release nothing further.
func (a *Aggregator) Merges() []fed.TopicMerge { return slices.Clone(a.merges) }

// globalMsg returns M* as a model message.
func globalMsg(g []Topic, v int) modelMsg {
	m := modelMsg{k: len(g), v: v, weights: make([]float64, len(g)), rows: make([]float64, 0, len(g)*v)}
	for t, tp := range g {
		m.weights[t] = tp.Weight
		m.rows = append(m.rows, tp.Row...)
	}
	return m
}

// Global returns the latest global model M* (nil before the first round):
// its topics and their weights, the summed document counts of the parties
// whose topics merged into each.
func (a *Aggregator) Global() []Topic { return slices.Clone(a.global) }

// Model implements fed.Modeler: M* as a topic model with α =
// DefaultAlphaSum/K* per topic (or Config.Alpha), β, the vocabulary and
// provenance, including the ε each party declared.
func (a *Aggregator) Model() (*topic.Model, error) {
	if len(a.global) == 0 {
		return nil, errors.New("ftm: no global model yet: no round has been aggregated")
	}
	v := len(a.vocab)
	m := &topic.Model{K: len(a.global), V: v, Vocab: a.vocab, Beta: a.cfg.Beta,
		Phi: make([]float64, 0, len(a.global)*v), Alpha: make([]float64, len(a.global))}
	for t, g := range a.global {
		m.Phi = append(m.Phi, g.Row...)
		m.Alpha[t] = a.cfg.alphaFor(len(a.global))
	}
	m.Prov = topic.Provenance{Method: "ftm", Params: a.cfg.params(), Seed: a.seed,
		Iterations: a.cfg.LocalIterations, Rounds: a.rounds}
	// The privacy the parties spent is not the aggregator's to state: the
	// caller fills m.Prov.Privacy from the parties' accounting, which
	// includes every release (the vocabulary round too) and survives a
	// restart.
	return m, nil
}

// MarshalBinary implements encoding.BinaryMarshaler for the coordinator's
// checkpoints: the rounds done, each party's latest local model and M*.
func (a *Aggregator) MarshalBinary() ([]byte, error) {
	v := len(a.vocab)
	b := binary.LittleEndian.AppendUint64(nil, uint64(a.rounds))
	for _, m := range a.last {
		if m == nil {
			b = binary.LittleEndian.AppendUint64(b, 0)
			continue
		}
		u := encodeUpdate(*m)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(u)))
		b = append(b, u...)
	}
	var g []byte
	if len(a.global) > 0 {
		g = encodeModel(globalMsg(a.global, v))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(g)))
	return append(b, g...), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (a *Aggregator) UnmarshalBinary(b []byte) error {
	v := len(a.vocab)
	next := func() ([]byte, error) {
		if len(b) < 8 {
			return nil, fmt.Errorf("%w: checkpoint truncated", errCodec)
		}
		n := binary.LittleEndian.Uint64(b)
		b = b[8:]
		if n > uint64(len(b)) {
			return nil, fmt.Errorf("%w: checkpoint truncated", errCodec)
		}
		x := b[:n]
		b = b[n:]
		return x, nil
	}
	if len(b) < 8 {
		return fmt.Errorf("%w: checkpoint truncated", errCodec)
	}
	rounds := int(binary.LittleEndian.Uint64(b))
	b = b[8:]
	last := make([]*updateMsg, len(a.ks))
	for p := range last {
		x, err := next()
		if err != nil {
			return err
		}
		if len(x) == 0 {
			continue
		}
		m, err := decodeUpdate(x, v, a.ks[p])
		if err != nil {
			return fmt.Errorf("ftm: checkpoint: party %d: %w", p, err)
		}
		last[p] = &m
	}
	x, err := next()
	if err != nil {
		return err
	}
	var global []Topic
	if len(x) > 0 {
		g, err := decodeModel(x, v, maxGlobal(a.cfg, a.ks))
		if err != nil {
			return fmt.Errorf("ftm: checkpoint: global model: %w", err)
		}
		for t := 0; t < g.k; t++ {
			global = append(global, Topic{Row: g.rows[t*v : (t+1)*v], Weight: g.weights[t]})
		}
	}
	if len(b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes in checkpoint", errCodec, len(b))
	}
	a.rounds, a.last, a.global = rounds, last, global
	return nil
}

// maxGlobal returns the largest number of topics M* can have: every local
// topic unmerged, and with CarryGlobal every round's.
func maxGlobal(cfg Config, ks []int) int {
	n := 0
	for _, k := range ks {
		n += k
	}
	if cfg.CarryGlobal {
		n *= cfg.Rounds
	}
	return n
}
