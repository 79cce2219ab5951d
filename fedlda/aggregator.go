package fedlda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// Aggregator is FedLDA's collector: it holds the topic-word counts n_kw,
// applies every tuple it receives (−1 on (k_old, w), clipped at 0, and +1
// on (k_new, w)), and broadcasts the counts, from which every party
// computes φ_k ∝ n_k· + β.
type Aggregator struct {
	cfg     Config
	k, v    int
	vocab   []string
	parties []string
	seed    uint64
	n       []uint32 // topic-major: n_kw = n[k*V+w]
	users   []int    // users of each party, from its first update; 0 before
	rounds  int
	spent   [][]privacy.Event
}

// NewAggregator returns the collector for s.
func NewAggregator(s fed.Setup) (*Aggregator, error) {
	cfg, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	return &Aggregator{cfg: cfg, k: cfg.K, v: len(s.Vocab), vocab: s.Vocab, parties: s.Parties, seed: s.Seed,
		n: make([]uint32, cfg.K*len(s.Vocab)), users: make([]int, len(s.Parties)), spent: make([][]privacy.Event, len(s.Parties))}, nil
}

// setupConfig parses and checks the parameters of s and returns them with
// defaults.
func setupConfig(s fed.Setup) (Config, error) {
	cfg, err := ParseConfig(s.Params)
	if err != nil {
		return Config{}, err
	}
	if len(s.Parties) == 0 {
		return Config{}, errors.New("fedlda: setup has no parties")
	}
	if len(s.Vocab) < 2 {
		return Config{}, fmt.Errorf("fedlda: setup has a vocabulary of %d words, want at least 2", len(s.Vocab))
	}
	return cfg.withDefaults(), nil
}

func (a *Aggregator) shape() tupleShape {
	return tupleShape{k: a.k, v: a.v, l: a.cfg.Tuples(), maxUsers: a.cfg.MaxUsers}
}

// Init implements fed.Aggregator: the first broadcast is all-zero counts
// (φ uniform).
func (a *Aggregator) Init() (fed.Step, error) {
	return fed.Step{Payload: encodeCounts(a.k, a.v, a.n)}, nil
}

// Aggregate implements fed.Aggregator: it applies the parties' tuples in
// party order and broadcasts the new counts; after the last round the
// broadcast is the final model's counts.
func (a *Aggregator) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	for _, u := range updates {
		if u.Party < 0 || u.Party >= len(a.users) {
			return fed.Step{}, fmt.Errorf("fedlda: round %d: update from unknown party %d", round, u.Party)
		}
		users, body, err := decodeTuples(u.Payload, a.shape())
		if err != nil {
			return fed.Step{}, fmt.Errorf("fedlda: round %d: party %s: %w", round, u.ID, err)
		}
		if a.users[u.Party] != 0 && a.users[u.Party] != users {
			return fed.Step{}, fmt.Errorf("fedlda: round %d: party %s sent tuples of %d users, it had %d", round, u.ID, users, a.users[u.Party])
		}
		a.users[u.Party] = users
		a.apply(body)
		a.spent[u.Party] = append(a.spent[u.Party], u.Spent...)
	}
	a.rounds = round
	return fed.Step{Payload: encodeCounts(a.k, a.v, a.n), Done: round >= a.cfg.Rounds}, nil
}

// apply adds the checked tuples of body to the counts: −1 at (k_old, w)
// and +1 at (k_new, w). A −1 that finds no count at (k_old, w) is clipped
// at 0 and the +1 applied, or with CollectorDrop the tuple is dropped
// whole: no user's assignment can be there, so its word was perturbed, and
// its +1 would only add noise. Without perturbation every −1 finds its
// count. Either is post-processing of what the collector received, free
// in privacy.
func (a *Aggregator) apply(body []byte) {
	n, v := a.n, a.v
	drop := a.cfg.Collector == CollectorDrop
	for i := 0; i+tupleSize <= len(body); i += tupleSize {
		t := getTuple(body[i:])
		if t.kNew == noTopic {
			continue
		}
		w := int(t.w)
		if t.kOld != noTopic {
			switch j := int(t.kOld)*v + w; {
			case n[j] > 0:
				n[j]--
			case drop:
				continue
			}
		}
		if j := int(t.kNew)*v + w; n[j] < math.MaxUint32 {
			n[j]++
		}
	}
}

