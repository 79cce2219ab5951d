package fednmf

import (
	"errors"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// client is one client's half of the factorization: its document matrix
// A_i, its topic weights H_i (N_i rows of K, never sent) and the buffers of
// a mini-batch step.
type client struct {
	cfg     Config // with defaults
	a       *Matrix
	k       int
	h       []float64 // N×K row-major: row j is H_i(:, j)
	crit    critic
	ws      *smileWork
	hb      []float64 // B×K
	gh      []float64 // B×K
	gy      []float64 // B×K
	q, g    []float64 // K×K: WᵀW and H_bᵀH_b
	wa      []float64 // K
	p       []float64 // V×K: A_b·H_b in the rows of touched, zero elsewhere
	wg      []float64 // V×K: W·G
	touched []bool    // the words of the batch
	perm    []int
}

func newClient(cfg Config, a *Matrix) *client {
	cfg = cfg.WithDefaults()
	k, b := cfg.K, cfg.Batch
	c := &client{cfg: cfg, a: a, k: k, h: make([]float64, a.N*k),
		hb: make([]float64, b*k), gh: make([]float64, b*k), gy: make([]float64, b*k),
		q: make([]float64, k*k), g: make([]float64, k*k), wa: make([]float64, k),
		p: make([]float64, a.V*k), wg: make([]float64, a.V*k), touched: make([]bool, a.V), perm: make([]int, a.N)}
	if cfg.MILambda > 0 {
		c.crit = critic{a.V, k}
		c.ws = newSmileWork(c.crit, b)
	}
	return c
}

// epochs runs E epochs of mini-batch SGD on Eq. 3 (Algorithm 1,
// ClientUpdate) over w (V×K, updated in place) and, with λ > 0, the critic
// theta, drawing the batches' order from r. It returns the mean
// reconstruction loss per document of the last epoch.
//
// Each step computes every gradient at the current (W, H_b, θ), then
//
//	W   ← max(0, W − η·∂L/∂W)
//	H_b ← max(0, H_b − η·∂L/∂H_b)
//	θ   ← θ + η·∂Î/∂θ
//
// with L = −λ·Î_SMILE + (1/B)·Σ_j ‖A(:,j) − W·H(:,j)‖². A last batch of one
// document has no shuffled pair and skips the MI term.
func (c *client) epochs(r *rand.Rand, w, theta []float64, e int) float64 {
	var loss float64
	for ep := range e {
		for i := range c.perm {
			c.perm[i] = i
		}
		r.Shuffle(len(c.perm), func(i, j int) { c.perm[i], c.perm[j] = c.perm[j], c.perm[i] })
		var sum float64
		for s := 0; s < len(c.perm); s += c.cfg.Batch {
			sum += c.step(w, theta, c.perm[s:min(s+c.cfg.Batch, len(c.perm))])
		}
		if ep == e-1 && len(c.perm) > 0 {
			loss = sum / float64(len(c.perm))
		}
	}
	return loss
}

// step makes one mini-batch step over the documents cols and returns
// their summed squared residuals.
//
// The gradients are taken without forming the dense V×B residual:
// with G = H_bᵀH_b and Q = WᵀW (both K×K),
//
//	∂/∂W   = −(2/B)·(A_b·H_b − W·G)
//	∂/∂H_b = −(2/B)·(A_bᵀ·W − H_b·Q)
//	‖a_j − W·h_j‖² = ‖a_j‖² − 2·h_j·(Wᵀa_j) + h_jᵀ·Q·h_j,
//
// so the sparse documents cost their non-zeros times K, and W two dense
// products with K×K matrices (Q and W·G, 2·V·K² multiplications against
// the 3·V·K·B of the products with the residual) and one pass to update
// it.
func (c *client) step(w, theta []float64, cols []int) float64 {
	v, k, b := c.a.V, c.k, len(cols)
	eta := c.cfg.LR
	hb, gh := c.hb[:b*k], c.gh[:b*k]
	for j, d := range cols {
		copy(hb[j*k:(j+1)*k], c.h[d*k:(d+1)*k])
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(v, k, w), general(v, k, w), 0, general(k, k, c.q))
	gram(b, k, hb, c.g)
	scale := -2 / float64(b)
	var sse float64
	for j, d := range cols {
		rows, vals := c.a.Col(d)
		wa := c.wa[:k]
		clear(wa)
		var aa float64
		for i, wd := range rows {
			axpy(vals[i], w[int(wd)*k:(int(wd)+1)*k], wa)
			aa += vals[i] * vals[i]
		}
		hj, ghj := hb[j*k:(j+1)*k], gh[j*k:(j+1)*k]
		clear(ghj)
		for u, x := range hj {
			if x != 0 {
				axpy(x, c.q[u*k:(u+1)*k], ghj) // Q·h_j
			}
		}
		var hwa, hqh float64
		for t, x := range hj {
			hwa += x * wa[t]
			hqh += x * ghj[t]
		}
		sse += max(aa-2*hwa+hqh, 0)
		for t := range ghj {
			ghj[t] = scale * (wa[t] - ghj[t])
		}
	}
	mi := c.cfg.MILambda > 0 && b >= 2
	if mi {
		gy := c.gy[:b*k]
		c.crit.smile(theta, c.a, cols, hb, c.cfg.SMILEClip, c.ws, gy, true)
		for i, g := range gy {
			gh[i] -= c.cfg.MILambda * g
		}
	}
	// P = A_b·H_b in the rows of the batch's words (c.p is zero elsewhere),
	// then W ← max(0, W + (2η/B)·(P − W·G)) row by row.
	for j, d := range cols {
		rows, vals := c.a.Col(d)
		hj := hb[j*k : (j+1)*k]
		for i, wd := range rows {
			c.touched[wd] = true
			axpy(vals[i], hj, c.p[int(wd)*k:(int(wd)+1)*k])
		}
	}
	step := 2 * eta / float64(b)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, general(v, k, w), general(k, k, c.g), 0, general(v, k, c.wg))
	for i := range v {
		wi, wg := w[i*k:(i+1)*k], c.wg[i*k:(i+1)*k]
		if c.touched[i] {
			pi := c.p[i*k : (i+1)*k]
			for t, x := range wi {
				wi[t] = max(x+step*(pi[t]-wg[t]), 0)
			}
			clear(pi)
			c.touched[i] = false
			continue
		}
		for t, x := range wi {
			wi[t] = max(x-step*wg[t], 0)
		}
	}
	for j, d := range cols {
		dst := c.h[d*k : (d+1)*k]
		for t := range dst {
			dst[t] = max(hb[j*k+t]-eta*gh[j*k+t], 0)
		}
	}
	if mi {
		c.crit.ascend(theta, c.a, cols, c.ws, eta)
	}
	return sse
}

