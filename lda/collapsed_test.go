package lda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// TestCollapsedStationary checks the collapsed (AD-LDA) kernel against exact
// enumeration where it is exact: with one block, the block's view G + D is the
// true current count, so the kernel must leave the collapsed posterior
// p(z | w) ∝ Π_d Π_k Γ(C_dk + α) · Π_k Π_w Γ(C_kw + β)/Γ(C_k + Vβ) invariant.
// Counts couple all documents, so every chain is its own tiny corpus; chains
// start from exact draws of p(z | w) and run a few sweeps, and the joint
// frequencies are compared with p by a chi-square test at a false-failure
// rate of 1e-6 each. Every document is long (ExactLen −1), so its tokens
// take the dense draw of denseToken, and in a second run, with denseLong
// off, the MH steps that long documents take at larger K; short documents
// are checked step by step in TestCollapsedTokenExact.
func TestCollapsedStationary(t *testing.T) {
	for _, dense := range []bool{true, false} {
		t.Run(fmt.Sprintf("dense=%v", dense), func(t *testing.T) { testCollapsedStationary(t, dense) })
	}
}

func testCollapsedStationary(t *testing.T, dense bool) {
	p := collapsedPosterior()
	const (
		chains = 20_000
		k      = 2
		alpha  = collapsedAlpha
		beta   = collapsedBeta
		sweeps = 3
	)
	c := collapsedCorpus()
	states := len(p)
	r := rng.Derive(3, "collapsed start")
	obs := make([]int, states)
	moved := 0
	ctx := context.Background()
	for ch := range chains {
		m, err := NewMH(c, Config{K: k, Alpha: alpha, Beta: beta, Sampler: SamplerADLDA, Workers: 1, Seed: uint64(ch), ExactLen: -1})
		if err != nil {
			t.Fatal(err)
		}
		if !m.denseLong {
			t.Fatal("denseLong is off at K = 2")
		}
		m.denseLong = dense
		s0 := drawState(r, p)
		setState(m.z, s0)
		m.recount()
		if err := m.Run(ctx, sweeps, nil); err != nil {
			t.Fatal(err)
		}
		s := stateOf(m.z)
		if s != s0 {
			moved++
		}
		obs[s]++
	}
	chi, cells := chiSquare(t, obs, p)
	if crit := chiCritical(cells); chi > crit {
		t.Errorf("chi-square of joint topic frequencies after %d sweeps = %.1f; want ≤ %.1f (%d states)", sweeps, chi, crit, cells)
	}
	if moved < chains/10 {
		t.Errorf("only %d of %d chains changed state; the kernel barely moves", moved, chains)
	}
}

const (
	collapsedAlpha = 0.7
	collapsedBeta  = 0.4
)

func collapsedCorpus() *corpus.Corpus {
	return &corpus.Corpus{Words: []int32{0, 1, 1, 2, 0}, DocStart: []int{0, 3, 5}, V: 3}
}

// collapsedPosterior enumerates p(z | w) of collapsedCorpus at K = 2,
// states indexed by Σ_i z_i·2^i.
func collapsedPosterior() []float64 {
	const (
		k     = 2
		v     = 3
		alpha = collapsedAlpha
		beta  = collapsedBeta
	)
	c := collapsedCorpus()
	n := len(c.Words)
	states := 1 << n
	p := make([]float64, states)
	var sum float64
	for s := range states {
		var lp float64
		nkw := make([]float64, k*v)
		nk := make([]float64, k)
		for d := 0; d < 2; d++ {
			cnt := make([]float64, k)
			for i := c.DocStart[d]; i < c.DocStart[d+1]; i++ {
				z := s >> i & 1
				cnt[z]++
				nkw[z*v+int(c.Words[i])]++
				nk[z]++
			}
			for _, x := range cnt {
				lg, _ := math.Lgamma(x + alpha)
				lp += lg
			}
		}
		for t := range k {
			for w := range v {
				lg, _ := math.Lgamma(nkw[t*v+w] + beta)
				lp += lg
			}
			lg, _ := math.Lgamma(nk[t] + v*beta)
			lp -= lg
		}
		p[s] = math.Exp(lp)
		sum += p[s]
	}
	for s := range p {
		p[s] /= sum
	}
	return p
}

