package ftm

import (
	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
)

// Name is the algorithm's name in configurations and run records.
const Name = "ftm"

// Algorithm is FTM (and, with Config.Model = ModelSLDA, iFTM) for the
// federation engine: its halves and update checks built from a fed.Setup
// whose Params hold a Config in JSON.
var Algorithm = fed.Algorithm{
	Name: Name,
	NewAggregator: func(s fed.Setup) (fed.Aggregator, error) {
		return NewAggregator(s)
	},
	NewLearner: func(s fed.Setup, party int, docs *corpus.Corpus) (fed.Learner, error) {
		return NewLearner(s, party, docs)
	},
	NewValidator: func(s fed.Setup) (fed.Validator, error) {
		return NewValidator(s)
	},
	// K_p may differ between parties, and the final global model has up
	// to ΣK_p topics: a party must know them all.
	NeedsParties: true,
}

// Validator checks FTM's updates before they reach the aggregator: the
// message kind, a document count in [1, 2⁴⁰], at most the largest K_p
// rows of V entries, every entry finite and non-negative, every row summing
// to 1. The aggregator checks each party's exact K_p.
type Validator struct {
	v, maxK, maxGlobal int
}

// NewValidator returns the update checks for s.
func NewValidator(s fed.Setup) (*Validator, error) {
	cfg, ks, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	return &Validator{v: len(s.Vocab), maxK: maxOf(ks), maxGlobal: maxGlobal(cfg, ks)}, nil
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// CheckUpdate implements fed.Validator.
func (v *Validator) CheckUpdate(round int, payload []byte) error {
	_, err := decodeUpdate(payload, v.v, v.maxK)
	return err
}

// MaxUpdateSize implements fed.Validator.
func (v *Validator) MaxUpdateSize() int { return updateSize(v.maxK, v.v) }

// MaxBroadcastSize implements fed.Validator: the largest composed local
// model or final global model.
func (v *Validator) MaxBroadcastSize() int { return modelSize(max(v.maxK, v.maxGlobal), v.v) }
