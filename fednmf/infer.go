package fednmf

import (
	"context"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// Provenance methods of NMF models: centralized HALS and centralized SGD
// (fedtopic train --model nmf, nmf-sgd) and the federated method (Name).
const (
	MethodNMF    = "nmf"
	MethodNMFSGD = "nmf-sgd"
)

// Inference defaults: HALS sweeps at most per document, and the relative
// change of its weights below which a document stops.
const (
	DefaultInferSweeps = 500
	inferTol           = 1e-6
	inferChunk         = 1024 // documents between checks of the context
)

// ModelFeatures reports whether m is an NMF model, by its provenance
// method (nmf, nmf-sgd or fednmf), and the document features it was
// trained on (its "features" parameter; tf-idf when the parameter is
// missing, the default of every NMF method).
func ModelFeatures(m *topic.Model) (features string, ok bool) {
	switch m.Prov.Method {
	case MethodNMF, MethodNMFSGD, Name:
	default:
		return "", false
	}
	f := m.Prov.Params["features"]
	if f == "" {
		f = FeaturesTFIDF
	}
	return f, true
}

// Infer returns the topic proportions of c's documents (N×K, row-major)
// under the NMF model m: each document's weights h ≥ 0 minimize
// ‖a − Wh‖² with W = Φᵀ fixed (non-negative least squares by at most
// sweeps HALS sweeps; 0 means DefaultInferSweeps), and its proportions are
// h divided by its sum. Because Φ's rows sum to 1, h_t is the part of the
// document's feature mass that topic t explains, whatever scale the
// training gave W's columns. A document no topic explains (h = 0) gets the
// uniform proportions. features is the matrix the model was trained on
// (ModelFeatures); with tf-idf the inverse document frequencies are those
// of c, as a FedNMF party weighs its own documents, so documents should
// be inferred together rather than one at a time. The result is
// deterministic.
func Infer(ctx context.Context, m *topic.Model, c *corpus.Corpus, features string, sweeps int) ([]float64, error) {
	if sweeps < 0 {
		return nil, fmt.Errorf("fednmf: infer: sweeps = %d, want ≥ 0", sweeps)
	}
	if sweeps == 0 {
		sweeps = DefaultInferSweeps
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("fednmf: infer: %w", err)
	}
	if c.V != m.V {
		return nil, fmt.Errorf("fednmf: infer: corpus of %d words for a model of %d", c.V, m.V)
	}
	a, err := NewMatrix(c, features)
	if err != nil {
		return nil, fmt.Errorf("fednmf: infer: %w", err)
	}
	k := m.K
	w := make([]float64, m.V*k)
	for t := range k {
		for i, p := range m.Row(t) {
			w[i*k+t] = p
		}
	}
	h := make([]float64, a.N*k)
	for j0 := 0; j0 < a.N; j0 += inferChunk {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("fednmf: infer: document %d: %w", j0, err)
		}
		j1 := min(j0+inferChunk, a.N)
		sub := &Matrix{V: a.V, N: j1 - j0, Start: a.Start[j0 : j1+1], Rows: a.Rows, Vals: a.Vals}
		fitH(sub, w, k, h[j0*k:j1*k], sweeps, inferTol)
	}
	for j := range a.N {
		row := h[j*k : (j+1)*k]
		var s float64
		for _, x := range row {
			s += x
		}
		for t := range row {
			if s > 0 {
				row[t] /= s
			} else {
				row[t] = 1 / float64(k)
			}
		}
	}
	return h, nil
}
