package fednmf

import (
	"context"
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// docsCorpus builds a corpus of the given documents over v words.
func docsCorpus(v int, docs ...[]int32) *corpus.Corpus {
	c := &corpus.Corpus{V: v, DocStart: []int{0}}
	for _, d := range docs {
		c.Words = append(c.Words, d...)
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	return c
}

// TestInferProportions checks Infer on a model of two topics over
// disjoint words: a document of one topic's words gets that topic alone,
// a document of both gets each topic's share of its feature mass, one
// outside both topics gets the uniform proportions, and every row sums to
// 1. Counts make the shares exact: NNLS with W = Φᵀ reproduces the counts.
func TestInferProportions(t *testing.T) {
	m := &topic.Model{K: 2, V: 5, Vocab: []string{"a", "b", "c", "d", "e"},
		Phi:  []float64{0.5, 0.5, 0, 0, 0, 0, 0, 0.5, 0.5, 0},
		Prov: topic.Provenance{Method: MethodNMF, Params: map[string]string{"features": FeaturesCounts}}}
	c := docsCorpus(5,
		[]int32{0, 1, 0, 1},                   // topic 0 only
		[]int32{2, 3},                         // topic 1 only
		[]int32{0, 1, 2, 3, 2, 3, 0, 1, 2, 3}, // 4 of topic 0, 6 of topic 1
		[]int32{4, 4},                         // no topic
	)
	features, ok := ModelFeatures(m)
	if !ok || features != FeaturesCounts {
		t.Fatalf("ModelFeatures = %q, %v; want counts, true", features, ok)
	}
	theta, err := Infer(context.Background(), m, c, features, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1, 0, 0, 1, 0.4, 0.6, 0.5, 0.5}
	for i, x := range theta {
		if math.Abs(x-want[i]) > 1e-6 {
			t.Errorf("θ = %v; want %v", theta, want)
			break
		}
	}
}

// TestFitHOptimal checks that FitH reaches the non-negative least-squares
// optimum of a trained model's documents: the KKT conditions g = Wᵀ(Wh − a)
// ≥ 0, h ≥ 0 and g·h = 0 hold within tolerance for every document, from
// a zero start.
func TestFitHOptimal(t *testing.T) {
	c, _ := planted(t, 4, 40, 200)
	a, err := NewMatrix(c, FeaturesTFIDF)
	if err != nil {
		t.Fatal(err)
	}
	res, err := TrainMatrix(context.Background(), a, TrainConfig{K: 6, Iterations: 50, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	k := res.K
	h := make([]float64, a.N*k)
	if err := FitH(a, res.W, k, h, 1000, 1e-9); err != nil {
		t.Fatal(err)
	}
	if err := FitH(a, res.W, k, h[1:], 1, 0); err == nil {
		t.Errorf("FitH with a short H = nil; want an error")
	}
	wh := make([]float64, a.V)
	for j := range a.N {
		hj := h[j*k : (j+1)*k]
		for i := range a.V {
			var s float64
			for u := range k {
				s += res.W[i*k+u] * hj[u]
			}
			wh[i] = s
		}
		rows, vals := a.Col(j)
		for i, wd := range rows {
			wh[wd] -= vals[i]
		}
		for u := range k {
			var g float64
			for i := range a.V {
				g += res.W[i*k+u] * wh[i]
			}
			if g < -1e-6 || hj[u] < 0 || math.Abs(g*hj[u]) > 1e-6 {
				t.Fatalf("document %d topic %d: gradient %g, weight %g; want g ≥ 0, h ≥ 0, g·h = 0", j, u, g, hj[u])
			}
		}
	}
}

// TestStepMatchesDense checks a client's SGD step, which never forms the
// residual, against the dense update written out: R = A_b − W·H_bᵀ,
// W ← max(0, W + (2η/B)·R·H_b), H_b ← max(0, H_b + (2η/B)·Rᵀ·W), and the
// returned loss ‖R‖², on a batch that leaves some documents out.
func TestStepMatchesDense(t *testing.T) {
	c, _ := planted(t, 4, 40, 30)
	a, err := NewMatrix(c, FeaturesTFIDF)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{K: 5, Batch: 8, LR: 0.3}.WithDefaults()
	cl := newClient(cfg, a)
	k, v := cfg.K, a.V
	w := make([]float64, v*k)
	for i := range w {
		w[i] = float64((i*7)%11) / 40 // some zeros, some rows all zero
		if (i/k)%5 == 0 {
			w[i] = 0
		}
	}
	for i := range cl.h {
		cl.h[i] = float64((i*5)%7) / 10
	}
	cols := []int{3, 9, 4, 17, 22, 0, 28, 11}
	wantW, wantH := append([]float64(nil), w...), append([]float64(nil), cl.h...)
	var wantSSE float64
	r := make([]float64, v*len(cols))
	for j, d := range cols {
		rows, vals := a.Col(d)
		for i, wd := range rows {
			r[int(wd)*len(cols)+j] = vals[i]
		}
		for i := range v {
			for u := range k {
				r[i*len(cols)+j] -= w[i*k+u] * cl.h[d*k+u]
			}
		}
	}
	for _, x := range r {
		wantSSE += x * x
	}
	s := 2 * cfg.LR / float64(len(cols))
	for i := range v {
		for u := range k {
			var g float64
			for j, d := range cols {
				g += r[i*len(cols)+j] * cl.h[d*k+u]
			}
			wantW[i*k+u] = max(w[i*k+u]+s*g, 0)
		}
	}
	for j, d := range cols {
		for u := range k {
			var g float64
			for i := range v {
				g += r[i*len(cols)+j] * w[i*k+u]
			}
			wantH[d*k+u] = max(cl.h[d*k+u]+s*g, 0)
		}
	}
	sse := cl.step(w, nil, cols)
	if math.Abs(sse-wantSSE) > 1e-9*wantSSE {
		t.Errorf("step loss = %v; want %v", sse, wantSSE)
	}
	for i := range w {
		if math.Abs(w[i]-wantW[i]) > 1e-12 {
			t.Fatalf("W[%d] = %v; want %v", i, w[i], wantW[i])
		}
	}
	for i := range cl.h {
		if math.Abs(cl.h[i]-wantH[i]) > 1e-12 {
			t.Fatalf("H[%d] = %v; want %v", i, cl.h[i], wantH[i])
		}
	}
}
