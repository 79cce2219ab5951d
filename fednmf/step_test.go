package fednmf

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/fedtopic/fedtopic/fed"
)

// stepRun makes steps mini-batch steps of a client with the given number
// of workers over a (V = 5,000 words: three chunks of updateW) from the
// coordinator's first W and H fitted to it, checking after every step that the Gram matrix the client
// carries equals WᵀW of the new W to 1e-12 of its largest entry (rounding
// drifts it by about 1e-16 a step). It returns W, H and how many steps
// carried Q.
func stepRun(t *testing.T, a *Matrix, workers, steps int, lr float64) (w, h []float64, carried int) {
	t.Helper()
	cfg := Config{K: 6, Batch: 16, LR: lr}.WithDefaults()
	cl := newClient(cfg, a)
	cl.workers = workers
	k := cfg.K
	agg, err := newAggregator(cfg, fed.Setup{Run: "t", Parties: []string{"p"}, Vocab: make([]string, a.V), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	w = agg.x[:a.V*k]
	fitH(a, w, k, cl.h, initSweeps, 0)
	want := make([]float64, k*k)
	for s := range steps {
		cols := make([]int, cfg.Batch)
		for j := range cols {
			cols[j] = (s*cfg.Batch + j*7) % a.N
		}
		cl.step(w, nil, cols)
		if !cl.qValid {
			continue
		}
		carried++
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(a.V, k, w), general(a.V, k, w), 0, general(k, k, want))
		top := slices.Max(want)
		for i, x := range want {
			if math.Abs(cl.q[i]-x) > 1e-12*top {
				t.Fatalf("step %d: carried Q[%d] = %.15g; WᵀW = %.15g", s, i, cl.q[i], x)
			}
		}
	}
	return w, cl.h, carried
}

// plantedMatrix returns the tf-idf matrix of a planted corpus over 5,000
// words.
func plantedMatrix(t *testing.T) *Matrix {
	t.Helper()
	c, _ := planted(t, 4, 5000, 200)
	a, err := NewMatrix(c, FeaturesTFIDF)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestStepCarriesGram checks that the Gram matrix a client carries from
// step to step (nextGram) stays equal to WᵀW, through steps whose
// projection clips entries of W (the corrections); at the larger rate
// more than a quarter of W's entries are clipped in 18 of the 100 steps,
// and Q is computed afresh after them.
func TestStepCarriesGram(t *testing.T) {
	a := plantedMatrix(t)
	for _, lr := range []float64{0.1, 5} {
		t.Run(fmt.Sprintf("lr=%g", lr), func(t *testing.T) {
			w, _, carried := stepRun(t, a, 1, 100, lr)
			var zeros int
			for _, x := range w {
				if x == 0 {
					zeros++
				}
			}
			if zeros == 0 || carried == 0 {
				t.Errorf("%d zero entries of W, %d steps carried Q; want both above zero", zeros, carried)
			}
		})
	}
}

// TestStepWorkers checks that the number of goroutines updating W does not
// change the result by a single bit.
func TestStepWorkers(t *testing.T) {
	a := plantedMatrix(t)
	w1, h1, _ := stepRun(t, a, 1, 20, 0.1)
	w3, h3, _ := stepRun(t, a, 3, 20, 0.1)
	if !slices.Equal(w1, w3) || !slices.Equal(h1, h3) {
		t.Errorf("W or H with 3 workers differs from 1 worker")
	}
}