// TestCollapsedTokenExact checks one step of the short-document kernel
// (collapsedToken) where it is exact: with the tables built from the
// current state. At K = 2 the burn-in draws every document densely, so the
// test gives short documents to collapsedToken, as larger K do. Each chain
// draws its state from p(z | w), builds the tables, and updates one token
// (chain c updates token c mod 5, so every token's step, with and without
// a document part, is covered; a mixture of π-invariant kernels is
// π-invariant). The joint frequencies are
// compared with p by a chi-square test at a false-failure rate of 1e-6;
// 4·10⁵ chains make the test see a kernel that leaves out the correction for
// the token's own count in the tables (chi-square about 150 against 84).
func TestCollapsedTokenExact(t *testing.T) {
	t.Parallel()
	const chains = 400_000
	p := collapsedPosterior()
	c := collapsedCorpus()
	n := len(c.Words)
	r := rng.Derive(4, "collapsed token start")
	obs := make([]int, len(p))
	moved := 0
	ctx := context.Background()
	for ch := range chains {
		m, err := NewMH(c, Config{K: 2, Alpha: collapsedAlpha, Beta: collapsedBeta, Sampler: SamplerADLDA, Workers: 1, Seed: uint64(ch)})
		if err != nil {
			t.Fatal(err)
		}
		m.shortLen = len(c.Words)
		s0 := drawState(r, p)
		setState(m.z, s0)
		m.recount()
		if err := m.prepareCollapsed(ctx); err != nil {
			t.Fatal(err)
		}
		sw, cw := m.sweepers[0], m.coll.views.([]*collapsedWorker[int32])[0]
		sw.src.Seed(rng.Key(uint64(ch), "collapsed token"))
		copy(cw.nk, m.coll.nk)
		copy(cw.inv, m.coll.invNk)
		copy(cw.invDown, m.coll.invNkDown)
		i := ch % n
		d := 0
		if i >= c.DocStart[1] {
			d = 1
		}
		zd, wd := m.z[c.DocStart[d]:c.DocStart[d+1]], c.Words[c.DocStart[d]:c.DocStart[d+1]]
		sw.dt.count(zd, sw.cnt)
		collapsedKernel[int32]{m}.collapsedToken(sw, cw, zd, wd, i-c.DocStart[d])
		s := stateOf(m.z)
		if s != s0 {
			moved++
		}
		obs[s]++
	}
	chi, cells := chiSquare(t, obs, p)
	if crit := chiCritical(cells); chi > crit {
		t.Errorf("chi-square of joint topic frequencies after one step = %.1f; want ≤ %.1f (%d states)", chi, crit, cells)
	}
	if moved < chains/20 {
		t.Errorf("only %d of %d steps changed the state; the kernel barely moves", moved, chains)
	}
}

// drawState draws a joint state of K = 2 topics from p (states indexed by
// Σ_i z_i·2^i).
func drawState(r *rand.Rand, p []float64) int {
	u := r.Float64()
	var acc float64
	for s, x := range p {
		acc += x
		if u < acc {
			return s
		}
	}
	return len(p) - 1
}

// setState sets the topics z to joint state s.
func setState(z []uint16, s int) {
	for i := range z {
		z[i] = uint16(s >> i & 1)
	}
}

// stateOf returns the joint state of the topics z.
func stateOf(z []uint16) int {
	s := 0
	for i, t := range z {
		s |= int(t) << i
	}
	return s
}

