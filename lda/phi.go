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

// proposalCut is the relative size below which a topic is left out of a
// word's proposal table: topic k is proposed for word w only when
// φ_kw ≥ proposalCut · max_j φ_jw. The left-out topics hold a negligible
// share of the column, and leaving them out makes the tables sparse (with
// β = 0.01 about 5% of the topics where the word has no count reach the
// cut), so building them costs far less than O(K) per word. The acceptance
// ratios use the truncated proposal exactly.
const proposalCut = 1e-3

// minNormal32 is the smallest normal float32. Entries of Φ below it are
// stored as 0: their topics can never be accepted for the word next to any
// topic that holds one of its tokens, and float32 subnormals would slow
// every operation that touches them.
const minNormal32 = 0x1p-126

// Phi is the topic-word matrix Φ of one iteration in the form the samplers
// read it: word-major (the column φ_{·,w} of a word is contiguous) in
// float32, with a sparse Walker alias table per proposal word for the word
// proposal q_w(k) ∝ φ_kw·[φ_kw ≥ cut_w], and the log of every entry when a
// Target needs it. It is read-only during a sweep.
type Phi struct {
	K, V int

	col     []float32       // col[w*K+k] = φ_kw
	words   []wordTable     // proposal table of each proposal word
	sparse  [][]sparseEntry // alias slots, one slice per block of phiBlock words
	invMass []float64       // 1/Σ_{k in table} φ_kw per proposal word; < 0 marks a uniform table
	logRow  []float32       // logRow[k*V+w] = log φ_kw, when needLog
	propose []bool          // which words need a proposal table
	needLog bool

	// Scratch of the Dirichlet draw: partial sums per word block and topic.
	blockSum []float64
}

// wordTable locates the proposal table of one word: the slots
// sparse[w/phiBlock][off:off+n].
type wordTable struct {
	off, n uint32
	lemK   uint32  // Lemire bound for n
	cut    float32 // topics with φ_kw ≥ cut (and > 0) are in the table
}