// TrainSGD is the centralized SGD baseline (NMF+SGD, and NMF+SGD+MI with
// cfg.MILambda > 0): one client holding every document, trained for
// cfg.Rounds × cfg.LocalEpochs epochs from the W and θ the coordinator of a
// run with the same seed starts from. A one-client federation with
// ClientFraction 1 and FedAvg follows the same path, so the two agree to
// rounding. It returns W (V×K) and H (N×K).
func TrainSGD(c *corpus.Corpus, vocab []string, cfg Config, seed uint64) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if c == nil || c.NumDocs() == 0 {
		return nil, errors.New("fednmf: train sgd: no documents")
	}
	cfg = cfg.WithDefaults()
	s := fed.Setup{Run: "sgd", Parties: []string{"all"}, Vocab: vocab, Seed: seed}
	agg, err := newAggregator(cfg, s)
	if err != nil {
		return nil, err
	}
	a, err := NewMatrix(c, cfg.Features)
	if err != nil {
		return nil, err
	}
	cl := newClient(cfg, a)
	nw := agg.sh.v * agg.sh.k
	w, theta := agg.x[:nw], agg.x[nw:]
	fitH(a, w, cfg.K, cl.h, initSweeps, 0)
	res := &Result{V: a.V, K: cfg.K, N: a.N, W: w, H: cl.h}
	for r := 1; r <= cfg.Rounds; r++ {
		cl.epochs(rng.Derive(seed, "fednmf", "party", "all", "round", r), w, theta, cfg.LocalEpochs)
		res.Objective = append(res.Objective, objective(a, w, cl.h, cfg.K))
	}
	return res, nil
}
