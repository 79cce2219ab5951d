package fedlda

import (
	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
)

// Name is the algorithm's name in configurations and run records.
const Name = "fedlda"

// Algorithm is FedLDA for the federation engine: its halves and update
// checks built from a fed.Setup whose Params hold a Config in JSON. A
// party's half depends only on itself, so deployed parties need not list
// the federation.
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
}

// Validator checks a party's update before it reaches the collector: the
// header, exactly l tuples for each of the 1..max_users users it declares
// (so the payload's length matches its user count), every word below V,
// every topic below K, and every tuple either a real change (k_old ≠
// k_new, k_old possibly none) or a dummy (0, none, none).
type Validator struct {
	shape tupleShape
}

// NewValidator returns the update checks for s.
func NewValidator(s fed.Setup) (*Validator, error) {
	cfg, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	return &Validator{shape: tupleShape{k: cfg.K, v: len(s.Vocab), l: cfg.Tuples(), maxUsers: cfg.MaxUsers}}, nil
}

// CheckUpdate implements fed.Validator.
func (v *Validator) CheckUpdate(round int, payload []byte) error {
	_, _, err := decodeTuples(payload, v.shape)
	return err
}

// MaxUpdateSize implements fed.Validator.
func (v *Validator) MaxUpdateSize() int { return tuplesSize(v.shape.maxUsers, v.shape.l) }

// MaxBroadcastSize implements fed.Validator.
func (v *Validator) MaxBroadcastSize() int { return countsSize(v.shape.k, v.shape.v) }
