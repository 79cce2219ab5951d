package lda

import (
	"cmp"
	"context"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/fedtopic/fedtopic/internal/alias"
	"github.com/fedtopic/fedtopic/internal/hugepage"
	"github.com/fedtopic/fedtopic/internal/parallel"
	"github.com/fedtopic/fedtopic/internal/prefetch"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// The collapsed kernel is approximate distributed LDA (AD-LDA; Newman,
// Asuncion, Smyth and Welling, "Distributed Algorithms for Topic Models",
// JMLR 10, 2009) with the O(1) Metropolis–Hastings proposals of LightLDA
// (Yuan et al., WWW 2015) in place of O(K) Gibbs draws. Each block of
// documents plays one AD-LDA processor: it starts from the counts G it is
// given and sees its own changes D, so its tokens are drawn from the
// collapsed conditional
//
//	π(k) ∝ (C_dk^(−i) + α)·(n_kw^(−i) + β)/(n_k^(−i) + Vβ),  n = G + D,
//
// which ignores the changes of the blocks that G leaves out: that is the
// AD-LDA approximation, and the reason this kernel is not exact. The blocks
// run in waves of collapsedWave: G of a block holds the moves of every
// block of the earlier waves, so a block misses at most the changes of the
// seven blocks of its wave before it. AD-LDA proper synchronises once per
// iteration, so every block would miss the changes of the whole corpus; on
// WordNet glosses (K = 50, 58 blocks of 16,384 tokens) that left the
// collapsed log-likelihood of the state 0.069 nats per token below
// collapsed Gibbs' after 300 sweeps, and the partially collapsed chain that
// follows the burn-in had to climb out of that bias first, losing held-out
// perplexity on the way (see Config.BurnIn). It mixes far faster than the
// partially collapsed kernel from a random start (a token's own count does
// not pin it to its topic), so MH chains run it for their first
// Config.BurnIn iterations, and Config.Sampler "adlda" runs it throughout —
// the conventional distributed baseline.
//
// Proposals: LightLDA's word proposal q_w(k) ∝ (G_kw + β)/(G_k + Vβ),
// drawn as a mixture of a sparse alias table over the topics with G_kw > 0
// (weights G_kw/(G_k + Vβ)) and one table shared by all words over all topics
// (weights β/(G_k + Vβ)), both built once per iteration; and the document
// proposal of the MH kernel. Both acceptances use the exact π above and the
// exact q, so within a block the kernel leaves π invariant. Where a word's
// column of K counts is short enough to prefetch whole (K ≤ 160), long
// documents take exact draws from π instead (denseToken), and at K ≤ 64
// every document does (see denseShortK).

// collapsedWave is the number of blocks in a wave of the collapsed kernel:
// every block of a wave starts from the counts G⁰ of the iteration's start
// plus the moves of all earlier waves, so its draws ignore the other blocks
// of its wave. The workers take the blocks wave by wave (see orderWaves)
// and, before its first block of a wave, a worker takes into its view the
// moves of the wave before, each block's as soon as that block is done (see
// catchUp). Fewer blocks per wave (or smaller blocks) leave less of the
// corpus unseen by a block; more keep more workers busy. Each wave ends in
// tailBlocks short blocks (see makeWaveBlocks). Changing it changes
// the result; the number of workers does not. Waves of 16 blocks of 512
// tokens, which leave a block about as much of the corpus unseen and the
// workers half as long a block to wait for at a wave's end, were tried and
// dropped (bench/ldabench -mode quality -workers 2, K = 50, seeds 1–4,
// held-out perplexity after 300 sweeps): 4,124 on average against 4,082 on
// WordNet glosses (min-df 2), worse on every seed, and 1,018 against 1,022
// on the kernel's documentation (min-df 5). A sliding window in place of
// waves — block b seeing every block before b−3, so that no worker waits at
// a wave's end — was tried and dropped: on WordNet glosses (K = 50, min-df
// 2, 225 sweeps, seeds 1–3) its held-out perplexity was 4,193 on average
// against 4,144 with waves (bench/ldabench -samplers adlda); missing the 7
// blocks before instead of 3 gave 4,165 over seeds 1–6 against 4,142. Waves
// of blocks far apart in the corpus, so that a block's unseen neighbours
// would hold unrelated documents, were tried and dropped too (bench/ldabench
// -mode quality, K = 50, seeds 1–4, held-out perplexity after 250 sweeps of
// a 300-sweep chain): taking block i·s mod nb i-th (s ≈ nb/8) gave 1,031 on
// average against 1,036 for consecutive blocks on the kernel's documentation
// (min-df 5) but 4,157 against 4,108 on WordNet glosses (min-df 2), and
// waves j, j + nb/8, j + 2nb/8, … gave 1,040 and 4,180; single chains of the
// same setting differ by about 0.7% there, so neither order helps on both
// corpora.
const collapsedWave = 8

// collapsedState is the per-iteration state of the collapsed kernel. The
// proposal tables use the counts G⁰ of the iteration's start (m.nkw and the
// fields nk to mass); the target of block b uses the counts G_b of its
// wave's start, which its worker's view and totals hold outside the entries
// the block has changed.
type collapsedState struct {
	nk         []int32       // G⁰_k
	invNk      []float64     // 1/(G⁰_k + Vβ)
	invNkDown  []float64     // 1/(G⁰_k − 1 + Vβ), for the acceptance (see collapsedToken)
	invNkUp    []float64     // 1/(G⁰_k + 1 + Vβ)
	invAlpha   float64       // 1/α
	smooth     []alias.Entry // topic k with weight β/(G⁰_k + Vβ)
	smoothLem  uint32
	smoothMass float64 // Σ_k β/(G⁰_k + Vβ)
	// Per block: its moves, as pairs (from, to) of indices into nkw in the
	// order made; its change of the topic totals; and a channel closed when
	// both are written.
	moves    [][]int32
	deltaK   [][]int32
	done     []chan struct{}
	finished []atomic.Bool // set with done's closing, for waitBlock's spin
	// views holds every worker's view, a []*collapsedWorker[T] of the
	// kernel's count type.
	views any
	// order lists the blocks in the order the workers take them (see
	// orderWaves).
	order []int
	// viewsAt is the iteration whose start counts every worker's view
	// holds, or −1: after a whole sweep the views have taken in every move,
	// so the next iteration need not copy the counts into them.
	viewsAt int
	// replay says nkw lacks the moves of the last sweep, which the views
	// hold: prepare or settleCounts makes them.
	replay bool
}

// replayMoves makes the moves of the last sweep in nkw.
func (m *MH) replayMoves() {
	for _, mv := range m.coll.moves {
		applyMoves(m.nkw, mv, 1)
	}
	m.coll.replay = false
}

// sparseScan sets when the burn-in builds a word's proposal table from its
// tokens' topics (through the word index) instead of from its column of K
// counts: when the word has fewer than K/sparseScan tokens. Reading all K·V
// counts cost the collapsed kernel at K = 1000 (WordNet glosses,
// V = 23,150, 944,000 tokens) about a sixth of each sweep, for tables most
// of whose words have a few dozen tokens; reading the tokens instead halved
// the time of the tables (0.70 s to 0.38 s over nine sweeps, CPU profiles
// of BenchmarkCollapsed).
const sparseScan = 8

// viewCount is the type of the counts in the workers' views of the
// collapsed kernel: uint16 where every word has fewer than 1<<16 tokens and
// a word's column is too long to prefetch whole (MH.narrowViews), else
// int32. A count of a word in one topic is at most the word's number of
// tokens, so the narrow views hold the same counts and the chain makes the
// same draws. At K = 1000 the near-exact proposal reads the view at every
// topic of the document, nearly each entry on a cache line of its own; a
// column of uint16 takes half the lines, so reads at different topics
// share a few more of them (on GCIDE's entries after 100 sweeps a token's
// 10.4 document topics lay on 8.3 lines of uint16 against 9.1 of int32),
// and a view takes half the memory, so more of it stays in the caches.
// Whole 300-sweep chains at
// K = 1000 (min-df 5, one worker, alternated with int32 views) ran 1.02,
// 1.15 and 1.09 times as fast on WordNet's glosses, the kernel's
// documentation and GCIDE's entries. At K = 50, where a column is a few
// lines prefetched whole, uint16 made WordNet's chains slower (250 sweeps,
// one worker: 18.9–19.4 s against 17.1–18.1 s), so narrow views are for
// long columns only. That measurement prefetched G⁰'s column at the length
// of the view's, half of it; with each at its own length, views forced to
// uint16 still gained nothing there (300 sweeps, 2 workers: 12.2–12.9 s
// against 11.3–11.8 s, alternated), and on the kernel's documentation,
// whose long documents take denseToken, one worker ran slower even with an
// AVX-512 loop over uint16 (bench/README.md, "Narrow views at K = 50, and
// tables kept for two sweeps").
type viewCount interface{ int32 | uint16 }

// collapsedKernel is the collapsed kernel with views of counts of type T.
type collapsedKernel[T viewCount] struct{ *MH }

// copyCounts copies src into dst, converting each count.
func copyCounts[D, S viewCount](dst []D, src []S) {
	if unsafe.Sizeof(D(0)) == unsafe.Sizeof(S(0)) {
		// The same type: viewCount's types differ in size.
		copy(dst, unsafe.Slice((*D)(unsafe.Pointer(unsafe.SliceData(src))), len(src)))
		return
	}
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = D(c)
	}
}

