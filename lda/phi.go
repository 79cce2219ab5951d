package lda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// phiBlock is the number of words per block of the Dirichlet draw of Φ; each
// block draws from its own stream, so the draw is parallel and the same for
// any number of workers.
const phiBlock = 256

// Phi is the topic-word matrix Φ of one iteration in the form the samplers
// read it: word-major (the column φ_{·,w} of a word is contiguous) in
// float32, with a Walker alias table per proposal word for the word
// proposal q_w(k) = φ_kw / Σ_j φ_jw, and the log of every entry when a
// Target needs it. It is read-only during a sweep.
type Phi struct {
	K, V int

	col     []float32    // col[w*K+k] = φ_kw
	tab     []aliasEntry // tab[w*K:(w+1)*K] is the word proposal of w, for proposal words
	invZ    []float64    // 1/Σ_k φ_kw for proposal words; 0 when the column is all zero
	logRow  []float32    // logRow[k*V+w] = log φ_kw, when needLog
	lemK    uint32       // Lemire bound for K
	propose []bool       // which words need a word-proposal table
	needLog bool

	// Scratch of the Dirichlet draw: partial sums and maxima per word block
	// and topic.
	blockSum, blockMax []float64
}

// newPhi allocates Φ for k topics over v words; propose marks the words
// whose alias tables the sampler needs.
func newPhi(k, v int, propose []bool, needLog bool) *Phi {
	nb := (v + phiBlock - 1) / phiBlock
	p := &Phi{
		K: k, V: v,
		col:      make([]float32, k*v),
		tab:      make([]aliasEntry, k*v),
		invZ:     make([]float64, v),
		lemK:     lemireBound(k),
		propose:  propose,
		needLog:  needLog,
		blockSum: make([]float64, nb*k),
		blockMax: make([]float64, nb*k),
	}
	if needLog {
		p.logRow = make([]float32, k*v)
	}
	return p
}

// At returns φ_kw.
func (p *Phi) At(k, w int) float64 { return float64(p.col[w*p.K+k]) }

// Column returns φ_{·,w}, the K topic probabilities of word w (a view).
func (p *Phi) Column(w int) []float32 { return p.col[w*p.K : (w+1)*p.K] }

// LogRow returns log φ_{k,·} as a view of V entries (−Inf where φ_kw is 0).
// It is available to Targets; it panics when Φ was built without logs.
func (p *Phi) LogRow(k int) []float32 {
	if p.logRow == nil {
		panic("lda: Phi.LogRow: logs were not computed for this sampler")
	}
	return p.logRow[k*p.V : (k+1)*p.V]
}

// proposalProb returns q_w(k) = φ_kw/Σ_j φ_jw (1/K for an all-zero column,
// whose table is uniform).
func (p *Phi) proposalProb(w, k int) float64 {
	if z := p.invZ[w]; z > 0 {
		return float64(p.col[w*p.K+k]) * z
	}
	return 1 / float64(p.K)
}

// phiWorker is the per-goroutine scratch of the Φ draw and finish.
type phiWorker struct {
	src   *rand.ChaCha8
	r     *rand.Rand
	g     []float64 // phiBlock×K gamma draws of the current block
	fac   []float64 // K normalising factors of the current block
	alias aliasBuilder
}

func newPhiWorker(k int) *phiWorker {
	src := rand.NewChaCha8([32]byte{})
	return &phiWorker{src: src, r: rand.New(src), g: make([]float64, phiBlock*k), fac: make([]float64, k)}
}

// count is the element type of a topic-word count matrix.
type count interface{ ~int32 | ~float64 }

