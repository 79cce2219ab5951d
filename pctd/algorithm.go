package pctd

import (
	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
)

// Name is the algorithm's name in configurations and run records.
const Name = "pctd"

// Algorithm is PC-TD for the federation engine: its halves and update
// checks built from a fed.Setup whose Params hold a Config in JSON. A
// party's half depends on its own id only.
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

// Validator checks PC-TD's updates before they reach the aggregator: the
// message kind, exactly K×V values, every value finite and at most 10¹⁵
// in magnitude (noisy M_t may be negative).
type Validator struct {
	k, v int
}

// NewValidator returns the update checks for s.
func NewValidator(s fed.Setup) (*Validator, error) {
	cfg, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	return &Validator{k: cfg.Topics, v: len(s.Vocab)}, nil
}

// CheckUpdate implements fed.Validator.
func (v *Validator) CheckUpdate(round int, payload []byte) error {
	_, err := decodeUpdate(payload, v.k, v.v)
	return err
}

// MaxUpdateSize implements fed.Validator.
func (v *Validator) MaxUpdateSize() int { return updateSize(v.k, v.v) }

// MaxBroadcastSize implements fed.Validator.
func (v *Validator) MaxBroadcastSize() int { return modelSize(v.k, v.v) }