// collapsedWorker is the per-goroutine state of the collapsed kernel: the
// view of the counts n = G_b + D of the block b being sampled, D its
// changes (word-major like nkw, in one array so a token reads one column),
// and the block's moves so far.
type collapsedWorker[T viewCount] struct {
	nkw     []T       // G_kw + D_kw
	nk      []int32   // G_k + D_k
	base    []int32   // G_k
	applied int       // the view holds the moves of blocks [0, applied)
	in      []bool    // and of the blocks b ≥ applied with in[b]
	touched []int32   // the moves: pairs (from, to) of indices into nkw
	inv     []float64 // 1/(G_k + D_k + Vβ), kept current by move
	invDown []float64 // 1/(G_k + D_k − 1 + Vβ), likewise
	_       [parallel.CacheGap]byte
}

// prepareCollapsed builds the word-proposal tables from the current counts,
// and the workers' views of them where they do not hold them yet.
func (m *MH) prepareCollapsed(ctx context.Context) error {
	if m.narrowViews {
		return collapsedKernel[uint16]{m}.prepare(ctx)
	}
	return collapsedKernel[int32]{m}.prepare(ctx)
}

// sweepCollapsed samples every token once with the collapsed kernel (see
// collapsedKernel.sweep).
func (m *MH) sweepCollapsed(ctx context.Context) error {
	if m.narrowViews {
		return collapsedKernel[uint16]{m}.sweep(ctx)
	}
	return collapsedKernel[int32]{m}.sweep(ctx)
}

