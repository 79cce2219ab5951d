package fednmf

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/floats"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/topic"
)

// hdiv guards HALS's division by a squared column norm: a column whose
// norm is below it is left as it is (it is zero, and stays so).
const hdiv = 1e-12

// FitH sets h (N×K) to the non-negative least-squares weights of a's
// documents with w (V×K) fixed, by at most iters sweeps of HALS (block
// coordinate descent, Cichocki & Phan 2009) starting from h's current
// values: the inference of NMF, H for new documents with W fixed. With
// tol > 0 a document stops once a sweep moves none of its weights by more
// than tol times its largest weight; with tol = 0 every document takes
// every sweep. The problem is convex in h, so the sweeps converge to its
// minimum whatever the start.
func FitH(a *Matrix, w []float64, k int, h []float64, iters int, tol float64) error {
	if len(w) != a.V*k || len(h) != a.N*k {
		return fmt.Errorf("fednmf: fit H: W has %d entries and H %d, want %d×%d and %d×%d", len(w), len(h), a.V, k, a.N, k)
	}
	fitH(a, w, k, h, iters, tol)
	return nil
}

// fitH is FitH on arguments of the right sizes.
func fitH(a *Matrix, w []float64, k int, h []float64, iters int, tol float64) {
	wtw := make([]float64, k*k)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(a.V, k, w), general(a.V, k, w), 0, general(k, k, wtw))
	atw := make([]float64, a.N*k)
	sparseAtW(a, w, k, atw)
	for j := range a.N {
		hj := h[j*k : (j+1)*k]
		aj := atw[j*k : (j+1)*k]
		for range iters {
			var moved, top float64
			for t := range k {
				d := wtw[t*k+t]
				if d < hdiv {
					continue
				}
				var s float64
				row := wtw[t*k : (t+1)*k]
				for u, x := range hj {
					s += row[u] * x
				}
				x := max(hj[t]+(aj[t]-s)/d, 0)
				moved = max(moved, math.Abs(x-hj[t]))
				hj[t] = x
				top = max(top, x)
			}
			if tol > 0 && moved <= tol*top {
				break
			}
		}
	}
}

// sparseAtW sets out (N×K) to Aᵀ·W.
func sparseAtW(a *Matrix, w []float64, k int, out []float64) {
	clear(out)
	for j := range a.N {
		rows, vals := a.Col(j)
		dst := out[j*k : (j+1)*k]
		for i, wd := range rows {
			src := w[int(wd)*k : (int(wd)+1)*k]
			x := vals[i]
			for t := range dst {
				dst[t] += x * src[t]
			}
		}
	}
}

// sparseAH sets out (V×K) to A·H.
func sparseAH(a *Matrix, h []float64, k int, out []float64) {
	clear(out)
	for j := range a.N {
		rows, vals := a.Col(j)
		src := h[j*k : (j+1)*k]
		for i, wd := range rows {
			dst := out[int(wd)*k : (int(wd)+1)*k]
			x := vals[i]
			for t := range dst {
				dst[t] += x * src[t]
			}
		}
	}
}

// TrainConfig holds the parameters of centralized NMF.
type TrainConfig struct {
	K int `json:"k"`
	// Iterations is the most HALS sweeps (each updates H, then W); default
	// 200.
	Iterations int `json:"iterations,omitempty"`
	// Tol stops when an iteration lowers the objective by less than Tol
	// times its value; default 1e-4, 0 < Tol. Negative means run every
	// iteration.
	Tol float64 `json:"tol,omitempty"`
	// Features is tfidf (default) or counts.
	Features string `json:"features,omitempty"`
	Seed     uint64 `json:"seed"`
	// Progress, when set, is called after each iteration with its number
	// (from 1) and the objective reached; benchmarks time the solver with
	// it.
	Progress func(iter int, objective float64) `json:"-"`
}

// Result is a factorization A ≈ W·Hᵀ.
type Result struct {
	V, K, N int
	W       []float64 // V×K, row-major
	H       []float64 // N×K, row-major: row j is document j's weights
	// Objective is ½‖A − W·Hᵀ‖²_F after each iteration (scikit-learn's
	// objective).
	Objective []float64
}

// Model returns the topic model of r's W.
func (r *Result) Model(vocab []string) (*topic.Model, error) { return ModelOf(r.W, r.V, r.K, vocab) }

// Train factorizes the pooled document matrix of c by HALS (the
// centralized NMF baseline). W and H start from scikit-learn's random
// initialization, |N(0, 1)|·√(mean(A)/K), drawn from cfg.Seed.
func Train(ctx context.Context, c *corpus.Corpus, cfg TrainConfig) (*Result, error) {
	if cfg.K < 1 || cfg.K > MaxTopics {
		return nil, fmt.Errorf("fednmf: train: k = %d, want 1 to %d", cfg.K, MaxTopics)
	}
	if cfg.Iterations < 0 {
		return nil, fmt.Errorf("fednmf: train: iterations = %d, want ≥ 0", cfg.Iterations)
	}
	if cfg.Iterations == 0 {
		cfg.Iterations = 200
	}
	if cfg.Tol == 0 {
		cfg.Tol = 1e-4
	}
	if c == nil || c.NumDocs() == 0 {
		return nil, errors.New("fednmf: train: no documents")
	}
	a, err := NewMatrix(c, cfg.Features)
	if err != nil {
		return nil, err
	}
	return TrainMatrix(ctx, a, cfg)
}

