package lda

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"unsafe"

	"github.com/fedtopic/fedtopic/internal/alias"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/hugepage"
	"github.com/fedtopic/fedtopic/internal/parallel"
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

// flushBits returns the bits of y ≥ 0, or 0 when y is below minNormal32.
// Non-negative floats order like their bits.
func flushBits(y float64) uint64 {
	b := math.Float64bits(y)
	if b < math.Float64bits(minNormal32) {
		b = 0
	}
	return b
}

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

	// Scratch of the Dirichlet draw: partial sums per word block and topic,
	// one row of K per block (blockSums), each followed by a gap: workers
	// drawing neighbouring blocks must not write the same cache line.
	blockSum []float64
}

// blockSums returns the partial sums of word block b.
func (p *Phi) blockSums(b int) []float64 {
	s := p.K + sumGap
	return p.blockSum[b*s : b*s+p.K]
}

// sumGap is the gap, in float64s, after each block's row of partial sums.
const sumGap = parallel.CacheGap / 8

// wordTable locates the proposal table of one word: the slots
// sparse[w/phiBlock][off:off+n].
type wordTable struct {
	off, n uint32
	lemK   uint32  // Lemire bound for n
	cut    float32 // topics with φ_kw ≥ cut (and > 0) are in the table

	// The masses of the column in and out of the table, which the exact
	// draw reads with the header (one cache line for the three). The
	// burn-in's tables (prepareCollapsed) hold in mass their word part's
	// Σ_k G⁰_kw/(G⁰_k + Vβ) and leave rest and cut zero.
	mass float64 // Σ_{k in table} φ_kw (0 for a uniform table)
	rest float64 // Σ_{k not in table} φ_kw, in the order of exactDoc's scan
}