// drawPhi draws φ_k ~ Dirichlet(C_k· + β) for every topic k from the
// word-major counts c (c[w*K+k] = C_kw) by normalising independent gamma
// draws, zeroes c for the next sweep's counts, and rebuilds the alias tables
// (and logs). Word block b draws from rng.Key(seed, "lda", "phi", iter, b)
// in the order w, then k; partial sums merge in block order, so the result
// does not depend on the number of workers.
func drawPhi[T count](ctx context.Context, p *Phi, c []T, beta float64, seed uint64, iter int, workers []*phiWorker) error {
	k, v := p.K, p.V
	nb := (v + phiBlock - 1) / phiBlock
	small := newGammaSmall(beta)
	err := parallel(ctx, len(workers), nb, func(wi, b int) {
		pw := workers[wi]
		pw.src.Seed(rng.Key(seed, "lda", "phi", iter, b))
		w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
		g := pw.g[:(w1-w0)*k]
		sum := p.blockSum[b*k : (b+1)*k]
		mx := p.blockMax[b*k : (b+1)*k]
		clear(sum)
		clear(mx)
		cb := c[w0*k : w1*k]
		for o := 0; o < len(cb); o += k {
			cw, gw := cb[o:o+k], g[o:o+k]
			sum, mx := sum[:len(cw)], mx[:len(cw)]
			for t, n := range cw {
				var x float64
				if n == 0 {
					x = small.draw(pw.r)
				} else if a := float64(n) + beta; a >= 1 {
					x = gammaMT(pw.r, a)
				} else {
					x = newGammaSmall(a).draw(pw.r)
				}
				gw[t] = x
				sum[t] += x
				mx[t] = max(mx[t], x)
			}
		}
		clear(cb)
		// Store each entry relative to its topic's largest value in the
		// block so float32 keeps every entry that can survive the final
		// normalisation; the second pass applies max/S_k.
		fac := pw.fac
		for t, m := range mx {
			fac[t] = 0
			if m > 0 {
				fac[t] = 1 / m
			}
		}
		col := p.col[w0*k : w1*k]
		for o := 0; o < len(g); o += k {
			cw, gw := col[o:o+k], g[o:o+k]
			fac := fac[:len(gw)]
			for t, x := range gw {
				cw[t] = float32(x * fac[t])
			}
		}
	})
	if err != nil {
		return err
	}
	total := make([]float64, k)
	for b := 0; b < nb; b++ {
		for t, s := range p.blockSum[b*k : (b+1)*k] {
			total[t] += s
		}
	}
	for t, s := range total {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("lda: iteration %d: Dirichlet draw of topic %d has sum %v", iter, t, s)
		}
	}
	return parallel(ctx, len(workers), nb, func(wi, b int) {
		pw := workers[wi]
		w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
		mx := p.blockMax[b*k : (b+1)*k]
		for t := range pw.fac {
			pw.fac[t] = mx[t] / total[t]
		}
		for w := w0; w < w1; w++ {
			col := p.col[w*k : (w+1)*k]
			for t := range col {
				col[t] = float32(float64(col[t]) * pw.fac[t])
			}
		}
		p.finishBlock(pw, w0, w1)
	})
}

// finishBlock builds the alias tables, column normalisers and logs of the
// words [w0, w1) from p.col.
func (p *Phi) finishBlock(pw *phiWorker, w0, w1 int) {
	k, v := p.K, p.V
	for w := w0; w < w1; w++ {
		col := p.col[w*k : (w+1)*k]
		if p.needLog {
			for t, x := range col {
				p.logRow[t*v+w] = float32(math.Log(float64(x)))
			}
		}
		if !p.propose[w] {
			continue
		}
		var z float64
		for _, x := range col {
			z += float64(x)
		}
		tab := p.tab[w*k : (w+1)*k]
		if z > 0 {
			p.invZ[w] = 1 / z
			pw.alias.build32(tab, col, z)
		} else {
			p.invZ[w] = 0
			for t := range tab {
				tab[t] = aliasEntry{thresh: math.MaxUint32, alias: uint32(t)}
			}
		}
	}
}

// set replaces Φ by phi (K×V row-major, rows summing to 1) and rebuilds the
// tables.
func (p *Phi) set(ctx context.Context, phi []float64, workers []*phiWorker) error {
	k, v := p.K, p.V
	for t := 0; t < k; t++ {
		for w := 0; w < v; w++ {
			p.col[w*k+t] = float32(phi[t*v+w])
		}
	}
	nb := (v + phiBlock - 1) / phiBlock
	return parallel(ctx, len(workers), nb, func(wi, b int) {
		p.finishBlock(workers[wi], b*phiBlock, min(v, (b+1)*phiBlock))
	})
}
