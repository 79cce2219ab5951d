package fednmf

import (
	"fmt"

	"github.com/fedtopic/fedtopic/topic"
)

// ModelOf returns the topic model of W (V×K, row-major): topic t's
// word distribution is W's column t divided by its sum. A column that is
// all zero (a topic no document uses) becomes the uniform distribution.
// NMF has no document-topic prior: Alpha is left empty and Beta zero.
func ModelOf(w []float64, v, k int, vocab []string) (*topic.Model, error) {
	if len(w) != v*k {
		return nil, fmt.Errorf("fednmf: model: W has %d entries, want %d×%d", len(w), v, k)
	}
	if len(vocab) != v {
		return nil, fmt.Errorf("fednmf: model: vocabulary of %d words for W of %d rows", len(vocab), v)
	}
	phi := make([]float64, k*v)
	for t := range k {
		row := phi[t*v : (t+1)*v]
		var s float64
		for i := range v {
			row[i] = w[i*k+t]
			s += row[i]
		}
		if s > 0 {
			for i := range row {
				row[i] /= s
			}
		} else {
			for i := range row {
				row[i] = 1 / float64(v)
			}
		}
	}
	m := &topic.Model{Phi: phi, K: k, V: v, Vocab: vocab, Prov: topic.Provenance{Method: Name}}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("fednmf: model: %w", err)
	}
	return m, nil
}
