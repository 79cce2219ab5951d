package fednmf

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"

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
	m, tmp  []float64 // K×K: I − (2η/B)·G, and a product with it
	qValid  bool      // q is WᵀW of the current W
	qAge    int       // steps since q was computed from W
	p       []float64 // V×K: A_b·H_b in the rows of touched, zero elsewhere
	touched []bool    // the words of the batch
	perm    []int
	chunks  []*chunkWork
	workers int // goroutines of the pass over W
}

func newClient(cfg Config, a *Matrix) *client {
	cfg = cfg.WithDefaults()
	k, b := cfg.K, cfg.Batch
	c := &client{cfg: cfg, a: a, k: k, h: make([]float64, a.N*k),
		hb: make([]float64, b*k), gh: make([]float64, b*k), gy: make([]float64, b*k),
		q: make([]float64, k*k), g: make([]float64, k*k), wa: make([]float64, k),
		m: make([]float64, k*k), tmp: make([]float64, k*k),
		p: make([]float64, a.V*k), touched: make([]bool, a.V), perm: make([]int, a.N), workers: runtime.GOMAXPROCS(0)}
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
	c.qValid = false // w is new
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
// so the sparse documents cost their non-zeros times K, and W one dense
// product with a K×K matrix (W·G, V·K² multiplications against the
// 3·V·K·B of the products with the residual) in the pass that updates it.
// Q is not recomputed from W (another V·K²) but carried from step to step
// (see nextGram), and computed afresh only when c.qValid is false.
func (c *client) step(w, theta []float64, cols []int) float64 {
	v, k, b := c.a.V, c.k, len(cols)
	eta := c.cfg.LR
	hb, gh := c.hb[:b*k], c.gh[:b*k]
	for j, d := range cols {
		copy(hb[j*k:(j+1)*k], c.h[d*k:(d+1)*k])
	}
	if !c.qValid || c.qAge >= refreshGram {
		blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(v, k, w), general(v, k, w), 0, general(k, k, c.q))
		c.qValid, c.qAge = true, 0
	}
	c.qAge++
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
	// then W ← max(0, W + (2η/B)·(P − W·G)).
	for j, d := range cols {
		rows, vals := c.a.Col(d)
		hj := hb[j*k : (j+1)*k]
		for i, wd := range rows {
			c.touched[wd] = true
			axpy(vals[i], hj, c.p[int(wd)*k:(int(wd)+1)*k])
		}
	}
	c.updateW(w, 2*eta/float64(b))
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

// chunkRows is the number of W's rows a worker of updateW takes at a time;
// blockRows the rows multiplied by G at once (a block of W·G stays in
// cache). The chunks are fixed, whatever the number of workers, so the
// result does not depend on it.
const (
	refreshGram = 64
	chunkRows   = 2048
	blockRows   = 64
)

// updateW sets W ← max(0, W + step·(P − W·G)), clearing c.p and
// c.touched, and carries Q = WᵀW to the new W (nextGram). The rows are
// updated in chunks of chunkRows by up to c.workers goroutines.
func (c *client) updateW(w []float64, step float64) {
	v, k := c.a.V, c.k
	nc := (v + chunkRows - 1) / chunkRows
	for len(c.chunks) < nc {
		c.chunks = append(c.chunks, newChunkWork(k))
	}
	work := func(i int) {
		lo, hi := i*chunkRows, min((i+1)*chunkRows, v)
		c.chunks[i].update(w[lo*k:hi*k], c.p[lo*k:hi*k], c.touched[lo:hi], c.g, k, step, c.qValid)
	}
	if nw := min(c.workers, nc); nw > 1 {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range nw {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < nc; i = int(next.Add(1)) - 1 {
					work(i)
				}
			})
		}
		wg.Wait()
	} else {
		for i := range nc {
			work(i)
		}
	}
	c.nextGram(step, nc)
}

