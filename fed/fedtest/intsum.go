package fedtest

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
)

// IntSumName is the name of the IntSum algorithm.
const IntSumName = "fedtest-intsum"

// IntSumParams are the parameters of IntSum.
type IntSumParams struct {
	Len    int   `json:"len"`    // values per update; default 8
	Rounds int   `json:"rounds"` // rounds before the run is done; default 2
	Max    int64 `json:"max"`    // values are drawn from [−Max, Max]; default 1000
	// Sigma, if positive, asks for distributed noise of total σ (grid
	// steps) under secure aggregation, charged at sensitivity Max.
	Sigma float64 `json:"sigma"`
}

func intSumParams(s fed.Setup) (IntSumParams, error) {
	var p IntSumParams
	if len(s.Params) > 0 {
		if err := json.Unmarshal(s.Params, &p); err != nil {
			return p, fmt.Errorf("fedtest: intsum params: %w", err)
		}
	}
	if p.Len < 0 || p.Rounds < 0 || p.Max < 0 || p.Sigma < 0 {
		return p, errors.New("fedtest: intsum params: negative value")
	}
	if p.Len == 0 {
		p.Len = 8
	}
	if p.Rounds == 0 {
		p.Rounds = 2
	}
	if p.Max == 0 {
		p.Max = 1000
	}
	return p, nil
}

// IntSumVector is the update party id sends in round r of a run seeded
// with seed: Len integers in [−Max, Max], so a test can compute the exact
// plaintext sum of any set of parties.
func IntSumVector(p IntSumParams, seed uint64, id string, round int) []int64 {
	r := rng.Derive(seed, "fedtest-intsum", id, round)
	v := make([]int64, p.Len)
	for i := range v {
		v[i] = r.Int64N(2*p.Max+1) - p.Max
	}
	return v
}

// IntSum is a trivial algorithm whose update is a vector of sums, to test
// secure aggregation: each party sends IntSumVector, the coordinator adds
// them. Both halves implement the secure aggregation seam (fed.SumLearner,
// fed.SumAggregator) and the plain one.
var IntSum = fed.Algorithm{
	Name: IntSumName,
	NewAggregator: func(s fed.Setup) (fed.Aggregator, error) {
		p, err := intSumParams(s)
		if err != nil {
			return nil, err
		}
		return &IntSumAggregator{p: p, parties: s.Parties}, nil
	},
	NewLearner: func(s fed.Setup, party int, _ *corpus.Corpus) (fed.Learner, error) {
		p, err := intSumParams(s)
		if err != nil {
			return nil, err
		}
		return &IntSumLearner{p: p, seed: s.Seed, id: s.Parties[party]}, nil
	},
	NewValidator: func(s fed.Setup) (fed.Validator, error) {
		p, err := intSumParams(s)
		if err != nil {
			return nil, err
		}
		return IntSumValidator{Len: p.Len, Parties: len(s.Parties)}, nil
	},
}

// spec is IntSum's vector: integers clipped at Max plus room for noise.
func (p IntSumParams) spec() fed.SumSpec {
	return fed.SumSpec{Len: p.Len, Clip: float64(p.Max) + 20*p.Sigma + 1, Sigma: p.Sigma, Sensitivity: float64(p.Max), Unit: "party"}
}

func encodeInts(v []int64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

func decodeInts(b []byte, n int) ([]int64, error) {
	if len(b) != 8*n {
		return nil, fmt.Errorf("fedtest: intsum: %d bytes, want %d", len(b), 8*n)
	}
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}

// IntSumValidator checks IntSum updates' length.
type IntSumValidator struct{ Len, Parties int }

// CheckUpdate implements fed.Validator.
func (v IntSumValidator) CheckUpdate(_ int, payload []byte) error {
	_, err := decodeInts(payload, v.Len)
	return err
}

// MaxUpdateSize implements fed.Validator: room for secure aggregation's
// messages too.
func (v IntSumValidator) MaxUpdateSize() int {
	return max(8*v.Len, fed.SecAggMaxMessage(v.Parties, v.Len))
}

// MaxBroadcastSize implements fed.Validator.
func (v IntSumValidator) MaxBroadcastSize() int { return v.MaxUpdateSize() }

// IntSumLearner is the party half of IntSum.
type IntSumLearner struct {
	p    IntSumParams
	seed uint64
	id   string
	// Learned counts the calls of Learn and LearnSum, so tests can check
	// that a retried round reuses the cached vector.
	Learned int
}

// Learn implements fed.Learner.
func (l *IntSumLearner) Learn(round int, _ []byte) (fed.Step, error) {
	l.Learned++
	return fed.Step{Payload: encodeInts(IntSumVector(l.p, l.seed, l.id, round))}, nil
}

// SumSpec implements fed.SumLearner.
func (l *IntSumLearner) SumSpec() fed.SumSpec { return l.p.spec() }

// LearnSum implements fed.SumLearner.
func (l *IntSumLearner) LearnSum(round int, _ []byte) ([]int64, []privacy.Event, error) {
	l.Learned++
	return IntSumVector(l.p, l.seed, l.id, round), nil, nil
}

// IntSumAggregator is the coordinator half of IntSum. It records every
// sum it was given, and from which parties, for tests.
type IntSumAggregator struct {
	p       IntSumParams
	parties []string
	mu      sync.Mutex
	total   []int64
	// Sums and Included hold, per aggregated round, the sum and the
	// parties (ids) it includes; Rounds the round numbers.
	Rounds   []int
	Sums     [][]int64
	Included [][]string
}

// Init implements fed.Aggregator.
func (a *IntSumAggregator) Init() (fed.Step, error) {
	a.total = make([]int64, a.p.Len)
	return fed.Step{Payload: encodeInts(a.total)}, nil
}

// Aggregate implements fed.Aggregator.
func (a *IntSumAggregator) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	sum := make([]int64, a.p.Len)
	var inc []int
	for _, u := range updates {
		v, err := decodeInts(u.Payload, a.p.Len)
		if err != nil {
			return fed.Step{}, err
		}
		for i, x := range v {
			sum[i] += x
		}
		inc = append(inc, u.Party)
	}
	return a.AggregateSum(round, sum, inc)
}

// SumSpec implements fed.SumAggregator.
func (a *IntSumAggregator) SumSpec() fed.SumSpec { return a.p.spec() }

// AggregateSum implements fed.SumAggregator.
func (a *IntSumAggregator) AggregateSum(round int, sum []int64, included []int) (fed.Step, error) {
	if len(sum) != a.p.Len {
		return fed.Step{}, fmt.Errorf("fedtest: intsum: sum of %d values, want %d", len(sum), a.p.Len)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, len(included))
	for i, q := range included {
		ids[i] = a.parties[q]
	}
	a.Rounds = append(a.Rounds, round)
	a.Sums = append(a.Sums, slices.Clone(sum))
	a.Included = append(a.Included, ids)
	for i, x := range sum {
		a.total[i] += x
	}
	return fed.Step{Payload: encodeInts(a.total), Done: round >= a.p.Rounds}, nil
}

// MarshalBinary implements encoding.BinaryMarshaler.
func (a *IntSumAggregator) MarshalBinary() ([]byte, error) { return encodeInts(a.total), nil }

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (a *IntSumAggregator) UnmarshalBinary(b []byte) error {
	v, err := decodeInts(b, a.p.Len)
	if err != nil {
		return err
	}
	a.total = v
	return nil
}

// Total returns the running total of every aggregated sum.
func (a *IntSumAggregator) Total() []int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.total)
}