// newPhi allocates Φ for k topics over v words; propose marks the words
// whose proposal tables the sampler needs.
func newPhi(k, v int, propose []bool, needLog bool) *Phi {
	nb := (v + phiBlock - 1) / phiBlock
	p := &Phi{
		K: k, V: v,
		col:      hugepage.Make[float32](k * v),
		words:    make([]wordTable, v),
		sparse:   make([][]sparseEntry, nb),
		invMass:  make([]float64, v),
		propose:  propose,
		needLog:  needLog,
		blockSum: make([]float64, nb*(k+sumGap)),
	}
	if needLog {
		p.logRow = hugepage.Make[float32](k * v)
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

// tableLines returns the first, middle and last slots of w's proposal table
// (its header, when it has none), to prefetch: all of a table of up to 16
// slots.
func (p *Phi) tableLines(w int) (a, b, c unsafe.Pointer) {
	wt := p.words[w]
	if wt.n == 0 {
		h := unsafe.Pointer(&p.words[w])
		return h, h, h
	}
	s := p.sparse[w/phiBlock][wt.off : wt.off+wt.n]
	return unsafe.Pointer(&s[0]), unsafe.Pointer(&s[len(s)/2]), unsafe.Pointer(&s[len(s)-1])
}

// maxWholeColumn is the size in bytes (ten cache lines) up to which
// columnSpan takes a whole column.
const maxWholeColumn = 640

// columnSpan returns the part of a word's column of K counts or
// probabilities to prefetch for a token at topic t: all of it when it spans
// at most maxWholeColumn bytes, else the entry at t.
func columnSpan[T int32 | uint16 | float32](col []T, t int) (unsafe.Pointer, uintptr) {
	if n := uintptr(len(col)) * unsafe.Sizeof(col[0]); n <= maxWholeColumn {
		return unsafe.Pointer(&col[0]), n
	}
	return unsafe.Pointer(&col[t]), 1
}

// phiWorker is the per-goroutine scratch of the Φ draw and finish.
type phiWorker struct {
	src     *chacha8.Stream
	r       *rand.Rand // src, for the normal variates of gammaMT
	alias   aliasBuilder
	topics  []uint16  // topics of the table being built
	weights []float64 // their weights
	cnt     []int32   // scratch of K zeros, for counts (see counts)
	words   []uint64  // a column's words of the stream (see drawBlock)
	slow    []uint64  // bit set of the column's entries zeroLanes left
	_       [parallel.CacheGap]byte
}

func newPhiWorker() *phiWorker {
	src := chacha8.New([32]byte{})
	return &phiWorker{src: src, r: rand.New(src)}
}

// laneScratch returns room for a column's K words of the stream and for
// the bit set of its slow entries.
func (pw *phiWorker) laneScratch(k int) (words, slow []uint64) {
	if len(pw.words) != k {
		pw.words, pw.slow = make([]uint64, k), make([]uint64, (k+63)/64)
	}
	return pw.words, pw.slow
}

// counts returns k counters, all 0; the caller must leave them 0.
func (pw *phiWorker) counts(k int) []int32 {
	if len(pw.cnt) != k {
		pw.cnt = make([]int32, k)
	}
	return pw.cnt
}

// count is the element type of a topic-word count matrix.
type count interface{ ~int32 | ~float64 }

// phiScale scales the raw gamma draws into float32 before normalisation:
// a draw g is held as g·2⁶⁴, so for every topic whose sum S_k is at least
// 2⁻⁶⁴ each draw that can survive the final division by S_k as a normal
// float32 is representable, and no draw (at most a count plus a few)
// overflows. Topics with a smaller sum (an empty topic when V·β is well
// below 1) are drawn again, identically, in log space.
const phiScale = 0x1p64

// Passes of drawBlock over the same random stream.
const (
	passFast  = iota // store g·phiScale and the block's sums
	passMax          // largest log g of each exact topic
	passSum          // Σ exp(log g − max) of each exact topic
	passStore        // store the final values of the exact topics
)

// drawPhi draws φ_k ~ Dirichlet(C_k· + β) for every topic k from the
// word-major counts c (c[w*K+k] = C_kw) by normalising independent gamma
// draws, zeroes c for the next sweep's counts, and rebuilds the proposal
// tables (and logs). Word block b draws from rng.Key(seed, "lda", "phi",
// iter, b) in the order w, then k; partial sums merge in block order, so the
// result does not depend on the number of workers.
func drawPhi[T count](ctx context.Context, p *Phi, c []T, beta float64, seed uint64, iter int, workers []*phiWorker) error {
	return drawPhiKeep(ctx, p, c, beta, seed, iter, workers, false)
}

// drawPhiKeep is drawPhi that leaves the counts c as they are when keep is
// set, for a caller that rewrites every entry before it counts again.
func drawPhiKeep[T count](ctx context.Context, p *Phi, c []T, beta float64, seed uint64, iter int, workers []*phiWorker, keep bool) error {
	k, v := p.K, p.V
	nb := (v + phiBlock - 1) / phiBlock
	small := newGammaSmall(beta)
	pass := func(mode int, exact []bool, shift []float64) error {
		return parallel.Blocks(ctx, len(workers), nb, func(wi, b int) {
			drawBlock(p, c, b, small, beta, workers[wi], seed, iter, mode, exact, shift)
		})
	}
	// merge adds the blocks' partial results per topic in block order.
	merge := func(f func(acc, x float64) float64, init float64) []float64 {
		total := make([]float64, k)
		for t := range total {
			total[t] = init
		}
		for b := 0; b < nb; b++ {
			for t, x := range p.blockSums(b) {
				total[t] = f(total[t], x)
			}
		}
		return total
	}
	add := func(a, x float64) float64 { return a + x }
	if err := pass(passFast, nil, nil); err != nil {
		return err
	}
	total := merge(add, 0)
	fac := make([]float64, k)
	var exact []bool
	for t, s := range total {
		fac[t] = 1 / (s * phiScale)
		if !(s >= 1/phiScale) {
			if exact == nil {
				exact = make([]bool, k)
			}
			exact[t], fac[t] = true, 1
		}
	}
	if exact != nil {
		if err := pass(passMax, exact, nil); err != nil {
			return err
		}
		top := merge(math.Max, math.Inf(-1))
		if err := pass(passSum, exact, top); err != nil {
			return err
		}
		sum := merge(add, 0)
		for t, e := range exact {
			if e {
				top[t] += math.Log(sum[t]) // log S_k
			}
		}
		if err := pass(passStore, exact, top); err != nil {
			return err
		}
	}
	return parallel.Blocks(ctx, len(workers), nb, func(wi, b int) {
		if !keep {
			clear(c[b*phiBlock*k : min(v, (b+1)*phiBlock)*k])
		}
		p.finishBlock(workers[wi], b, fac)
	})
}

// drawBlock draws the gamma variates g of word block b and, by mode, stores
// g·phiScale with the block's sums (passFast), or for the topics marked
// exact the block's largest log g (passMax), its Σ exp(log g − shift_k)
// (passSum), or the final value exp(log g − shift_k) with shift_k = log S_k
// (passStore). Every pass draws the same variates from the same stream.
//
// When β = 1/pow for an integer pow (gammaSmall.lane), each column (word)
// first reads K words of the stream, one per topic: an entry with no count
// whose word decides its draw alone — all but about 1% of them at β = 0.01
// — is drawn from it (zeroLanes, eight at a time where the machine can).
// The other entries are then drawn in topic order from the words that
// follow: a zero-count entry finishes its draw from its word, an entry
// with a count ignores its word and draws Gamma(C_kw + β) afresh.
func drawBlock[T count](p *Phi, c []T, b int, small gammaSmall, beta float64, pw *phiWorker, seed uint64, iter int, mode int, exact []bool, shift []float64) {
	k, v := p.K, p.V
	src := pw.src
	src.Seed(rng.Key(seed, "lda", "phi", iter, b))
	w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
	acc := p.blockSums(b)
	for t := range acc {
		acc[t] = 0
		if mode == passMax {
			acc[t] = math.Inf(-1)
		}
	}
	lanes := small.pow > 0
	words, slow := pw.laneScratch(k)
	// put records the draw x (with log lx, needed only for exact topics)
	// of topic t in column pc by the pass's mode.
	put := func(pc []float32, t int, x, lx float64) {
		switch {
		case mode == passFast:
			acc[t] += x
			// Flush what would be a float32 subnormal: the final value
			// (this divided by S_k·2⁶⁴ ≥ 1) would be flushed anyway.
			pc[t] = float32(math.Float64frombits(flushBits(x * phiScale)))
		case !exact[t]:
		case mode == passMax:
			acc[t] = math.Max(acc[t], lx)
		case mode == passSum:
			acc[t] += math.Exp(lx - shift[t])
		default:
			pc[t] = float32(math.Float64frombits(flushBits(math.Exp(lx - shift[t]))))
		}
	}
	cb := c[w0*k : w1*k]
	col := p.col[w0*k : w1*k]
	for o := 0; o < len(cb); o += k {
		cw, pc := cb[o:o+k], col[o:o+k]
		if !lanes {
			for t, n := range cw {
				x, lx := drawEntry(n, small, beta, pw, mode == passFast || !exact[t])
				put(pc, t, x, lx)
			}
			continue
		}
		src.Fill(words)
		if mode == passFast {
			zeroLanes(small, words, cw, pc, acc, slow)
		} else {
			clear(slow)
			for t, n := range cw {
				if x, ok := small.lane(words[t]); n == 0 && ok {
					if exact[t] {
						put(pc, t, x, small.laneLog(words[t]))
					}
				} else {
					slow[t>>6] |= 1 << (t & 63)
				}
			}
		}
		for j, m := range slow {
			for ; m != 0; m &= m - 1 {
				t := j<<6 + bits.TrailingZeros64(m)
				fast := mode == passFast || !exact[t]
				var x, lx float64
				if n := cw[t]; n == 0 {
					x, lx = small.finish(words[t], src, !fast)
				} else {
					x, lx = drawEntry(n, small, beta, pw, fast)
				}
				put(pc, t, x, lx)
			}
		}
	}
}

// drawEntry draws Gamma(n + β) from pw's stream and its logarithm, which
// it computes only when fast is false (passFast and non-exact topics need
// no logarithm).
func drawEntry[T count](n T, small gammaSmall, beta float64, pw *phiWorker, fast bool) (x, lx float64) {
	if n == 0 {
		return small.from(small.b*unit(pw.src.Uint64()), pw.src, !fast)
	}
	a := float64(n) + beta
	if a < 1 {
		g := newGammaSmall(a)
		return g.from(g.b*unit(pw.src.Uint64()), pw.src, !fast)
	}
	x = gammaMT(pw.r, a)
	if !fast {
		lx = math.Log(x)
	}
	return x, lx
}

// finishBlock scales the columns of word block b by fac (per topic),
// flushes subnormals to zero, and builds the proposal tables, masses and
// logs of its words.
func (p *Phi) finishBlock(pw *phiWorker, b int, fac []float64) {
	k, v := p.K, p.V
	w0, w1 := b*phiBlock, min(v, (b+1)*phiBlock)
	sp := p.sparse[b][:0]
	for w := w0; w < w1; w++ {
		col := p.col[w*k : (w+1)*k]
		fac := fac[:len(col)]
		// The largest scaled value first, on the bits of the (non-
		// negative) values: integer comparisons become conditional moves,
		// where float comparisons of random outcomes would be mispredicted
		// branches. Flushing commutes with the maximum. Where the machine
		// can, the whole groups of eight topics take the vector forms of
		// these loops (same results), and the loops run on the rest.
		done := 0
		if useLanesAVX512 && k >= 8 {
			done = k &^ 7
		}
		var topBits uint64
		if done > 0 {
			var m [8]float64
			colMaxAVX512(&col[0], &fac[0], done, &m)
			for _, x := range m {
				topBits = max(topBits, math.Float64bits(x))
			}
		}
		for t, x := range col[done:] {
			topBits = max(topBits, math.Float64bits(float64(x)*fac[done+t]))
		}
		top := float32(math.Float64frombits(flushBits(math.Float64frombits(topBits))))
		// Then scale, flush and store in one pass that also compacts the
		// topics of the proposal table, those with x ≥ cut and x > 0 (the
		// entries are 0 or normal, so x > 0 is x ≥ minNormal32), without
		// branches: every topic is written, and only those in the table
		// advance n. The entries left out (y < cut; zeros add nothing) sum
		// in eight partial sums, of the topics t with the same t%8, each
		// in topic order, then added in lane order: the order of exactDoc's
		// scan, whose total must be exactly R_w.
		cut := float32(float64(top) * proposalCut)
		in := max(cut, float32(minNormal32))
		topics := slices.Grow(pw.topics[:0], k+8)[:k+8]
		pw.topics = topics
		n := 0
		var parts [8]float64
		if done > 0 {
			n = colScaleAVX512(&col[0], &fac[0], done, in, &topics[0], &parts)
		}
		for t := done; t < k; t++ {
			y := float32(math.Float64frombits(flushBits(float64(col[t]) * fac[t])))
			col[t] = y
			topics[n] = uint16(t)
			r := y
			if y >= in {
				n++
				r = 0
			}
			parts[t&7] += float64(r)
		}
		rest := parts[0]
		for _, x := range parts[1:] {
			rest += x
		}
		if p.needLog {
			for t, x := range col {
				p.logRow[t*v+w] = float32(math.Log(float64(x)))
			}
		}
		if !p.propose[w] {
			continue
		}
		topics = topics[:n]
		weights := slices.Grow(pw.weights[:0], n)[:n]
		for i, t := range topics {
			weights[i] = float64(col[t])
		}
		var mass float64
		for _, x := range weights {
			mass += x
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
		p.words[w] = wordTable{off: uint32(off), n: uint32(len(topics)), lemK: alias.LemireBound(len(topics)), cut: cut, mass: max(mass, 0), rest: rest}
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
	ones := make([]float64, k)
	for t := range ones {
		ones[t] = 1
	}
	return parallel.Blocks(ctx, len(workers), nb, func(wi, b int) {
		p.finishBlock(workers[wi], b, ones)
	})
}