// newPhi allocates Φ for k topics over v words; propose marks the words
// whose proposal tables the sampler needs.
func newPhi(k, v int, propose []bool, needLog bool) *Phi {
	nb := (v + phiBlock - 1) / phiBlock
	p := &Phi{
		K: k, V: v,
		col:      make([]float32, k*v),
		words:    make([]wordTable, v),
		sparse:   make([][]sparseEntry, nb),
		invMass:  make([]float64, v),
		propose:  propose,
		needLog:  needLog,
		blockSum: make([]float64, nb*k),
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

// proposalProb returns q_w(k), the probability that w's proposal table
// yields topic k.
func (p *Phi) proposalProb(w, k int) float64 {
	if p.invMass[w] < 0 {
		return 1 / float64(p.K)
	}
	x := p.col[w*p.K+k]
	if x >= p.words[w].cut && x > 0 {
		return float64(x) * p.invMass[w]
	}
	return 0
}

// drawWord draws a topic from w's proposal table with one 64-bit word x:
// the high half picks a slot (Lemire's method; ok is false when x must be
// rejected), the low half is the coin.
func (p *Phi) drawWord(w int, x uint64) (int, bool) {
	wt := p.words[w]
	m := (x >> 32) * uint64(wt.n)
	if uint32(m) < wt.lemK {
		return 0, false
	}
	e := p.sparse[w/phiBlock][wt.off+uint32(m>>32)]
	if uint32(x) < e.thresh {
		return int(e.topic), true
	}
	return int(e.alias), true
}

// phiWorker is the per-goroutine scratch of the Φ draw and finish.
type phiWorker struct {
	src     *rand.ChaCha8
	r       *rand.Rand // src, for the normal variates of gammaMT
	alias   aliasBuilder
	topics  []uint16  // topics of the table being built
	weights []float64 // their weights
}

func newPhiWorker() *phiWorker {
	src := rand.NewChaCha8([32]byte{})
	return &phiWorker{src: src, r: rand.New(src)}
}

// count is the element type of a topic-word count matrix.
type count interface{ ~int32 | ~float64 }

// phiScale scales the raw gamma draws into float32 before normalisation:
// a draw g is held as g·2⁶⁴, so every draw that can survive the final
// division by its topic's sum S_k ≥ 2⁻⁶⁴ as a normal float32 is
// representable, and no draw (at most a count plus a few) overflows.
const phiScale = 0x1p64

// drawPhi draws φ_k ~ Dirichlet(C_k· + β) for every topic k from the
// word-major counts c (c[w*K+k] = C_kw) by normalising independent gamma
// draws, zeroes c for the next sweep's counts, and rebuilds the proposal
// tables (and logs). Word block b draws from rng.Key(seed, "lda", "phi",
// iter, b) in the order w, then k; partial sums merge in block order, so the
// result does not depend on the number of workers. A topic whose sum S_k
// falls below 2⁻⁶⁴ (which takes V·β far below 1) would lose entries that its
// normalisation could have lifted into float32's range; drawPhi reports it
// as an error rather than return such a row.
func drawPhi[T count](ctx context.Context, p *Phi, c []T, beta float64, seed uint64, iter int, workers []*phiWorker) error {
	k, v := p.K, p.V
	nb := (v + phiBlock - 1) / phiBlock
	small := newGammaSmall(beta)
	err := parallel(ctx, len(workers), nb, func(wi, b int) {
		pw := workers[wi]
		src := pw.src
		src.Seed(rng.Key(seed, "lda", "phi", iter, b))
		w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
		sum := p.blockSum[b*k : (b+1)*k]
		clear(sum)
		cb := c[w0*k : w1*k]
		col := p.col[w0*k : w1*k]
		for o := 0; o < len(cb); o += k {
			cw, pc := cb[o:o+k], col[o:o+k]
			sum, pc := sum[:len(cw)], pc[:len(cw)]
			for t, n := range cw {
				var x float64
				if n == 0 {
					// gammaSmall.from with its common case inline.
					q := small.b * unit(src.Uint64())
					if q < small.pZero {
						// x = q^(1/β) < 2⁻¹⁹⁰: stored as 0 below, and
						// too small to move S_k ≥ 2⁻⁶⁴ by a float64 ulp.
						x = 0
					} else if q <= 1 && small.pow > 0 {
						x = powInt(q, small.pow)
						if x >= 0x1p-53 {
							if u := unit(src.Uint64()); !(u <= 1-x) && !(u <= math.Exp(-x)) {
								x = small.drawSrc(src) // rejected: start over
							}
						}
					} else {
						x = small.from(q, src)
					}
				} else if a := float64(n) + beta; a >= 1 {
					x = gammaMT(pw.r, a)
				} else {
					x = newGammaSmall(a).drawSrc(src)
				}
				sum[t] += x
				// Flush what would be a float32 subnormal: the final value
				// (this divided by S_k·2⁶⁴ ≥ 1) would be flushed anyway.
				y := x * phiScale
				if y < minNormal32 {
					y = 0
				}
				pc[t] = float32(y)
			}
		}
		clear(cb)
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
	fac := make([]float64, k)
	for t, s := range total {
		if !(s >= 1/phiScale) || math.IsInf(s, 0) {
			return fmt.Errorf("lda: iteration %d: Dirichlet draw of topic %d has sum %v (is β·V far below 1?)", iter, t, s)
		}
		fac[t] = 1 / (s * phiScale)
	}
	return parallel(ctx, len(workers), nb, func(wi, b int) {
		p.finishBlock(workers[wi], b, fac)
	})
}

// finishBlock scales the columns of word block b by fac (nil: leave them),
// flushes subnormals to zero, and builds the proposal tables, masses and
// logs of its words.
func (p *Phi) finishBlock(pw *phiWorker, b int, fac []float64) {
	k, v := p.K, p.V
	w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
	sp := p.sparse[b][:0]
	for w := w0; w < w1; w++ {
		col := p.col[w*k : (w+1)*k]
		var top float32
		if fac != nil {
			fac := fac[:len(col)]
			for t, x := range col {
				y := float64(x) * fac[t]
				if y < minNormal32 {
					y = 0
				}
				col[t] = float32(y)
				if float32(y) > top {
					top = float32(y)
				}
			}
		} else {
			for t, x := range col {
				if x < minNormal32 {
					x = 0
					col[t] = 0
				}
				if x > top {
					top = x
				}
			}
		}
		if p.needLog {
			for t, x := range col {
				p.logRow[t*v+w] = float32(math.Log(float64(x)))
			}
		}
		if !p.propose[w] {
			continue
		}
		cut := float32(float64(top) * proposalCut)
		topics, weights := pw.topics[:0], pw.weights[:0]
		var mass float64
		for t, x := range col {
			if x >= cut && x > 0 {
				topics = append(topics, uint16(t))
				weights = append(weights, float64(x))
				mass += float64(x)
			}
		}
		if mass == 0 {
			// An all-zero column (out of reach of a Dirichlet draw in
			// practice): the target is 0 for every topic, so any proposal
			// will do; propose uniformly and mark it with invMass < 0.
			topics, weights = topics[:0], weights[:0]
			for t := range k {
				topics = append(topics, uint16(t))
				weights = append(weights, 1)
			}
			mass = -float64(k)
		}
		pw.topics, pw.weights = topics, weights
		off := len(sp)
		sp = pw.alias.buildSparse(sp, topics, weights, math.Abs(mass))
		p.words[w] = wordTable{off: uint32(off), n: uint32(len(topics)), lemK: lemireBound(len(topics)), cut: cut}
		p.invMass[w] = 1 / mass
	}
	p.sparse[b] = sp
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
		p.finishBlock(workers[wi], b, nil)
	})
}