// prepare builds the word-proposal tables from the current counts.
func (m collapsedKernel[T]) prepare(ctx context.Context) error {
	k, v := m.k, m.v
	cs := m.coll
	if cs == nil {
		cs = &collapsedState{
			nk: make([]int32, k), invNk: make([]float64, k), invNkDown: make([]float64, k), invNkUp: make([]float64, k), smooth: make([]alias.Entry, k), smoothLem: alias.LemireBound(k),
			viewsAt: -1, invAlpha: 1 / m.alpha,
		}
		m.coll = cs
		m.sparseArena()
		views := make([]*collapsedWorker[T], len(m.sweepers))
		for i := range views {
			views[i] = &collapsedWorker[T]{nkw: hugepage.Make[T](k * v), nk: parallel.Padded[int32](k), base: parallel.Padded[int32](k), inv: parallel.Padded[float64](k), invDown: parallel.Padded[float64](k)}
		}
		cs.views = views
	}
	views := cs.views.([]*collapsedWorker[T])
	copyViews := cs.viewsAt != m.iter
	cs.viewsAt = -1
	if copyViews {
		m.settleCounts() // the views copy nkw
		clear(cs.nk)
		for w := 0; w < v; w++ {
			for t, c := range m.nkw[w*k : (w+1)*k] {
				cs.nk[t] += c
			}
		}
	} else {
		copy(cs.nk, views[0].base) // the totals of the views, and of nkw
	}
	vb := float64(v) * m.beta
	smooth := make([]float64, k)
	cs.smoothMass = 0
	for t, n := range cs.nk {
		cs.invNk[t] = 1 / (float64(n) + vb)
		cs.invNkDown[t] = 1 / (float64(n-1) + vb)
		cs.invNkUp[t] = 1 / (float64(n+1) + vb)
		smooth[t] = m.beta * cs.invNk[t]
		cs.smoothMass += smooth[t]
	}
	var ab alias.Builder
	ab.Build(cs.smooth, smooth, cs.smoothMass)
	p := m.phi
	nb := (v + phiBlock - 1) / phiBlock
	// Task 0 makes the last sweep's moves in nkw when it left them (see
	// sweep); the word blocks read their columns from a view, which holds
	// the same counts, so the two run side by side.
	first := 0
	if cs.replay {
		first = 1
	}
	view := views[0].nkw
	return parallel.Blocks(ctx, len(m.phiWorkers), first+nb, func(wi, b int) {
		if b -= first; b < 0 {
			m.replayMoves()
			return
		}
		// Every sweeper's view starts at G⁰: copy this word block, unless
		// the last sweep left them there.
		lo, hi := b*phiBlock*k, min(v, (b+1)*phiBlock)*k
		if copyViews {
			for _, cw := range views {
				copyCounts(cw.nkw[lo:hi], m.nkw[lo:hi])
			}
		}
		if m.denseLong && m.shortLen == 0 {
			return // every token takes denseToken, which reads no table
		}
		pw := m.phiWorkers[wi]
		sp := p.sparse[b][:0]
		for w := b * phiBlock; w < min(v, (b+1)*phiBlock); w++ {
			if !p.propose[w] {
				continue
			}
			// The word's topics with a count, in increasing order, and
			// their weights G⁰_kw/(G⁰_k + Vβ): from its tokens through the
			// scratch counters when it has few, else from its column.
			topics := pw.topics[:0]
			var weights []float64
			var mass float64
			if tok := m.tokensOf(w); tok != nil && len(tok)*sparseScan < k {
				cnt := pw.counts(k)
				for _, i := range tok {
					t := m.z[i]
					if cnt[t] == 0 {
						topics = append(topics, t)
					}
					cnt[t]++
				}
				slices.Sort(topics)
				weights, mass = topicWeights(pw.weights[:0], topics, cnt, cs.invNk)
				for _, t := range topics {
					cnt[t] = 0 // the scratch counters stay zero between words
				}
			} else {
				col := view[w*k : (w+1)*k]
				for t, c := range col {
					if c > 0 {
						topics = append(topics, uint16(t))
					}
				}
				weights, mass = topicWeights(pw.weights[:0], topics, col, cs.invNk)
			}
			pw.topics, pw.weights = topics, weights
			off := len(sp)
			if mass > 0 {
				sp = pw.alias.buildSparse(sp, topics, weights, mass)
			}
			// The header holds the word part's mass Σ_k G⁰_kw/(G⁰_k + Vβ),
			// which a token reads with the header it needs anyway.
			p.words[w] = wordTable{off: uint32(off), n: uint32(len(topics)), lemK: alias.LemireBound(max(1, len(topics))), mass: mass}
		}
		p.sparse[b] = sp
	})
}

// topicWeights appends to weights cnt[t]/(G⁰_t + Vβ) for each topic t of
// topics, given the reciprocals invNk, and returns them with their sum.
func topicWeights[C viewCount](weights []float64, topics []uint16, cnt []C, invNk []float64) ([]float64, float64) {
	var mass float64
	for _, t := range topics {
		x := float64(cnt[t]) * invNk[t]
		weights = append(weights, x)
		mass += x
	}
	return weights, mass
}

// sweep samples every token once with the collapsed kernel in waves of
// collapsedWave blocks, and leaves every worker's view at the counts of the
// new topics, and the counts nkw there too or with the sweep's moves left
// to make (collapsedState.replay).
func (m collapsedKernel[T]) sweep(ctx context.Context) error {
	nb := len(m.blocks) - 1
	cs := m.coll
	views := cs.views.([]*collapsedWorker[T])
	if len(cs.done) != nb {
		cs.moves, cs.deltaK, cs.done, cs.finished = make([][]int32, nb), make([][]int32, nb), make([]chan struct{}, nb), make([]atomic.Bool, nb)
		for b := range cs.deltaK {
			cs.deltaK[b] = parallel.Padded[int32](m.k)
		}
		cs.order = m.orderWaves()
		for _, cw := range views {
			cw.in = make([]bool, nb)
		}
	}
	for b := range cs.done {
		cs.done[b] = make(chan struct{})
		cs.finished[b].Store(false)
	}
	for _, cw := range views {
		copy(cw.base, cs.nk)
		cw.applied = 0
		clear(cw.in)
	}
	if err := parallel.Blocks(ctx, len(m.sweepers), nb, func(wi, j int) {
		b := cs.order[j]
		m.catchUp(views[wi], b-b%collapsedWave)
		m.sweepBlockCollapsed(m.sweepers[wi], views[wi], b)
		cs.finished[b].Store(true)
		close(cs.done[b])
	}); err != nil {
		return err
	}
	// Every block has run: the views take in the last moves, and hold the
	// counts of the new topics, which become G⁰ of the next iteration.
	bg := context.Background()
	moves := 0
	for _, mv := range cs.moves {
		moves += len(mv) / 2
	}
	workers := len(m.sweepers)
	// With few moves for the size of the counts, G⁰ takes every move of
	// the sweep instead of a copy of a whole view. The views hold the new
	// counts too, so the moves wait for the next iteration's prepare, which
	// makes them on one worker while the others build the proposal tables
	// from a view (see settleCounts for the readers of nkw in between).
	replay := moves*moveCost < len(m.nkw)/workers
	_ = parallel.Blocks(bg, workers, workers, func(_, r int) {
		m.catchUp(views[r], nb)
	})
	cs.replay = replay
	if !replay {
		view := views[0]
		const chunk = 1 << 16
		_ = parallel.Blocks(bg, workers, (len(m.nkw)+chunk-1)/chunk, func(_, c int) {
			lo, hi := c*chunk, min(len(m.nkw), (c+1)*chunk)
			copyCounts(m.nkw[lo:hi], view.nkw[lo:hi])
		})
	}
	m.countsStale = false
	cs.viewsAt = m.iter + 1
	return nil
}

