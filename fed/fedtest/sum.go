package fedtest

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// SumName is the name of the Sum algorithm.
const SumName = "fedtest-sum"

// SumParams are the parameters of the Sum algorithm. The zero value of each
// field means the default in its comment.
type SumParams struct {
	Rows    int     `json:"rows"`    // rows of the summed matrix; default 2
	Rounds  int     `json:"rounds"`  // rounds before the run is done; default 3
	Epsilon float64 `json:"epsilon"` // ε of the Laplace noise per release; 0 = no noise, no privacy events
}

func (p SumParams) withDefaults() SumParams {
	if p.Rows == 0 {
		p.Rows = 2
	}
	if p.Rounds == 0 {
		p.Rounds = 3
	}
	return p
}

// Validate reports every problem with p.
func (p SumParams) Validate() error {
	var errs []error
	if p.Rows < 0 {
		errs = append(errs, fmt.Errorf("fedtest: rows = %d < 0", p.Rows))
	}
	if p.Rounds < 0 {
		errs = append(errs, fmt.Errorf("fedtest: rounds = %d < 0", p.Rounds))
	}
	if math.IsNaN(p.Epsilon) || math.IsInf(p.Epsilon, 0) || p.Epsilon < 0 {
		errs = append(errs, fmt.Errorf("fedtest: epsilon = %v, want finite ≥ 0", p.Epsilon))
	}
	return errors.Join(errs...)
}