// nextGram sets c.q to the Gram matrix WᵀW of the W updateW just wrote,
// from the old one without a pass over W. With M = I − step·G, the row
// w of W becomes u = w·M + step·p before the projection f = max(0, u)
// (p = 0 outside the batch's words), so
//
//	Σ uᵀu = M·Q·M + Σ_touched (uᵀu − (w·M)ᵀ(w·M))
//	Σ fᵀf = Σ uᵀu − Σ (f·nᵀ + n·fᵀ + n·nᵀ)   with n = min(u, 0),
//
// since f and n have disjoint supports. The chunks gathered the two sums
// over rows (in fixed chunk order, so the result does not depend on the
// number of workers); the corrections cost K multiplications per clipped
// entry. Where more than a quarter of W's entries were clipped, a fresh
// WᵀW is cheaper, and the next step computes it (c.qValid = false).
// Rounding drifts Q away from WᵀW by about one unit in the last place per
// step (1.7e-14 of its largest entry after 360 steps on the demo glosses,
// K = 50); epochs starts every call from a fresh WᵀW, and step computes one
// every refreshGram steps, which bounds the drift at a cost of V·K²/64
// multiplications a step.
func (c *client) nextGram(step float64, nc int) {
	if !c.qValid {
		return
	}
	k := c.k
	var clipped int
	for _, ch := range c.chunks[:nc] {
		clipped += ch.clipped
	}
	if clipped > c.a.V*k/4 {
		c.qValid = false
		return
	}
	m, tmp := c.m, c.tmp
	for i := range m {
		m[i] = -step * c.g[i]
	}
	for t := range k {
		m[t*k+t]++
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, general(k, k, c.q), general(k, k, m), 0, general(k, k, tmp))
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, general(k, k, m), general(k, k, tmp), 0, general(k, k, c.q))
	for _, ch := range c.chunks[:nc] {
		for i, x := range ch.corr {
			c.q[i] += x
		}
	}
	// Q is symmetric; keep it exactly so.
	for t := range k {
		for u := range t {
			x := (c.q[t*k+u] + c.q[u*k+t]) / 2
			c.q[t*k+u], c.q[u*k+t] = x, x
		}
	}
}

// chunkWork is one chunk's buffers in updateW and its share of the
// correction of Q (nextGram).
type chunkWork struct {
	avx2    bool      // the pass runs through the AVX2 kernels (gemm.go)
	blk     []float64 // blockRows×K: rows of W·M, then before the projection
	pad     []float64 // 8·K: stepRows's scratch
	wm      []float64 // K: a touched row of W·M
	neg     []int     // the clipped entries of a row
	rowNeg  []int32   // blockRows: how many entries of each row were clipped
	corr    []float64 // K×K
	clipped int
}

func newChunkWork(k int) *chunkWork {
	return &chunkWork{avx2: gemmKernelAVX2, blk: make([]float64, blockRows*k), pad: make([]float64, 8*k),
		wm: make([]float64, k), neg: make([]int, 0, k), rowNeg: make([]int32, blockRows), corr: make([]float64, k*k)}
}

// update updates the rows w (n×K) of W with their rows p of P and
// touched flags, clears those, and gathers the correction of Q when gram
// is set. Block by block, the rows u of W·M = W − step·W·G (stepRows),
// plus step·p in the touched rows, are projected onto W ≥ 0 (project),
// and the correction follows from u, W·M and the projected rows.
func (ch *chunkWork) update(w, p []float64, touched []bool, g []float64, k int, step float64, gram bool) {
	n := len(touched)
	clear(ch.corr)
	ch.clipped = 0
	wm, corr := ch.wm, ch.corr
	for r0 := 0; r0 < n; r0 += blockRows {
		nb := min(blockRows, n-r0)
		wb, blk := w[r0*k:(r0+nb)*k], ch.blk[:nb*k]
		stepRows(ch.avx2, wb, g, blk, k, step, ch.pad)
		for r := range nb {
			i := r0 + r
			if !touched[i] {
				continue
			}
			u, pi := blk[r*k:(r+1)*k], p[i*k:(i+1)*k]
			if gram {
				copy(wm, u)
			}
			for t, x := range pi {
				u[t] += step * x
			}
			clear(pi)
			touched[i] = false
			if gram {
				// uᵀu − (w·M)ᵀ(w·M), on and above the diagonal.
				rank2(ch.avx2, corr, u, wm)
			}
		}
		rowNeg := ch.rowNeg[:nb]
		clipped := project(ch.avx2, wb, blk, k, rowNeg)
		if clipped == 0 || !gram {
			continue
		}
		ch.clipped += clipped
		for r, nr := range rowNeg {
			if nr == 0 {
				continue
			}
			u, wi := blk[r*k:(r+1)*k], wb[r*k:(r+1)*k]
			neg := ch.neg[:0]
			for t, x := range u {
				if x < 0 {
					neg = append(neg, t)
				}
			}
			// −(f·nᵀ + n·fᵀ + n·nᵀ), on and above the diagonal.
			for _, t := range neg {
				nt := u[t]
				for s := range k {
					switch {
					case s > t:
						corr[t*k+s] -= nt * wi[s]
					case s < t:
						corr[s*k+t] -= nt * wi[s]
					}
				}
				for _, s := range neg {
					if s >= t {
						corr[t*k+s] -= nt * u[s]
					}
				}
			}
		}
	}
	if !gram {
		return
	}
	for t := range k {
		for s := range t {
			corr[t*k+s] = corr[s*k+t]
		}
	}
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