// orderWaves returns the order in which the workers take the blocks of a
// sweep: wave by wave, and within a wave the blocks of most tokens first. A
// block of a wave starts from the counts of the wave's start and sees only
// its own moves, so the blocks of a wave can run in any order and on any
// worker with the same draws; but no block of the next wave can start
// before the last of this one ends, and with the blocks in corpus order a
// worker that had finished its share waited for a long block the other
// had just taken (a block is whole documents, and one long document makes
// a long block). Longest first, the last blocks taken are the shortest (a
// wave's short tail blocks, see makeWaveBlocks), and the workers end a wave
// close together (Graham's LPT rule).
func (m *MH) orderWaves() []int {
	nb := len(m.blocks) - 1
	tokens := func(b int) int { return m.docStart[m.blocks[b+1]] - m.docStart[m.blocks[b]] }
	order := make([]int, nb)
	for b := range order {
		order[b] = b
	}
	for w := 0; w < nb; w += collapsedWave {
		slices.SortFunc(order[w:min(nb, w+collapsedWave)], func(a, b int) int {
			return cmp.Or(cmp.Compare(tokens(b), tokens(a)), cmp.Compare(a, b))
		})
	}
	return order
}

// catchUp takes into cw's view and totals the moves of the blocks before
// upto it does not hold yet, waiting for those not finished. It takes them
// in as they finish rather than in order: the moves of different blocks
// commute, so the view ends the same (a count of uint16 that goes below zero
// on the way wraps around and comes back), and at a wave's end a worker
// takes in the blocks already done while another is still running, instead
// of waiting for that one first. A block waits only for blocks of earlier
// waves, which other workers took before it and finish whatever happens to
// ctx, so no wait is endless.
func (m collapsedKernel[T]) catchUp(cw *collapsedWorker[T], upto int) {
	cs := m.coll
	for cw.applied < upto {
		for b := cw.applied; b < upto; b++ {
			if !cw.in[b] && cs.finished[b].Load() {
				applyMoves(cw.nkw, cs.moves[b], 1)
				for t, x := range cs.deltaK[b][:m.k] {
					cw.base[t] += x
				}
				cw.in[b] = true
			}
		}
		for cw.applied < upto && cw.in[cw.applied] {
			cw.applied++
		}
		if cw.applied < upto {
			cs.waitBlock(cw.applied)
		}
	}
}

// moveCost is about what making one move (two random updates of the
// counts) costs in copies of one count: the collapsed kernel makes a
// sweep's moves again on G⁰ in place of copying a view of K·V counts when
// that is cheaper (see collapsedKernel.sweep). At K = 1000 on WordNet glosses (CPU profiles of
// BenchmarkCollapsed) making a sweep's moves took about 3.6 ms and copying
// the 92 MB view about 16 ms of one core's time.
var moveCost = 16

// waitBlock returns when block b is done. At a wave's end the block is
// another worker's and about to finish, and a goroutine parked on a
// channel takes tens of microseconds to wake on its close — a sizeable
// part of a block's few hundred — so it spins on the block's flag for a
// while (yielding now and then to any other goroutine that needs the
// processor) before it parks.
func (cs *collapsedState) waitBlock(b int) {
	for i := 1; i <= waitSpins; i++ {
		if cs.finished[b].Load() {
			return
		}
		if i%1024 == 0 {
			runtime.Gosched()
		}
	}
	<-cs.done[b]
}

// waitSpins is how many times waitBlock reads a block's flag before it
// parks: on the order of a block's sampling time.
const waitSpins = 1 << 17

// applyMoves makes the moves mv, pairs (from, to) of indices into counts,
// d times: d = 1 makes them, d = −1 undoes them. Undoing a block's moves in
// the order made can take a count of uint16 below zero on the way; it
// wraps around and comes back, so the result is exact.
func applyMoves[T viewCount](counts []T, mv []int32, d T) {
	for j := 0; j+1 < len(mv); j += 2 {
		counts[mv[j]] -= d
		counts[mv[j+1]] += d
	}
}