func sumParams(s fed.Setup) (SumParams, error) {
	var p SumParams
	if len(s.Params) > 0 {
		if err := json.Unmarshal(s.Params, &p); err != nil {
			return p, fmt.Errorf("fedtest: params: %w", err)
		}
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	if len(s.Vocab) == 0 {
		return p, errors.New("fedtest: empty vocabulary")
	}
	return p.withDefaults(), nil
}

// Sum is a trivial algorithm that exercises the engine without a topic
// model. Party p holds a Rows × V count matrix (row k counts the words of its
// documents d with d mod Rows = k); each round it sends that matrix plus
// Laplace(1/ε) noise clipped at 0, drawn from one stream that runs through
// the whole run (so a redrawn release would differ). The coordinator keeps
// M ← M/2 + Σ updates and broadcasts M; after Rounds rounds the row-normalised
// M is the model.
var Sum = fed.Algorithm{
	Name: SumName,
	NewAggregator: func(s fed.Setup) (fed.Aggregator, error) {
		p, err := sumParams(s)
		if err != nil {
			return nil, err
		}
		return &SumAggregator{rows: p.Rows, cols: len(s.Vocab), rounds: p.Rounds, vocab: s.Vocab, m: make([]float64, p.Rows*len(s.Vocab))}, nil
	},
	NewLearner: func(s fed.Setup, party int, docs *corpus.Corpus) (fed.Learner, error) {
		p, err := sumParams(s)
		if err != nil {
			return nil, err
		}
		if docs.V > len(s.Vocab) {
			return nil, fmt.Errorf("fedtest: corpus vocabulary %d > %d", docs.V, len(s.Vocab))
		}
		v := len(s.Vocab)
		data := make([]float64, p.Rows*v)
		for d := range docs.NumDocs() {
			for _, w := range docs.Doc(d) {
				data[(d%p.Rows)*v+int(w)]++
			}
		}
		key := rng.Key(s.Seed, "fedtest", "party", party, "noise")
		return &SumLearner{rows: p.Rows, cols: v, eps: p.Epsilon, data: data, src: rand.NewChaCha8(key)}, nil
	},
	NewValidator: func(s fed.Setup) (fed.Validator, error) {
		p, err := sumParams(s)
		if err != nil {
			return nil, err
		}
		return SumValidator{Rows: p.Rows, Cols: len(s.Vocab)}, nil
	},
}

// EncodeMatrix encodes a rows × cols matrix: two uint32 (rows, cols) then
// rows·cols float64, all little-endian.
func EncodeMatrix(rows, cols int, m []float64) []byte {
	b := make([]byte, 0, 8+8*len(m))
	b = binary.LittleEndian.AppendUint32(b, uint32(rows))
	b = binary.LittleEndian.AppendUint32(b, uint32(cols))
	for _, x := range m {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// DecodeMatrix decodes what EncodeMatrix wrote, checking the shape against
// rows × cols and that every value is finite and non-negative. Errors name
// positions, never values.
func DecodeMatrix(b []byte, rows, cols int) ([]float64, error) {
	if len(b) < 8 {
		return nil, fmt.Errorf("fedtest: matrix of %d bytes has no header", len(b))
	}
	r, c := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	if r != rows || c != cols {
		return nil, fmt.Errorf("fedtest: matrix is %d × %d, want %d × %d", r, c, rows, cols)
	}
	if want := 8 + 8*rows*cols; len(b) != want {
		return nil, fmt.Errorf("fedtest: %d × %d matrix in %d bytes, want %d (ragged)", rows, cols, len(b), want)
	}
	m := make([]float64, rows*cols)
	for i := range m {
		x := math.Float64frombits(binary.LittleEndian.Uint64(b[8+8*i:]))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("fedtest: non-finite value at (%d, %d)", i/cols, i%cols)
		}
		if x < 0 {
			return nil, fmt.Errorf("fedtest: negative value at (%d, %d)", i/cols, i%cols)
		}
		m[i] = x
	}
	return m, nil
}

// SumValidator checks Sum updates: shape, finite, non-negative.
type SumValidator struct{ Rows, Cols int }

// CheckUpdate implements fed.Validator.
func (v SumValidator) CheckUpdate(round int, payload []byte) error {
	_, err := DecodeMatrix(payload, v.Rows, v.Cols)
	return err
}

// MaxUpdateSize implements fed.Validator.
func (v SumValidator) MaxUpdateSize() int { return 8 + 8*v.Rows*v.Cols }

// MaxBroadcastSize implements fed.Validator.
func (v SumValidator) MaxBroadcastSize() int { return 8 + 8*v.Rows*v.Cols }

// SumLearner is the party half of Sum.
type SumLearner struct {
	rows, cols int
	eps        float64
	data       []float64
	src        *rand.ChaCha8
	// Learned counts the calls of Learn in this process, so tests can tell
	// a resent update from a recomputed one.
	Learned int
}

// Plan implements fed.Planner.
func (l *SumLearner) Plan(round int) ([]privacy.Event, error) { return l.events(), nil }

func (l *SumLearner) events() []privacy.Event {
	if l.eps == 0 {
		return nil
	}
	return []privacy.Event{{Mechanism: "laplace", Epsilon: l.eps, Sensitivity: 1, Unit: "word occurrence", Count: 1}}
}

// Learn implements fed.Learner.
func (l *SumLearner) Learn(round int, broadcast []byte) (fed.Step, error) {
	if _, err := DecodeMatrix(broadcast, l.rows, l.cols); err != nil {
		return fed.Step{}, fmt.Errorf("fedtest: round %d: broadcast: %w", round, err)
	}
	l.Learned++
	r := rand.New(l.src)
	u := make([]float64, len(l.data))
	for i, x := range l.data {
		if l.eps > 0 {
			// Laplace(1/ε) by inversion: b·sign(U)·ln(1−2|U|), U ~ U(−½, ½).
			v := r.Float64() - 0.5
			x -= math.Copysign(math.Log1p(-2*math.Abs(v)), v) / l.eps
		}
		u[i] = max(x, 0)
	}
	return fed.Step{Payload: EncodeMatrix(l.rows, l.cols, u), Spent: l.events()}, nil
}

// MarshalBinary implements encoding.BinaryMarshaler: the noise stream's state.
func (l *SumLearner) MarshalBinary() ([]byte, error) { return l.src.MarshalBinary() }

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (l *SumLearner) UnmarshalBinary(b []byte) error { return l.src.UnmarshalBinary(b) }

// SumAggregator is the coordinator half of Sum.
type SumAggregator struct {
	rows, cols, rounds int
	vocab              []string
	m                  []float64
	// Aggregated lists the rounds Aggregate was called for, in order, and
	// Inputs the ids of the parties whose updates each call received, so
	// tests can check that an aborted round drew nothing and which replies a
	// round used.
	Aggregated []int
	Inputs     [][]string
}

// Init implements fed.Aggregator.
func (a *SumAggregator) Init() (fed.Step, error) {
	return fed.Step{Payload: EncodeMatrix(a.rows, a.cols, a.m), Done: a.rounds == 0}, nil
}

// Aggregate implements fed.Aggregator.
func (a *SumAggregator) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	a.Aggregated = append(a.Aggregated, round)
	ids := make([]string, len(updates))
	for i, u := range updates {
		ids[i] = u.ID
	}
	a.Inputs = append(a.Inputs, ids)
	for i := range a.m {
		a.m[i] /= 2
	}
	for _, u := range updates {
		x, err := DecodeMatrix(u.Payload, a.rows, a.cols)
		if err != nil {
			return fed.Step{}, fmt.Errorf("fedtest: round %d: party %s: %w", round, u.ID, err)
		}
		for i, v := range x {
			a.m[i] += v
		}
	}
	return fed.Step{Payload: EncodeMatrix(a.rows, a.cols, a.m), Done: round >= a.rounds}, nil
}

// MarshalBinary implements encoding.BinaryMarshaler.
func (a *SumAggregator) MarshalBinary() ([]byte, error) {
	return EncodeMatrix(a.rows, a.cols, a.m), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (a *SumAggregator) UnmarshalBinary(b []byte) error {
	m, err := DecodeMatrix(b, a.rows, a.cols)
	if err != nil {
		return err
	}
	a.m = m
	return nil
}

// Model implements fed.Modeler: the row-normalised M (uniform rows where M
// is empty).
func (a *SumAggregator) Model() (*topic.Model, error) {
	phi := make([]float64, len(a.m))
	for k := range a.rows {
		row := a.m[k*a.cols : (k+1)*a.cols]
		var s float64
		for _, x := range row {
			s += x
		}
		for w, x := range row {
			if s > 0 {
				phi[k*a.cols+w] = x / s
			} else {
				phi[k*a.cols+w] = 1 / float64(a.cols)
			}
		}
	}
	alpha := make([]float64, a.rows)
	for k := range alpha {
		alpha[k] = 1
	}
	return &topic.Model{Phi: phi, K: a.rows, V: a.cols, Vocab: a.vocab, Alpha: alpha, Beta: 0.01,
		Prov: topic.Provenance{Method: SumName, Rounds: a.rounds}}, nil
}