// TestCollapsedWaves checks which counts each block of the collapsed
// kernel starts from: block b must see the moves of every block of the
// waves before its own and of no other block, whatever the number of
// workers. After a sweep with three workers the test replays every block
// alone on a fresh view holding exactly those counts; each replay must draw
// the block's new topics again (a block's draws depend on its view, so a
// view that lost, doubled or added a move would, with near certainty on
// blocks of 37 tokens and more, draw differently; a wave's two short
// blocks hold 7 or more). Then the counts and every
// worker's view must hold the counts of the sweep's end, which the next
// iteration starts from without copying them, and a Reinit must make it
// copy again. It runs with views of int32 counts and of uint16.
func TestCollapsedWaves(t *testing.T) {
	t.Run("int32", func(t *testing.T) { testCollapsedWaves[int32](t, false) })
	t.Run("uint16", func(t *testing.T) { testCollapsedWaves[uint16](t, true) })
}

func testCollapsedWaves[T viewCount](t *testing.T, narrow bool) {
	c := randomCorpus("collapsed waves corpus", 7, 400, 12, 1)
	m, err := NewMH(c, Config{K: 4, Sampler: SamplerADLDA, Workers: 3, BlockSize: 30, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	m.narrowViews = narrow
	// Documents of at most K tokens take collapsedDoc's proposal, longer
	// ones the dense draw, so that the replays run both (left alone, every
	// document would take the dense draw at this K).
	m.shortLen = m.k
	ctx := context.Background()
	if err := m.Run(ctx, 2, nil); err != nil { // a state with structure
		t.Fatal(err)
	}
	nb := len(m.blocks) - 1
	if nb < 4*collapsedWave {
		t.Fatalf("%d blocks; want at least %d", nb, 4*collapsedWave)
	}
	z0 := append([]uint16(nil), m.z...)
	if err := m.prepareCollapsed(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.sweepCollapsed(ctx); err != nil {
		t.Fatal(err)
	}
	z1 := append([]uint16(nil), m.z...)
	// The sweep left the counts of its end in nkw; the replays need the
	// proposal tables' counts G⁰ there.
	nkw1 := slices.Clone(m.nkw)
	nkw0, _ := countsOfState(m, z0)
	copy(m.nkw, nkw0)
	sw := newSweepWorker(m.k, true)
	cw := &collapsedWorker[T]{nk: make([]int32, m.k), inv: make([]float64, m.k), invDown: make([]float64, m.k)}
	kern := collapsedKernel[T]{m}
	moved := 0
	for b := range nb {
		cut := m.docStart[m.blocks[b-b%collapsedWave]]
		s, e := m.docStart[m.blocks[b]], m.docStart[m.blocks[b+1]]
		mixed := append(append([]uint16(nil), z1[:cut]...), z0[cut:]...)
		var nkw []int32
		nkw, cw.base = countsOfState(m, mixed)
		cw.nkw = make([]T, len(nkw))
		copyCounts(cw.nkw, nkw)
		copy(m.z[s:e], z0[s:e])
		kern.sweepBlockCollapsed(sw, cw, b)
		if !slices.Equal(m.z[s:e], z1[s:e]) {
			t.Errorf("block %d: replayed from the counts with blocks [0, %d) moved, it draws other topics than in the sweep", b, b-b%collapsedWave)
		}
		if !slices.Equal(z0[s:e], z1[s:e]) {
			moved++
		}
		// Outside a dense document the dense draw's factors are
		// 1/(n_t + Vβ)·α, kept so by the moves of both kernels.
		for tp, x := range cw.inv[:m.k] {
			if want := x * (0 + m.alpha); sw.q[tp] != want {
				t.Fatalf("block %d: after the block the dense draw's factor of topic %d is %g; want %g", b, tp, sw.q[tp], want)
			}
		}
	}
	if moved < nb/2 {
		t.Fatalf("only %d of %d blocks changed a topic; the replays would not see a wrong view", moved, nb)
	}
	want, wantK := countsOfState(m, z1)
	views, bases := viewsOf(m)
	for r := range views {
		if !slices.Equal(views[r], want) || !slices.Equal(bases[r], wantK) {
			t.Errorf("view %d after the sweep differs from the counts of the sweep's end", r)
		}
	}
	if !slices.Equal(nkw1, want) || m.countsStale {
		t.Error("the counts after the sweep differ from those of the sweep's end")
	}
	m.iter++
	if m.coll.viewsAt != m.iter {
		t.Errorf("after a whole sweep the views are marked as of iteration %d; want %d", m.coll.viewsAt, m.iter)
	}
	// A Reinit changes the topics: the views must be copied again.
	phi := make([]float64, m.k*m.v)
	for i := range phi {
		phi[i] = 1 / float64(m.v)
	}
	if err := m.SetPhi(ctx, phi); err != nil {
		t.Fatal(err)
	}
	if err := m.Reinit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.prepareCollapsed(ctx); err != nil {
		t.Fatal(err)
	}
	views, _ = viewsOf(m)
	for r, view := range views {
		if !slices.Equal(view, m.nkw) {
			t.Errorf("view %d after Reinit differs from the counts", r)
		}
	}
}

// randomCorpus returns docs documents of 1 to maxLen tokens over v words,
// drawn from the stream named name: word ⌊u^skew·v⌋ for a uniform u, so
// skew 1 makes the words equally likely and a higher skew makes the high
// ids rare.
func randomCorpus(name string, v, docs, maxLen int, skew float64) *corpus.Corpus {
	c := &corpus.Corpus{V: v}
	r := rng.Derive(1, name)
	for range docs {
		c.DocStart = append(c.DocStart, len(c.Words))
		for range 1 + r.IntN(maxLen) {
			c.Words = append(c.Words, int32(math.Pow(r.Float64(), skew)*float64(v)))
		}
	}
	c.DocStart = append(c.DocStart, len(c.Words))
	return c
}

// countsOfState returns the word-topic counts (word-major) and topic totals
// of m's tokens with topics z.
func countsOfState(m *MH, z []uint16) (nkw, nk []int32) {
	nkw, nk = make([]int32, m.k*m.v), make([]int32, m.k)
	for i, t := range z {
		nkw[int(m.words[i])*m.k+int(t)]++
		nk[t]++
	}
	return nkw, nk
}

// TestCollapsedTablesFromTokens checks that the word-proposal tables built
// from the tokens of each word (wordTokens) are those built from the
// word's column of counts, slot for slot, for words on both sides of the
// sparseScan cut.
func TestCollapsedTablesFromTokens(t *testing.T) {
	c := randomCorpus("tables from tokens corpus", 60, 300, 12, 2) // a few frequent words, many rare ones
	const k = 300
	m, err := NewMH(c, Config{K: k, Sampler: SamplerADLDA, Workers: 2, BlockSize: 64, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := m.Run(ctx, 3, nil); err != nil {
		t.Fatal(err)
	}
	var fromTokens, fromColumn int
	for w := range c.V {
		if n := len(m.tokensOf(w)); n > 0 && n*sparseScan < k {
			fromTokens++
		} else if n > 0 {
			fromColumn++
		}
	}
	if fromTokens == 0 || fromColumn == 0 {
		t.Fatalf("%d words from tokens, %d from columns; want both", fromTokens, fromColumn)
	}
	type tables struct {
		words  []wordTable
		sparse [][]sparseEntry
	}
	snapshot := func() tables {
		if err := m.prepareCollapsed(ctx); err != nil {
			t.Fatal(err)
		}
		s := tables{words: slices.Clone(m.phi.words)}
		for _, sp := range m.phi.sparse {
			s.sparse = append(s.sparse, slices.Clone(sp))
		}
		return s
	}
	got := snapshot()
	start, tok := m.wordStart, m.wordTok
	m.wordStart, m.wordTok = nil, nil // every table from its column
	want := snapshot()
	m.wordStart, m.wordTok = start, tok
	for w := range c.V {
		if got.words[w] != want.words[w] { // the header holds the table's mass
			t.Fatalf("word %d: table %+v from tokens, %+v from its column", w, got.words[w], want.words[w])
		}
	}
	for b := range want.sparse {
		if !slices.Equal(got.sparse[b], want.sparse[b]) {
			t.Fatalf("word block %d: slots differ", b)
		}
	}
}

// TestCountLDA checks that the counts countLDA makes from the word index
// are the tokens' counts for any number of workers, including more parts
// than words and words without tokens, and that tokenCuts covers the
// vocabulary in increasing ranges.
func TestCountLDA(t *testing.T) {
	for _, v := range []int{1, 3, 50} {
		c := randomCorpus("count lda corpus", v, 40, 9, 3) // word v−1 is rare or absent
		for _, workers := range []int{1, 3, 16} {
			m, err := NewMH(c, Config{K: 5, Workers: workers, Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			cuts := m.countCuts
			if cuts[0] != 0 || cuts[len(cuts)-1] != v || len(cuts)-1 > countParts*workers {
				t.Fatalf("V = %d, %d workers: cuts %v", v, workers, cuts)
			}
			for i := 1; i < len(cuts); i++ {
				if cuts[i] <= cuts[i-1] {
					t.Fatalf("V = %d, %d workers: cuts %v not increasing", v, workers, cuts)
				}
			}
			for w := range v {
				for _, i := range m.tokensOf(w) {
					if int(c.Words[i]) != w {
						t.Fatalf("V = %d: token %d of word %d is word %d", v, i, w, c.Words[i])
					}
				}
			}
			if err := m.Run(context.Background(), 2, nil); err != nil {
				t.Fatal(err)
			}
			m.recount()
			want, _ := countsOfState(m, m.z)
			if !slices.Equal(m.nkw, want) {
				t.Fatalf("V = %d, %d workers: counts differ from the tokens'", v, workers)
			}
		}
	}
}

// TestCollapsedReplaySame checks that ending a sweep by making its moves on
// G⁰ (few moves for many counts) leaves the chain where copying a view
// does: the same topics, counts and views after every sweep, with one
// worker and with three. The sweep leaves its moves to the next
// iteration's prepare, which makes them beside the proposal tables, or to
// the first reader of the counts: both are checked.
func TestCollapsedReplaySame(t *testing.T) {
	c := randomCorpus("collapsed replay corpus", 300, 60, 12, 1)
	defer func(saved int) { moveCost = saved }(moveCost)
	for _, workers := range []int{1, 3} {
		run := func(cost int) *MH {
			moveCost = cost
			m, err := NewMH(c, Config{K: 64, Sampler: SamplerADLDA, Workers: workers, BlockSize: 20, Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			// Two runs with no reader between them: the second one's
			// prepare makes the moves the first one's last sweep left.
			for _, n := range []int{3, 2} {
				if err := m.Run(context.Background(), n, nil); err != nil {
					t.Fatal(err)
				}
			}
			return m
		}
		// K·V = 19,200 counts against at most 720 moves a sweep: the
		// default cost replays at the end of most sweeps (dropping a
		// block's moves from the replay fails this test with one worker
		// and with three), a huge one always copies.
		replayed, copied := run(16), run(1<<40)
		if !replayed.coll.replay {
			t.Fatalf("%d workers: the last sweep made its moves on the counts; want them left for a reader", workers)
		}
		if copied.coll.replay {
			t.Fatalf("%d workers: the last sweep copied a view and left moves to make", workers)
		}
		views, _ := viewsOf(replayed)
		// Model reads the counts, so it must make the moves first.
		if !slices.Equal(replayed.Model().Phi, copied.Model().Phi) {
			t.Errorf("%d workers: models differ between replaying and copying at a sweep's end", workers)
		}
		if !slices.Equal(replayed.z, copied.z) || !slices.Equal(replayed.nkw, copied.nkw) {
			t.Errorf("%d workers: topics or counts differ between replaying and copying at a sweep's end", workers)
		}
		for i, view := range views {
			if !slices.Equal(view, replayed.nkw) {
				t.Errorf("%d workers: worker %d's view is not the counts after replaying", workers, i)
			}
		}
		want, _ := countsOfState(replayed, replayed.z)
		if !slices.Equal(replayed.nkw, want) {
			t.Errorf("%d workers: counts after replaying differ from a count of the topics", workers)
		}
	}
}

// TestShortLen checks which documents the burn-in gives collapsedDoc's
// proposal: none where K ≤ denseShortK (every document takes the dense
// draw), at most Config.ExactLen tokens above.
func TestShortLen(t *testing.T) {
	c := randomCorpus("short len corpus", 10, 20, 5, 1)
	for _, tc := range []struct{ k, exactLen, want int }{
		{k: 2, want: 0},
		{k: 50, want: 0},
		{k: denseShortK, want: 0},
		{k: denseShortK + 1, want: DefaultExactLen},
		{k: 160, want: DefaultExactLen},
		{k: 1000, want: DefaultExactLen}, // no dense draw: columns too long to prefetch whole
		{k: 50, exactLen: 20, want: 0},
		{k: 100, exactLen: 20, want: 20},
		{k: 50, exactLen: -1, want: 0},
		{k: 1000, exactLen: 30, want: 30},
	} {
		m, err := NewMH(c, Config{K: tc.k, ExactLen: tc.exactLen, Workers: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if m.shortLen != tc.want {
			t.Errorf("K = %d, ExactLen = %d: short documents have at most %d tokens; want %d", tc.k, tc.exactLen, m.shortLen, tc.want)
		}
	}
}

// viewsOf returns the collapsed kernel's views of the counts and their
// totals, as int32.
func viewsOf(m *MH) (nkw, base [][]int32) {
	add := func(view []int32, b []int32) {
		nkw, base = append(nkw, view), append(base, slices.Clone(b))
	}
	switch views := m.coll.views.(type) {
	case []*collapsedWorker[int32]:
		for _, cw := range views {
			add(slices.Clone(cw.nkw), cw.base)
		}
	case []*collapsedWorker[uint16]:
		for _, cw := range views {
			view := make([]int32, len(cw.nkw))
			copyCounts(view, cw.nkw)
			add(view, cw.base)
		}
	}
	return nkw, base
}

// TestNarrowViews checks that views of uint16 counts make the chain views
// of int32 make — the same topics and counts after every sweep, on the
// paths of short documents and long ones, at K = 4 (long documents take
// the dense draw) and K = 200 (their columns are spread: MH steps), with
// one worker and with three — and where NewMH chooses them.
func TestNarrowViews(t *testing.T) {
	c := randomCorpus("narrow views corpus", 150, 300, 40, 2)
	for _, k := range []int{4, 200} {
		for _, workers := range []int{1, 3} {
			run := func(narrow bool) *MH {
				m, err := NewMH(c, Config{K: k, Sampler: SamplerADLDA, Workers: workers, BlockSize: 50, ExactLen: 12, Seed: 5})
				if err != nil {
					t.Fatal(err)
				}
				if want := k == 200; m.narrowViews != want {
					t.Fatalf("K = %d: narrow views %v; want %v", k, m.narrowViews, want)
				}
				m.narrowViews = narrow
				if err := m.Run(context.Background(), 4, nil); err != nil {
					t.Fatal(err)
				}
				return m
			}
			narrow, wide := run(true), run(false)
			if !slices.Equal(narrow.z, wide.z) || !slices.Equal(narrow.nkw, wide.nkw) {
				t.Errorf("K = %d, %d workers: topics or counts differ between views of uint16 and of int32", k, workers)
			}
			want, _ := countsOfState(narrow, narrow.z)
			views, _ := viewsOf(narrow)
			if len(views) != workers {
				t.Fatalf("K = %d: %d narrow views; want %d", k, len(views), workers)
			}
			for i, view := range views {
				if !slices.Equal(view, want) || !slices.Equal(narrow.nkw, want) {
					t.Errorf("K = %d, %d workers: worker %d's view or the counts differ from a count of the topics", k, workers, i)
				}
			}
		}
	}
	// A word of 1<<16 tokens could count 1<<16 in one topic: int32 views.
	big := &corpus.Corpus{DocStart: []int{0, 1 << 15, 1 << 16}, Words: make([]int32, 1<<16), V: 1}
	m, err := NewMH(big, Config{K: 200, Sampler: SamplerADLDA, Workers: 1, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if m.narrowViews {
		t.Error("a word of 1<<16 tokens: narrow views; want int32")
	}
	big.Words = big.Words[:1<<16-1]
	big.DocStart[2] = 1<<16 - 1
	if m, err = NewMH(big, Config{K: 200, Sampler: SamplerADLDA, Workers: 1, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if !m.narrowViews {
		t.Error("a word of 1<<16 − 1 tokens: int32 views; want uint16")
	}
}

// TestOrderWaves checks the order in which the workers take the burn-in's
// blocks: every block once, wave by wave, and within a wave those of most
// tokens first.
func TestOrderWaves(t *testing.T) {
	c := randomCorpus("order waves corpus", 9, 600, 40, 1)
	m, err := NewMH(c, Config{K: 3, Sampler: SamplerADLDA, Workers: 2, BlockSize: 25, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	nb := len(m.blocks) - 1
	tokens := func(b int) int { return m.docStart[m.blocks[b+1]] - m.docStart[m.blocks[b]] }
	order := m.orderWaves()
	if len(order) != nb {
		t.Fatalf("%d blocks in the order; want %d", len(order), nb)
	}
	seen := make([]bool, nb)
	reordered := false
	for j, b := range order {
		if b/collapsedWave != j/collapsedWave || seen[b] {
			t.Fatalf("block %d taken %d-th; the order %v is not the blocks wave by wave", b, j, order)
		}
		seen[b] = true
		if j%collapsedWave > 0 && tokens(order[j-1]) < tokens(b) {
			t.Errorf("in wave %d block %d (%d tokens) comes after block %d (%d tokens)", j/collapsedWave, b, tokens(b), order[j-1], tokens(order[j-1]))
		}
		reordered = reordered || b != j
	}
	if !reordered {
		t.Errorf("the order is the corpus order; the blocks' lengths should change it")
	}
}

// TestMakeWaveBlocks checks how the MH chains cut the documents into
// blocks: whole documents, each once, every block closed at the first
// document that brings it to its place's size — a quarter of the block
// size for a wave's last tailBlocks blocks, more for the others — and
// whole waves holding about collapsedWave blocks' worth of items.
func TestMakeWaveBlocks(t *testing.T) {
	const size, maxDoc = 1024, 200
	r := rng.Derive(5, "wave blocks")
	docStart := []int{0}
	for range 5000 {
		docStart = append(docStart, docStart[len(docStart)-1]+1+r.IntN(maxDoc))
	}
	blocks := makeWaveBlocks(docStart, size)
	nb := len(blocks) - 1
	if blocks[0] != 0 || blocks[nb] != len(docStart)-1 {
		t.Fatalf("blocks run from document %d to %d; want 0 to %d", blocks[0], blocks[nb], len(docStart)-1)
	}
	if nb < 4*collapsedWave {
		t.Fatalf("%d blocks; want at least %d", nb, 4*collapsedWave)
	}
	items := func(b int) int { return docStart[blocks[b+1]] - docStart[blocks[b]] }
	short := size / 4
	long := (collapsedWave*size - tailBlocks*short) / (collapsedWave - tailBlocks) // 1,280
	for b := range nb - 1 {
		if blocks[b+1] <= blocks[b] {
			t.Fatalf("block %d holds no document", b)
		}
		want := long
		if b%collapsedWave >= collapsedWave-tailBlocks {
			want = short
		}
		last := docStart[blocks[b+1]] - docStart[blocks[b+1]-1]
		if items(b) < want || items(b)-last >= want {
			t.Errorf("block %d (place %d of its wave) holds %d items, its last document %d; want it closed at the first document that reaches %d", b, b%collapsedWave, items(b), last, want)
		}
	}
	for w := 0; w+collapsedWave < nb; w += collapsedWave {
		n := 0
		for b := w; b < w+collapsedWave; b++ {
			n += items(b)
		}
		if n < collapsedWave*size || n >= collapsedWave*(size+maxDoc) {
			t.Errorf("wave %d holds %d items; want %d to %d", w/collapsedWave, n, collapsedWave*size, collapsedWave*(size+maxDoc)-1)
		}
	}
}