// sweepBlockCollapsed samples the tokens of block blk with the collapsed
// kernel from the counts G_blk in the worker's view and totals, and leaves
// the block's changes in m.coll.moves[blk] and m.coll.deltaK[blk], with the
// view back at G_blk.
func (m collapsedKernel[T]) sweepBlockCollapsed(sw *sweepWorker, cw *collapsedWorker[T], blk int) {
	src := sw.src
	src.Seed(rng.Key(m.cfg.Seed, "lda", "adlda", m.iter, blk))
	cs, p := m.coll, m.phi
	k := m.k
	alpha, beta := m.alpha, m.beta
	vb := float64(m.v) * beta
	invAlpha := 1 / alpha
	kAlpha := float64(k) * alpha
	gkw, nkw, nk := m.nkw, cw.nkw, cw.nk[:k]
	invNk, inv, invDown := cs.invNk[:k], cw.inv[:k], cw.invDown[:k]
	copy(nk, cw.base) // D is zero at the start of a block
	for t, c := range nk {
		inv[t] = 1 / (float64(c) + vb)
		invDown[t] = 1 / (float64(c-1) + vb)
	}
	if m.denseLong {
		for t, x := range inv {
			sw.q[t] = x * (0 + alpha) // outside a dense document C_dt = 0
		}
	}
	cw.touched = cs.moves[blk][:0]
	cnt := sw.cnt[:k]
	end := m.docStart[m.blocks[blk+1]]
	steps := m.cfg.MHSteps
	spread := m.wordsAhead
	per := 3 * steps
	var ring []uint64
	if spread {
		ring = sw.mhRing(per)
	}
	primed := false // the document's first reads were prefetched with the one before
	for d := m.blocks[blk]; d < m.blocks[blk+1]; d++ {
		s, e := m.docStart[d], m.docStart[d+1]
		zd := m.z[s:e]
		wd := m.words[s:e]
		wd = wd[:len(zd)]
		if len(zd) <= m.shortLen {
			sw.dt.count(zd, cnt)
			ah := m.withNext(m.aheadOf(s, end), d, m.blocks[blk+1], m.shortLen)
			m.collapsedDoc(sw, cw, zd, wd, ah, primed)
			primed = ah.nextW != nil && len(zd) >= prefetchAhead/2
			sw.dt.clear(cnt)
			continue
		}
		primed = false
		for _, t := range zd {
			cnt[t]++
		}
		if m.denseLong {
			ah := m.aheadOf(s, end)
			q := sw.q[:k]
			for _, t := range zd {
				q[t] = inv[t] * (float64(cnt[t]) + alpha)
			}
			for i := range wd {
				m.prefetchView(cw, ah, i)
				m.denseToken(sw, cw, zd, wd, i)
			}
			for _, t := range zd {
				cnt[t] = 0
				q[t] = inv[t] * (0 + alpha)
			}
			continue
		}
		n := float64(len(zd))
		last := len(zd) - 1
		total := n + kAlpha
		ah := m.aheadOf(s, end)
		// As in sweepBlockLDA, long columns have the steps' words drawn
		// ahead and their reads prefetched (see mhDrawAhead).
		if spread {
			for j := range min(mhDrawAhead, len(zd)) {
				m.drawAheadCollapsed(sw, cw, ring, per, zd, wd, j, total, n)
			}
		}
		for i, w := range wd {
			m.prefetchCollapsed(cw, ah, i)
			if spread {
				if j := i + mhDrawAhead; j < len(zd) {
					m.drawAheadCollapsed(sw, cw, ring, per, zd, wd, j, total, n)
				}
				if j := i + 1; j < len(zd) {
					m.prefetchCollapsedProposals(cw, ring[(j&mhRingMask)*per:][:per], int(wd[j]))
				}
			}
			var r []uint64
			if spread {
				r = ring[(i&mhRingMask)*per:][:per]
			}
			cur := int(zd[i])
			cnt[cur]--
			base := int(w) * k
			gw, nw := gkw[base:base+k], nkw[base:base+k]
			mass := p.words[w].mass
			// wCur returns (n_kw + β)/(n_k + Vβ) at cur with the token
			// itself removed, wOther the same at another topic t, with the
			// reciprocals that move keeps current.
			wCur := func() float64 { return (float64(nw[cur]-1) + beta) * invDown[cur] }
			wOther := func(t int) float64 { return (float64(nw[t]) + beta) * inv[t] }
			// q returns the word proposal's unnormalised weight of t.
			q := func(t int) float64 { return (float64(gw[t]) + beta) * invNk[t] }
			for st := range steps {
				var y, x, y2 uint64
				if spread {
					y, x, y2 = r[3*st], r[3*st+1], r[3*st+2]
				} else {
					y, x = src.Uint64(), src.Uint64()
				}
				var t int
				var ok bool
				if unit32(uint32(y))*(mass+cs.smoothMass) < mass {
					if t, ok = p.drawWord(int(w), x); !ok {
						t = p.drawWordSrc(src, int(w))
					}
				} else if t, ok = alias.Draw(cs.smooth, cs.smoothLem, x); !ok {
					t = drawSmooth(src, cs)
				}
				if t != cur {
					a := (float64(cnt[t]) + alpha) * wOther(t) * q(cur)
					b := (float64(cnt[cur]) + alpha) * wCur() * q(t)
					if unit32(uint32(y>>32))*b < a {
						cur = m.move(cw, zd, i, base, cur, t)
					}
				}
				if !spread {
					y2 = src.Uint64()
				}
				u := unit32(uint32(y2)) * total
				t = min(max(int((u-n)*invAlpha), 0), k-1)
				if u < n {
					t = int(zd[min(int(u), last)])
				}
				if t != cur {
					if unit32(uint32(y2>>32))*wCur() < wOther(t) {
						cur = m.move(cw, zd, i, base, cur, t)
					}
				}
			}
			cnt[cur]++
		}
		for _, t := range zd {
			cnt[t] = 0
		}
	}
	// Undo the moves on the view, which returns to G_blk; catchUp applies
	// them to every view in turn.
	applyMoves(nkw, cw.touched, ^T(0)) // −1, modulo 1<<16 for uint16
	cs.moves[blk], cw.touched = cw.touched, nil
	for t, x := range nk {
		cs.deltaK[blk][t] = x - cw.base[t]
	}
}

// drawAheadCollapsed draws the words of the burn-in's MH steps of token j
// of a long document (zd, wd: its topics and words; n tokens, total =
// n + Kα) into ring — per step the word proposal's coin, its draw and the
// document proposal's word — and prefetches the proposal-table entries of
// its word proposals that take the table and the view's and G⁰'s column
// entries at its document proposals' topics.
func (m collapsedKernel[T]) drawAheadCollapsed(sw *sweepWorker, cw *collapsedWorker[T], ring []uint64, per int, zd []uint16, wd []int32, j int, total, n float64) {
	r := ring[(j&mhRingMask)*per:][:per]
	for i := range r {
		r[i] = sw.src.Uint64()
	}
	p, cs := m.phi, m.coll
	k := m.k
	w := int(wd[j])
	wt := &p.words[w]
	tw := p.sparse[w/phiBlock][wt.off : wt.off+wt.n]
	view, glob := cw.nkw[w*k:(w+1)*k], m.nkw[w*k:(w+1)*k]
	mass := p.words[w].mass
	last := len(zd) - 1
	for st := 0; st < per; st += 3 {
		slot := unsafe.Pointer(wt)
		if y := r[st]; unit32(uint32(y))*(mass+cs.smoothMass) < mass {
			slot = unsafe.Pointer(&tw[((r[st+1]>>32)*uint64(wt.n))>>32])
		}
		u := unit32(uint32(r[st+2])) * total
		t := min(max(int((u-n)/m.alpha), 0), k-1)
		if u < n {
			t = int(zd[min(int(u), last)])
		}
		prefetch.Lines(slot, unsafe.Pointer(&view[t]), unsafe.Pointer(&glob[t]), slot)
	}
}

