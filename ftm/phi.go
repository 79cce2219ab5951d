package ftm

import (
	"context"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/internal/alias"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/parallel"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// phiBlock is the number of words per block of the Dirichlet draw of Φ;
// each block draws from its own stream.
const phiBlock = 256

// phi is the topic-word matrix Φ of one sweep in the forms the sampler
// reads: log φ row-major in float32 for the item likelihoods, and for every
// proposal word w its column's word proposal q_w(k) = φ_kw/Σ_j φ_jw as
// probabilities and as a Walker alias table. It is read-only during a
// sweep.
type phi struct {
	k, v   int
	logRow []float32 // log φ_kw at k*v+w; −Inf where φ_kw = 0

	slot  []int32       // slot[w] indexes the tables of proposal word w, or −1
	words []int32       // proposal words in slot order
	q     []float32     // q_w(k) at slot*k + k
	tab   []alias.Entry // alias table of slot s at s*k .. (s+1)*k
	lemK  uint32        // Lemire rejection bound for k

	// Scratch of the Dirichlet draw: per word block and topic, the sum of
	// the gamma variates; one row of k per block (blockSums), each followed
	// by a gap so that workers drawing neighbouring blocks do not write the
	// same cache line.
	blockSum []float64
}

// sumGap is the gap, in float64s, after each block's row of sums.
const sumGap = parallel.CacheGap / 8

// blockSums returns the sums of word block b.
func (p *phi) blockSums(b int) []float64 {
	s := p.k + sumGap
	return p.blockSum[b*s : b*s+p.k]
}

// newPhi allocates Φ for k topics over v words with alias tables for the
// given proposal words (each at most once, any order).
func newPhi(k, v int, proposal []int32) *phi {
	p := &phi{k: k, v: v, logRow: make([]float32, k*v), slot: make([]int32, v), lemK: alias.LemireBound(k)}
	for w := range p.slot {
		p.slot[w] = -1
	}
	for _, w := range proposal {
		if p.slot[w] < 0 {
			p.slot[w] = int32(len(p.words))
			p.words = append(p.words, w)
		}
	}
	p.q = make([]float32, len(p.words)*k)
	p.tab = make([]alias.Entry, len(p.words)*k)
	nb := (v + phiBlock - 1) / phiBlock
	p.blockSum = make([]float64, nb*(k+sumGap))
	return p
}

// proposalProb returns q_w(t) for a proposal word w.
func (p *phi) proposalProb(w int32, t int) float64 {
	return float64(p.q[int(p.slot[w])*p.k+t])
}

// mixture returns Σ_{w ∈ words} q_w(t), proportional to the probability
// that the mixture word proposal of an item with these proposal words
// draws t.
func (p *phi) mixture(words []int32, t int) float64 {
	if len(words) == 1 {
		return p.proposalProb(words[0], t)
	}
	var s float64
	for _, w := range words {
		s += p.proposalProb(w, t)
	}
	return s
}

// draw samples φ_k ~ Dirichlet(C_k· + β) for every topic, with C_kw =
// max(0, unit·c[k*v+w] − sub[k]) (sub is nil without debiasing), by
// normalizing independent gamma variates, kept as logarithms so that the
// tiny variates of small shapes do not underflow; then it rebuilds the
// proposal tables. Word block b draws from rng.Derive(seed, labels...,
// "phi", b) in the order word, then topic, and partial sums merge in block
// order, so the draw does not depend on the number of workers. A topic's
// normalizer is the plain sum of its variates, or, when that underflows
// (every shape below one and every variate tiny), the sum computed from
// their logarithms.
func (p *phi) draw(ctx context.Context, workers int, c []int64, unit float64, sub []float64, beta float64, seed uint64, labels []any) error {
	k, v := p.k, p.v
	nb := (v + phiBlock - 1) / phiBlock
	err := parallel.Blocks(ctx, workers, nb, func(_, b int) {
		r := rng.Derive(seed, append(append([]any(nil), labels...), "phi", b)...)
		w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
		sm := p.blockSums(b)
		clear(sm)
		for w := w0; w < w1; w++ {
			for t := 0; t < k; t++ {
				a := unit * float64(c[t*v+w])
				if sub != nil {
					a = math.Max(0, a-sub[t])
				}
				g, lg := gammaDraw(r, a+beta)
				p.logRow[t*v+w] = float32(lg)
				sm[t] += g
			}
		}
	})
	if err != nil {
		return err
	}
	logZ := make([]float64, k)
	for t := 0; t < k; t++ {
		var s float64
		for b := 0; b < nb; b++ {
			s += p.blockSums(b)[t]
		}
		if s > 1e-200 && !math.IsInf(s, 0) {
			logZ[t] = math.Log(s)
			continue
		}
		// Log-sum-exp over the row, in word order.
		row := p.logRow[t*v : (t+1)*v]
		m := math.Inf(-1)
		for _, x := range row {
			m = math.Max(m, float64(x))
		}
		s = 0
		for _, x := range row {
			s += math.Exp(float64(x) - m)
		}
		logZ[t] = m + math.Log(s)
		if math.IsNaN(logZ[t]) || math.IsInf(logZ[t], 0) {
			return fmt.Errorf("ftm: Dirichlet draw of topic %d has log-sum %v", t, logZ[t])
		}
	}
	return parallel.Blocks(ctx, workers, nb, func(_, b int) {
		w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
		for t := 0; t < k; t++ {
			row := p.logRow[t*v+w0 : t*v+w1]
			z := logZ[t]
			for w, x := range row {
				row[w] = float32(float64(x) - z)
			}
		}
		p.buildTables(w0, w1)
	})
}

// set replaces Φ by rows (k×v row-major, each row a distribution) and
// rebuilds the tables.
func (p *phi) set(ctx context.Context, workers int, rows []float64) error {
	k, v := p.k, p.v
	if len(rows) != k*v {
		return fmt.Errorf("ftm: model of %d entries, want %d×%d", len(rows), k, v)
	}
	nb := (v + phiBlock - 1) / phiBlock
	return parallel.Blocks(ctx, workers, nb, func(_, b int) {
		w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
		for t := 0; t < k; t++ {
			for w := w0; w < w1; w++ {
				p.logRow[t*v+w] = float32(math.Log(rows[t*v+w]))
			}
		}
		p.buildTables(w0, w1)
	})
}

// buildTables builds the word proposals of the proposal words in [w0, w1)
// from logRow: q_w(k) ∝ φ_kw, computed relative to the column's largest
// entry so that no column underflows; a column of zeros proposes uniformly.
func (p *phi) buildTables(w0, w1 int) {
	k, v := p.k, p.v
	col := make([]float64, k)
	var b alias.Builder
	for w := w0; w < w1; w++ {
		s := p.slot[w]
		if s < 0 {
			continue
		}
		m := math.Inf(-1)
		for t := 0; t < k; t++ {
			m = math.Max(m, float64(p.logRow[t*v+w]))
		}
		var z float64
		for t := 0; t < k; t++ {
			x := 1.0
			if !math.IsInf(m, -1) {
				x = math.Exp(float64(p.logRow[t*v+w]) - m)
			}
			col[t] = x
			z += x
		}
		q := p.q[int(s)*k : int(s+1)*k]
		for t, x := range col {
			col[t] = x / z
			q[t] = float32(col[t])
		}
		b.Build(p.tab[int(s)*k:int(s+1)*k], col, 1)
	}
}

// drawProposal draws a topic from the word proposal of proposal word w
// with the 64-bit words of src: the high half picks a slot uniformly
// (Lemire's method, rejecting below lemK), the low half is the coin.
func (p *phi) drawProposal(src *chacha8.Stream, w int32) int {
	k := p.k
	tab := p.tab[int(p.slot[w])*k : int(p.slot[w]+1)*k]
	for {
		if t, ok := alias.Draw(tab, p.lemK, src.Uint64()); ok {
			return t
		}
	}
}
