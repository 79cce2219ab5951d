package fednmf

import (
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
)

// Algorithm is FedNMF (and, with Config.MILambda > 0, FedNMF+MI) for the
// federation engine: its halves and update checks built from a fed.Setup
// whose Params hold a Config in JSON. A client's half depends only on its
// own id, so NeedsParties is false.
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

// Validator checks FedNMF's updates before they reach the aggregator: the
// message kind, the shape of W and θ, every value finite, and under
// DP-FedAvg a norm of at most the clip S and no document count.
type Validator struct {
	cfg Config
	sh  shape
}

// NewValidator returns the update checks for s.
func NewValidator(s fed.Setup) (*Validator, error) {
	cfg, err := ParseConfig(s.Params)
	if err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	return &Validator{cfg: cfg, sh: shapeOf(cfg, len(s.Vocab))}, nil
}

// CheckUpdate implements fed.Validator.
func (v *Validator) CheckUpdate(round int, payload []byte) error {
	u, err := decodeUpdate(payload, v.sh)
	if err != nil || u.delta == nil || !v.cfg.DP() {
		return err
	}
	if u.docs != 0 {
		return fmt.Errorf("fednmf: update carries a document count under DP-FedAvg")
	}
	var ss float64
	for _, d := range u.delta {
		ss += d * d
	}
	if math.Sqrt(ss) > v.cfg.Clip*(1+1e-9) {
		return fmt.Errorf("fednmf: update norm above the clip S = %v", v.cfg.Clip)
	}
	return nil
}

// MaxUpdateSize implements fed.Validator.
func (v *Validator) MaxUpdateSize() int { return updateSize(v.sh) }

// MaxBroadcastSize implements fed.Validator.
func (v *Validator) MaxBroadcastSize() int { return modelSize(v.sh) }