// prefetchCollapsedProposals prefetches, from the drawn words r of a token
// of word w (see drawAheadCollapsed, which prefetched the table entries),
// the view's and G⁰'s column entries at its word proposals' topics.
func (m collapsedKernel[T]) prefetchCollapsedProposals(cw *collapsedWorker[T], r []uint64, w int) {
	p, cs := m.phi, m.coll
	k := m.k
	wt := &p.words[w]
	tw := p.sparse[w/phiBlock][wt.off : wt.off+wt.n]
	view, glob := cw.nkw[w*k:(w+1)*k], m.nkw[w*k:(w+1)*k]
	mass := p.words[w].mass
	for st := 0; st < len(r); st += 6 {
		topic := func(st int) int {
			y, x := r[st], r[st+1]
			if unit32(uint32(y))*(mass+cs.smoothMass) < mass {
				en := tw[((x>>32)*uint64(wt.n))>>32]
				if uint32(x) < en.thresh {
					return int(en.topic)
				}
				return int(en.alias)
			}
			t, _ := alias.Draw(cs.smooth, cs.smoothLem, x)
			return t
		}
		a := topic(st)
		b := a
		if st+3 < len(r) {
			b = topic(st + 3)
		}
		prefetch.Lines(unsafe.Pointer(&view[a]), unsafe.Pointer(&glob[a]), unsafe.Pointer(&view[b]), unsafe.Pointer(&glob[b]))
	}
}

// collapsedDoc samples the tokens of one short document (at most
// MH.shortLen tokens; sw.cnt holds its topic counts and sw.dt its
// distinct topics, see docTopics) with one independence
// Metropolis–Hastings step per token whose proposal is nearly the collapsed
// conditional π(k) = (C_dk^(−i) + α)·W(k), W(k) = (n_kw^(−i) + β)/(n_k^(−i) + Vβ):
//
//	q_s(k) ∝ C_dk^(−i)·W(k) + α·P_s(k),  P_s(k) = (G_kw + β)/(G_k + Vβ),
//
// a document part summed over the document's distinct topics (at most its
// length) with the block's current counts, and LightLDA's word proposal P
// from the counts G of the iteration's start, drawn from the iteration's
// tables.
// G counts the token at its current topic s; from another topic t the
// tables would count it at t, so the acceptance is
// min(1, π(t)q_t(s)/(π(s)q_t(t))) with q_t computed in O(1) from q_s.
// Given G equal to the current counts (one block, the block's first token)
// the step leaves π exactly invariant (TestCollapsedTokenExact); later
// tokens see in G the iteration-start topics of tokens that have moved since,
// a staleness of the same kind as AD-LDA's, which is why this kernel serves
// as burn-in. The acceptance rate is close to 1 and the chain forms topics
// as fast per sweep as collapsed Gibbs. ah holds the tokens ahead, to
// prefetch, and the next document of the block when it is short enough to
// take this path; primed says the document before prefetched this one's
// first reads.
func (m collapsedKernel[T]) collapsedDoc(sw *sweepWorker, cw *collapsedWorker[T], zd []uint16, wd []int32, ah ahead, primed bool) {
	// When a column is too long for prefetchCollapsed to take in whole
	// (see columnSpan), each read of the document part at one of the
	// document's topics would miss the caches: prefetch those entries of
	// the columns prefetchAhead/2 tokens ahead. At K = 1000 (WordNet
	// glosses, min-df 5, BenchmarkCollapsed) that made the kernel 1.10× as
	// fast with one worker and 1.11× with two (medians of 8 and 6 pairs of
	// alternated runs; 3 tokens ahead was no better). Prefetching G⁰'s
	// entries at the same topics too, which the acceptance reads at the
	// proposed topic, was slower: 150-sweep chains on GCIDE's entries at
	// K = 1000 took 63.4 and 64.7 s against 61.4 and 60.3 s.
	spread := uintptr(m.k)*unsafe.Sizeof(cw.nkw[0]) > maxWholeColumn
	if spread && !primed {
		for i := range min(prefetchAhead/2, len(wd)) {
			cw.prefetchTopics(int(wd[i])*m.k, sw.dt.topics)
		}
	}
	for i := range wd {
		m.prefetchCollapsed(cw, ah, i)
		if j := i + prefetchAhead/2; spread {
			if j < len(wd) {
				cw.prefetchTopics(int(wd[j])*m.k, sw.dt.topics)
			} else if j -= len(wd); j < len(ah.nextW) {
				// The next document's distinct topics are among its
				// tokens' topics, which nothing changes before it.
				cw.prefetchTopics(int(ah.nextW[j])*m.k, ah.nextZ)
			}
		}
		m.collapsedToken(sw, cw, zd, wd, i)
	}
}

// prefetchTopics prefetches the entries of the view's column starting at
// base at the topics ts, four lines a call.
func (cw *collapsedWorker[T]) prefetchTopics(base int, ts []uint16) {
	col := cw.nkw[base:]
	at := func(t uint16) unsafe.Pointer { return unsafe.Pointer(&col[t]) }
	for ; len(ts) >= 4; ts = ts[4:] {
		prefetch.Lines(at(ts[0]), at(ts[1]), at(ts[2]), at(ts[3]))
	}
	switch len(ts) {
	case 3:
		prefetch.Lines(at(ts[0]), at(ts[1]), at(ts[2]), at(ts[0]))
	case 2:
		prefetch.Lines(at(ts[0]), at(ts[1]), at(ts[0]), at(ts[1]))
	case 1:
		a := at(ts[0])
		prefetch.Lines(a, a, a, a)
	}
}

// prefetchAhead is how many tokens ahead of the one being sampled the
// samplers prefetch a token's word column and table header; its proposal
// table follows half as far ahead, when the header has arrived. A token's
// reads land at random in tables of K·V entries, far larger than the
// caches, and each read the next token needs would otherwise wait for
// memory: on WordNet glosses (K = 50, V = 23,150) prefetching made the
// collapsed kernel's iterations 1.3–1.6× as fast; 2 to 6 tokens ahead
// did alike, within the noise of the measurement, and better than 1.
// Prefetches change speed only, never a draw.
const prefetchAhead = 4