// Counts returns a copy of the collector's counts, topic-major (K×V).
func (a *Aggregator) Counts() []uint32 { return append([]uint32(nil), a.n...) }

// Model implements fed.Modeler: φ_kw = (n_kw + β)/(n_k + Vβ), with α, β,
// the vocabulary and provenance, including the ε per document each party
// declared.
func (a *Aggregator) Model() (*topic.Model, error) {
	m := countsModel(a.n, a.cfg, a.v)
	m.Vocab = a.vocab
	m.Prov.Seed = a.seed
	m.Prov.Rounds = a.rounds
	for p, evs := range a.spent {
		var eps, delta float64
		for _, e := range evs {
			eps += e.Epsilon * float64(max(e.Count, 1))
			delta += e.Delta * float64(max(e.Count, 1))
		}
		if len(evs) > 0 {
			m.Prov.Privacy = append(m.Prov.Privacy, topic.PrivacySpend{Party: a.parties[p], Epsilon: eps, Delta: delta, Unit: evs[0].Unit})
		}
	}
	return m, nil
}

// countsModel turns topic-major counts into a topic model.
func countsModel(n []uint32, cfg Config, v int) *topic.Model {
	k := cfg.K
	phi := make([]float64, k*v)
	vb := float64(v) * cfg.Beta
	for t := range k {
		row := n[t*v : (t+1)*v]
		var nk float64
		for _, x := range row {
			nk += float64(x)
		}
		inv := 1 / (nk + vb)
		for w, x := range row {
			phi[t*v+w] = (float64(x) + cfg.Beta) * inv
		}
	}
	alpha := make([]float64, k)
	for t := range alpha {
		alpha[t] = cfg.Alpha
	}
	return &topic.Model{Phi: phi, K: k, V: v, Alpha: alpha, Beta: cfg.Beta,
		Prov: topic.Provenance{Method: Name, Params: cfg.provenance(), Iterations: 1}}
}

// MarshalBinary implements encoding.BinaryMarshaler for the coordinator's
// checkpoints: the rounds done, each party's number of users and the
// counts.
func (a *Aggregator) MarshalBinary() ([]byte, error) {
	b := binary.LittleEndian.AppendUint64(nil, uint64(a.rounds))
	for _, u := range a.users {
		b = binary.LittleEndian.AppendUint64(b, uint64(u))
	}
	return append(b, encodeCounts(a.k, a.v, a.n)...), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (a *Aggregator) UnmarshalBinary(b []byte) error {
	if len(b) < 8*(1+len(a.users)) {
		return fmt.Errorf("%w: checkpoint truncated", errCodec)
	}
	rounds := binary.LittleEndian.Uint64(b)
	if rounds > math.MaxInt32 {
		return fmt.Errorf("%w: checkpoint: round %d", errCodec, rounds)
	}
	users := make([]int, len(a.users))
	for p := range users {
		u := binary.LittleEndian.Uint64(b[8*(1+p):])
		if u > uint64(a.cfg.MaxUsers) {
			return fmt.Errorf("%w: checkpoint: party %d has %d users", errCodec, p, u)
		}
		users[p] = int(u)
	}
	n := make([]uint32, len(a.n))
	if err := decodeCounts(b[8*(1+len(users)):], a.k, a.v, n); err != nil {
		return fmt.Errorf("fedlda: checkpoint: %w", err)
	}
	a.rounds, a.users, a.n = int(rounds), users, n
	return nil
}
