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
	cfg  Config // with defaults
	a    *Matrix
	k    int
	h    []float64 // N×K row-major: row j is H_i(:, j)
	crit critic
	ws   *smileWork
	r    []float64 // V×B residual A_b − W·H_b
	hb   []float64 // B×K
	gh   []float64 // B×K
	gy   []float64 // B×K
	gw   []float64 // V×K
	perm []int
}

func newClient(cfg Config, a *Matrix) *client {
	cfg = cfg.WithDefaults()
	k, b := cfg.K, cfg.Batch
	c := &client{cfg: cfg, a: a, k: k, h: make([]float64, a.N*k),
		r: make([]float64, a.V*b), hb: make([]float64, b*k), gh: make([]float64, b*k),
		gy: make([]float64, b*k), gw: make([]float64, a.V*k), perm: make([]int, a.N)}
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
func (c *client) step(w, theta []float64, cols []int) float64 {
	v, k, b := c.a.V, c.k, len(cols)
	eta := c.cfg.LR
	hb, gh := c.hb[:b*k], c.gh[:b*k]
	for j, d := range cols {
		copy(hb[j*k:(j+1)*k], c.h[d*k:(d+1)*k])
	}
	// R = A_b − W·H_bᵀ, V×B.
	r := c.r[:v*b]
	clear(r)
	for j, d := range cols {
		rows, vals := c.a.Col(d)
		for i, wd := range rows {
			r[int(wd)*b+j] = vals[i]
		}
	}
	blas64.Gemm(blas.NoTrans, blas.Trans, -1, general(v, k, w), general(b, k, hb), 1, general(v, b, r))
	var sse float64
	for _, x := range r {
		sse += x * x
	}
	scale := -2 / float64(b)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, scale, general(v, b, r), general(b, k, hb), 0, general(v, k, c.gw))
	blas64.Gemm(blas.Trans, blas.NoTrans, scale, general(v, b, r), general(v, k, w), 0, general(b, k, gh))
	mi := c.cfg.MILambda > 0 && b >= 2
	if mi {
		gy := c.gy[:b*k]
		c.crit.smile(theta, c.a, cols, hb, c.cfg.SMILEClip, c.ws, gy, true)
		for i, g := range gy {
			gh[i] -= c.cfg.MILambda * g
		}
	}
	for i, g := range c.gw {
		w[i] = max(w[i]-eta*g, 0)
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