// prefetchCollapsed prefetches, while the collapsed kernel samples token i
// of a document, the proposal table of the token prefetchAhead/2 positions
// on, and the columns of the view and of G⁰ and the table header (with
// the word part's mass) of the one prefetchAhead on (see ahead). Leaving
// out the table's lines for the tokens of short documents, whose draws
// read the table only when they fall in the word proposal's part, was
// tried and dropped: it made 250-sweep chains on WordNet glosses (K = 50,
// min-df 2, one worker) take 21.6–22.7 s against 18.2–19.5 s, and
// 150-sweep chains at K = 1000 on GCIDE's entries 69.3 and 72.2 s against
// 71.0 and 71.9 s.
func (m collapsedKernel[T]) prefetchCollapsed(cw *collapsedWorker[T], ah ahead, i int) {
	if i >= len(ah.w) {
		return
	}
	t0, t1, t2 := m.phi.tableLines(int(ah.w[i]))
	j := i + prefetchAhead/2
	if j >= len(ah.w) {
		prefetch.Lines(t0, t1, t2, t0)
		return
	}
	k := m.k
	w, t := int(ah.w[j]), int(ah.z[j])
	base := w * k
	view, n := columnSpan(cw.nkw[base:base+k], t)
	start, gn := columnSpan(m.nkw[base:base+k], t)
	hdr := unsafe.Pointer(&m.phi.words[w])
	prefetch.Token(view, n, start, gn, t0, t1, t2, hdr, hdr, hdr)
}

// collapsedToken makes the step of collapsedDoc for token i of the
// document; sw.cnt holds the document's topic counts with every token in,
// sw.dt every topic with a count (docTopics).
func (m collapsedKernel[T]) collapsedToken(sw *sweepWorker, cw *collapsedWorker[T], zd []uint16, wd []int32, i int) {
	src, cs, p := sw.src, m.coll, m.phi
	k := m.k
	alpha, beta := m.alpha, m.beta
	invNk, inv := cs.invNk[:k], cw.inv[:k]
	cnt := sw.cnt[:k]
	w := wd[i]
	cur := int(zd[i])
	cnt[cur]--
	base := int(w) * k
	nw := cw.nkw[base : base+k]
	nw = nw[:k]
	// W(t) = (n_tw + β)·inv[t] for t ≠ cur; at cur without the token.
	wCur := (float64(nw[cur]-1) + beta) * cw.invDown[cur]
	// The document part over the document's distinct topics: C_dt·W(t).
	// Its running sums go to ps, as bits, for firstAbove, which draws
	// without a branch to mispredict. The entry at cur takes wCur by a mask
	// for the same reason. On WordNet glosses (K = 50, one worker) that made
	// the kernel's iterations 1.0–1.25× as fast (median of 6 alternated
	// pairs 1.10).
	dt := &sw.dt
	ps := dt.sums[:len(dt.topics)]
	wCurBits := math.Float64bits(wCur)
	var dm float64
	for j, t := range dt.topics {
		x := (float64(nw[t]) + beta) * inv[t]
		eq := uint64(int(t) ^ cur)
		atCur := ((eq | -eq) >> 63) - 1 // all ones when t is cur, else 0
		x = math.Float64frombits(math.Float64bits(x)&^atCur | wCurBits&atCur)
		dm += x * float64(cnt[t])
		ps[j] = math.Float64bits(dm)
	}
	mass := p.words[w].mass
	zs := mass + cs.smoothMass
	u := unit(src.Uint64()) * (dm + alpha*zs)
	t := cur
	switch {
	case u < dm:
		// The first topic whose running sum exceeds u; it has a weight
		// above 0, and there is one since u < dm.
		t = int(dt.topics[firstAbove(ps, u)])
	case (u-dm)*cs.invAlpha < mass:
		t = p.drawWordSrc(src, int(w))
	default:
		t = drawSmooth(src, cs)
	}
	if t != cur {
		// The tables count the token at cur; from t they would count it
		// at t, which changes P at cur and t and its total.
		wt := (float64(nw[t]) + beta) * inv[t]
		gw := m.nkw[base : base+k]
		ps, pt := (float64(gw[cur])+beta)*invNk[cur], (float64(gw[t])+beta)*invNk[t]
		psT := (float64(gw[cur]-1) + beta) * cs.invNkDown[cur]
		ptT := (float64(gw[t]+1) + beta) * cs.invNkUp[t]
		zt := zs - ps - pt + psT + ptT
		ns, nt := float64(cnt[cur]), float64(cnt[t])
		a := (nt + alpha) * wt * (ns*wCur + alpha*psT) * (dm + alpha*zs)
		b := (ns + alpha) * wCur * (nt*wt + alpha*pt) * (dm + alpha*zt)
		if unit(src.Uint64())*b < a {
			s := cur
			cur = m.move(cw, zd, i, base, cur, t)
			if m.denseLong {
				// denseToken's factors outside its documents.
				sw.q[s] = cw.inv[s] * (0 + alpha)
				sw.q[cur] = cw.inv[cur] * (0 + alpha)
			}
			if dt.listed[cur] == 0 {
				dt.listed[cur] = 1
				dt.topics = append(dt.topics, uint16(cur))
				dt.sums = append(dt.sums, 0)
			}
		}
	}
	cnt[cur]++
}