// TrainMatrix is Train on a document matrix.
func TrainMatrix(ctx context.Context, a *Matrix, cfg TrainConfig) (*Result, error) {
	k := cfg.K
	res := &Result{V: a.V, K: k, N: a.N, W: make([]float64, a.V*k), H: make([]float64, a.N*k)}
	var sum float64
	for _, x := range a.Vals {
		sum += x
	}
	scale := math.Sqrt(sum / float64(a.V) / float64(a.N) / float64(k))
	r := rng.Derive(cfg.Seed, "fednmf", "train", "init")
	for i := range res.H {
		res.H[i] = math.Abs(r.NormFloat64()) * scale
	}
	for i := range res.W {
		res.W[i] = math.Abs(r.NormFloat64()) * scale
	}
	w, h := res.W, res.H
	wtw, hth := make([]float64, k*k), make([]float64, k*k)
	atw, ah := make([]float64, a.N*k), make([]float64, a.V*k)
	norm2 := a.Norm2()
	prev := math.Inf(1)
	gram(a.V, k, w, wtw)
	for it := range cfg.Iterations {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("fednmf: train: iteration %d: %w", it, err)
		}
		// H: wtw is WᵀW of the current W (from the start, or from the
		// previous iteration's objective).
		sparseAtW(a, w, k, atw)
		halsColumns(h, atw, wtw, a.N, k)
		// W.
		gram(a.N, k, h, hth)
		sparseAH(a, h, k, ah)
		halsColumns(w, ah, hth, a.V, k)
		// ½(‖A‖² − 2⟨W, AH⟩ + ⟨WᵀW, HᵀH⟩), with the new W.
		gram(a.V, k, w, wtw)
		var cross, quad float64
		for i, x := range w {
			cross += x * ah[i]
		}
		for i, x := range wtw {
			quad += x * hth[i]
		}
		obj := max(0.5*(norm2-2*cross+quad), 0)
		res.Objective = append(res.Objective, obj)
		if cfg.Progress != nil {
			cfg.Progress(it+1, obj)
		}
		if cfg.Tol > 0 && prev-obj < cfg.Tol*prev {
			break
		}
		prev = obj
	}
	return res, nil
}

// halsColumns updates the columns of x (n×K) one topic at a time:
// x[:,t] ← max(0, x[:,t] + (b[:,t] − x·g[:,t]) / g[t,t]), the exact
// minimizer of the objective in column t with the others fixed. Row i's
// updates read only row i of x, b and the symmetric g, so the rows are
// swept one after another, each through every topic in order: the same
// updates as column after column, with each row in cache. Each row keeps
// its residual r = b_i − x_i·g up to date, so an update costs a division
// and, only when it moves the weight, an axpy with g's row t: NMF's
// weights are mostly zero and mostly stay so.
func halsColumns(x, b, g []float64, n, k int) {
	r := make([]float64, k)
	for i := range n {
		row := x[i*k : (i+1)*k]
		copy(r, b[i*k:(i+1)*k])
		for u, v := range row {
			if v != 0 {
				axpy(-v, g[u*k:(u+1)*k], r)
			}
		}
		for t := range k {
			d := g[t*k+t]
			if d < hdiv {
				continue
			}
			old := row[t]
			nw := max(old+r[t]/d, 0)
			if nw != old {
				row[t] = nw
				axpy(old-nw, g[t*k:(t+1)*k], r)
			}
		}
	}
}

// axpy sets y ← y + α·x (gonum's assembly kernel).
func axpy(alpha float64, x, y []float64) { floats.AddScaled(y, alpha, x) }

// gram sets out (K×K) to XᵀX for x (n×K, row-major), summing over each
// row's non-zero entries only.
func gram(n, k int, x, out []float64) {
	clear(out)
	idx := make([]int, 0, k)
	for i := range n {
		row := x[i*k : (i+1)*k]
		idx = idx[:0]
		for u, v := range row {
			if v != 0 {
				idx = append(idx, u)
			}
		}
		for p, u := range idx {
			xu := row[u]
			o := out[u*k : (u+1)*k]
			for _, v := range idx[p:] {
				o[v] += xu * row[v]
			}
		}
	}
	for t := range k {
		for u := range t {
			out[t*k+u] = out[u*k+t]
		}
	}
}

// objective returns ½‖A − W·Hᵀ‖²_F.
func objective(a *Matrix, w, h []float64, k int) float64 {
	wtw, hth := make([]float64, k*k), make([]float64, k*k)
	ah := make([]float64, a.V*k)
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(a.V, k, w), general(a.V, k, w), 0, general(k, k, wtw))
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(a.N, k, h), general(a.N, k, h), 0, general(k, k, hth))
	sparseAH(a, h, k, ah)
	var cross, quad float64
	for i, x := range w {
		cross += x * ah[i]
	}
	for i, x := range wtw {
		quad += x * hth[i]
	}
	return max(0.5*(a.Norm2()-2*cross+quad), 0)
}