// denseToken draws token i of a document (zd, wd: its topics and words;
// sw.cnt its topic counts with every token in, sw.q the factors
// (C_dt + α)/(n_t + Vβ) of those counts) from the collapsed conditional
// π(k) ∝ (C_dk^(−i) + α)·(n_kw^(−i) + β)/(n_k^(−i) + Vβ) over all K topics,
// with the counts of the worker's view: a Gibbs step, exact for the view.
// Only the weight of the token's own topic lacks the token, and it is
// computed apart, so the draw reads the view's column and q as they are,
// with no store to either just before it. Where a word's column of K
// counts is a few cache lines, which the kernel prefetches whole, it reads
// one column a token where the MH steps read several, and mixes as an
// exact draw does (see denseShortK).
func (m collapsedKernel[T]) denseToken(sw *sweepWorker, cw *collapsedWorker[T], zd []uint16, wd []int32, i int) {
	k := m.k
	cnt, inv, q := sw.cnt[:k], cw.inv[:k], sw.q[:k]
	alpha, beta := m.alpha, m.beta
	cur := int(zd[i])
	base := int(wd[i]) * k
	nw := cw.nkw[base : base+k]
	wcur := (float64(nw[cur]-1) + beta) * (cw.invDown[cur] * (float64(cnt[cur]-1) + alpha))
	// Every weight is positive, so any topic is one the conditional can
	// take; the draw returns K only by rounding.
	t := min(denseDraw(nw, sw.q, cur, wcur, beta, unit(sw.src.Uint64()), sw.dense, m.denseOrder), k-1)
	if t != cur {
		m.move(cw, zd, i, base, cur, t)
		cnt[cur]--
		cnt[t]++
		q[cur] = inv[cur] * (float64(cnt[cur]) + alpha)
		q[t] = inv[t] * (float64(cnt[t]) + alpha)
	}
}

// drawSmooth draws a topic from the shared table of the smoothing part.
func drawSmooth(src interface{ Uint64() uint64 }, cs *collapsedState) int {
	for {
		if t, ok := alias.Draw(cs.smooth, cs.smoothLem, src.Uint64()); ok {
			return t
		}
	}
}

// move reassigns token i of the current document from topic s to t in the
// block's view of the counts and returns t.
func (m collapsedKernel[T]) move(cw *collapsedWorker[T], zd []uint16, i, base, s, t int) int {
	cw.nkw[base+s]--
	cw.nkw[base+t]++
	cw.nk[s]--
	cw.nk[t]++
	vb := float64(m.v) * m.beta
	cw.inv[s] = 1 / (float64(cw.nk[s]) + vb)
	cw.inv[t] = 1 / (float64(cw.nk[t]) + vb)
	cw.invDown[s] = 1 / (float64(cw.nk[s]-1) + vb)
	cw.invDown[t] = 1 / (float64(cw.nk[t]-1) + vb)
	cw.touched = append(cw.touched, int32(base+s), int32(base+t))
	zd[i] = uint16(t)
	return t
}

// sparseArena gives the burn-in's proposal tables of every word block their
// room in one allocation of whole huge pages (see package hugepage), since a
// token reads its word's table at a random place among all of them. A
// word's table has one entry per topic with a count, so at most
// min(K, n_w) for a word of n_w tokens: the arena takes at most 8 bytes per
// token. The partially collapsed chain's tables (Phi.finishBlock) reuse the
// blocks' room and grow out of it where they need more.
func (m *MH) sparseArena() {
	p, k := m.phi, m.k
	nb := len(p.sparse)
	bound := make([]int, nb+1)
	for b := range nb {
		n := 0
		for w := b * phiBlock; w < min(m.v, (b+1)*phiBlock); w++ {
			if p.propose[w] {
				n += min(k, len(m.tokensOf(w)))
			}
		}
		bound[b+1] = bound[b] + n
	}
	arena := hugepage.Make[sparseEntry](bound[nb])
	for b := range nb {
		p.sparse[b] = arena[bound[b]:bound[b]:bound[b+1]]
	}
}

// prefetchView prefetches, while denseToken draws token i of a long
// document, the view's column of the token prefetchAhead/2 positions on:
// the one read of the dense draw that misses the caches.
func (m collapsedKernel[T]) prefetchView(cw *collapsedWorker[T], ah ahead, i int) {
	if j := i + prefetchAhead/2; j < len(ah.w) {
		base := int(ah.w[j]) * m.k
		view, n := columnSpan(cw.nkw[base:base+m.k], int(ah.z[j]))
		prefetch.Token(view, n, view, n, view, view, view, view, view, view)
	}
}

// denseShortK is the largest K at which the burn-in draws every token
// exactly over all K topics (denseToken), short documents too, instead of
// giving documents of at most Config.ExactLen tokens collapsedDoc's
// proposal. At such K a word's column is a few cache lines, and the dense
// draw reads that column and nothing else — no proposal table, no column
// of G⁰ — so the burn-in builds no tables, where collapsedToken reads
// about three times the lines (the view's column, G⁰'s, the word's table
// and its header). And the dense draw is a Gibbs step,
// where collapsedToken's independence step rejects about one proposal in
// twenty. On WordNet's glosses (K = 50, min-df 2, 300 sweeps, two
// workers, alternated with the build before) chains took 10.2–10.4 s
// against 11.6–11.9 s; on the kernel's documentation and GCIDE's entries
// (min-df 5) 29.0–29.3 and 40.2 s against 35.8–37.2 and 48.5 s with one
// worker, 15.4–15.5 and 20.8 s against 20.1–21.7 and 25.7 s with two. On
// WordNet (seeds 1–48, scored as in bench/README.md, "NPMI against
// collapsed Gibbs over 48 seeds") 300 sweeps reached a held-out
// perplexity of 3,429.6 against 3,463.8 and an NPMI of 0.0757 against
// 0.0706 (+0.0050, standard error 0.0023). Where the host lacks AVX-512
// the AVX2 loop still ran faster than collapsedToken (100 sweeps, one
// worker: 7.9–8.0 s against 8.4 s), but the Go loop, the one for other
// architectures, took 11.8–12.3 s. Above 64 the proposal's sum over a
// short document's few topics costs less than a pass over all K: on the
// kernel's documentation (min-df 2, one worker, 100 sweeps at K = 50,
// when the dense draw summed in topic order) sections of more than 256,
// 128, 64, 32 and 16 tokens taking the dense draw gave 14.5–15.1,
// 13.3–13.4, 12.8–13.7, 12.6–13.5 and 13.8 s (two runs each); at K = 150
// (60 sweeps) more than 150 or 64 tokens instead of 256 was no faster
// (12.5–13.2 s against 12.3–12.5 s).
const denseShortK = 64
