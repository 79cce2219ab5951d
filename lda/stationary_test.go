package lda

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// The MH kernels must leave the exact target invariant. Each test builds
// many identical small documents (each an independent chain) with Φ fixed,
// enumerates the exact joint target of one document's topics,
//
//	π(z) ∝ Π_k Γ(C_dk + α) · Π_i L_i(z_i)  (θ integrated out),
//
// and compares the empirical joint frequencies over the documents with π by
// a chi-square test at a false-failure rate of 1e-6, twice: (1) documents
// start from exact draws of π and run a few sweeps — a kernel that leaves π
// invariant keeps them exactly π-distributed, with no mixing error; (2) all
// documents start at topic 0 and run many sweeps — this also catches a kernel
// that does not move. The documents are independent, so the counts are
// multinomial and the chi-square test applies without thinning.

const (
	statDocs   = 20_000
	statK      = 3
	statAlpha  = 0.5
	fromPiRuns = 4
	fromZero   = 25
)

// statPhi is the fixed Φ of the tests: K = 3 topics over V = 4 words, every
// entry large enough that each joint state has expected count ≥ 5.
var statPhi = []float64{
	0.4, 0.3, 0.2, 0.1,
	0.1, 0.2, 0.3, 0.4,
	0.25, 0.25, 0.25, 0.25,
}

// enumerate returns the exact joint target over the topics of n items of
// one document, states indexed by Σ_i z_i·K^i.
func enumerate(n, k int, alpha float64, logLik func(i, t int) float64) []float64 {
	states := 1
	for range n {
		states *= k
	}
	p := make([]float64, states)
	z := make([]int, n)
	cnt := make([]int, k)
	top := math.Inf(-1)
	for s := range states {
		x := s
		clear(cnt)
		var lp float64
		for i := range n {
			z[i] = x % k
			x /= k
			cnt[z[i]]++
			lp += logLik(i, z[i])
		}
		for _, c := range cnt {
			lg, _ := math.Lgamma(float64(c) + alpha)
			lp += lg
		}
		p[s] = lp
		top = max(top, lp)
	}
	var sum float64
	for s := range p {
		p[s] = math.Exp(p[s] - top)
		sum += p[s]
	}
	for s := range p {
		p[s] /= sum
	}
	return p
}

// checkStationary runs both checks on a chain whose documents each hold n
// items (items [d·n, (d+1)·n)), against the exact target p.
func checkStationary(t *testing.T, m *MH, n int, p []float64) {
	t.Helper()
	checkStationaryPhi(t, m, n, p, statPhi)
}

// checkStationaryPhi is checkStationary with Φ = phi, under which the
// documents' topics must stay below statK.
func checkStationaryPhi(t *testing.T, m *MH, n int, p, phi []float64) {
	t.Helper()
	ctx := context.Background()
	if err := m.SetPhi(ctx, phi); err != nil {
		t.Fatal(err)
	}
	cdf := make([]float64, len(p))
	var s float64
	for i, x := range p {
		s += x
		cdf[i] = s
	}
	for _, start := range []struct {
		name   string
		fromPi bool
		sweeps int
	}{{"from π", true, fromPiRuns}, {"from topic 0", false, fromZero}} {
		r := rng.Derive(11, "stationary start", start.name)
		for d := range statDocs {
			state := 0
			if start.fromPi {
				u := r.Float64()
				for state < len(cdf)-1 && cdf[state] <= u {
					state++
				}
			}
			for i := range n {
				m.z[d*n+i] = uint16(state % statK)
				state /= statK
			}
		}
		m.recount()
		moved := 0
		before := append([]uint16(nil), m.z...)
		for range start.sweeps {
			m.phiStale = false // keep Φ fixed
			m.clearCounts()
			if err := m.sweep(ctx); err != nil {
				t.Fatal(err)
			}
		}
		obs := make([]int, len(p))
		for d := range statDocs {
			state, mul := 0, 1
			for i := range n {
				state += int(m.z[d*n+i]) * mul
				mul *= statK
				if m.z[d*n+i] != before[d*n+i] {
					moved++
				}
			}
			obs[state]++
		}
		chi, cells := chiSquare(t, obs, p)
		if crit := chiCritical(cells); chi > crit {
			t.Errorf("%s, %d sweeps: chi-square of joint topic frequencies = %.1f; want ≤ %.1f (%d states)", start.name, start.sweeps, chi, crit, cells)
		}
		if moved < statDocs/10 {
			t.Errorf("%s: only %d item topics changed in %d sweeps; the chain barely moves", start.name, moved, start.sweeps)
		}
	}
}

// repeatDocs returns a corpus of statDocs copies of words, with sentence
// boundaries repeated from units (token offsets inside one document) when
// units is not nil.
func repeatDocs(words []int32, units []int) *corpus.Corpus {
	c := &corpus.Corpus{V: 4, DocStart: []int{0}}
	if units != nil {
		c.UnitStart = []int{0}
		c.DocUnit = []int{0}
	}
	for range statDocs {
		base := len(c.Words)
		c.Words = append(c.Words, words...)
		c.DocStart = append(c.DocStart, len(c.Words))
		if units != nil {
			for _, u := range units[1:] {
				c.UnitStart = append(c.UnitStart, base+u)
			}
			c.DocUnit = append(c.DocUnit, len(c.UnitStart)-1)
		}
	}
	return c
}

var statCfg = Config{K: statK, Alpha: statAlpha, Workers: 2, BlockSize: 5000, Seed: 5, BurnIn: -1}

// TestMHStationaryLDA checks plain LDA's two token kernels: exact draws
// (documents of at most ExactLen tokens, the default here) and the MH steps
// of longer documents (ExactLen −1).
func TestMHStationaryLDA(t *testing.T) {
	t.Parallel()
	words := []int32{0, 3, 1}
	p := enumerate(len(words), statK, statAlpha, func(i, k int) float64 {
		return math.Log(float64(float32(statPhi[k*4+int(words[i])])))
	})
	for _, tc := range []struct {
		name     string
		exactLen int
	}{{"exact draws", 0}, {"mh steps", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := statCfg
			cfg.ExactLen = tc.exactLen
			m, err := NewMH(repeatDocs(words, nil), cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkStationary(t, m, len(words), p)
		})
	}
}

// TestMHStationaryLongColumns checks the MH steps of plain LDA where a
// word's column spans more cache lines than prefetchToken takes whole, so the
// steps' words are drawn tokens ahead and their reads prefetched (see
// mhDrawAhead). K = 200, but topics 3 to 199 put all their mass on word 4,
// which the documents do not use: φ_kw = 0 there for the documents' words,
// the chain never enters them, and the target over topics 0 to 2 is the
// one of TestMHStationaryLDA with α = 0.15. A document proposal picks one
// of the 3 tokens with probability 3/(3 + Kα) = 1/11 (the rest go to
// unreachable topics and are rejected); a larger α would leave those moves
// too rare for the test to notice a wrong document acceptance, a smaller
// one leaves states with fewer than 5 expected documents. The documents of
// 3 tokens draw their first two tokens' words before the loop and the
// third's inside it.
func TestMHStationaryLongColumns(t *testing.T) {
	t.Parallel()
	const k, v, alpha = 200, 5, 0.15
	if uintptr(k)*4 <= maxWholeColumn {
		t.Fatalf("K = %d: columns of %d bytes are prefetched whole; the test needs longer ones", k, 4*k)
	}
	words := []int32{0, 3, 1}
	p := enumerate(len(words), statK, alpha, func(i, k int) float64 {
		return math.Log(float64(float32(statPhi[k*4+int(words[i])])))
	})
	phi := make([]float64, k*v)
	for t := range k {
		if t < statK {
			copy(phi[t*v:], statPhi[t*4:(t+1)*4])
		} else {
			phi[t*v+4] = 1
		}
	}
	c := repeatDocs(words, nil)
	c.V = v
	cfg := statCfg
	cfg.K, cfg.Alpha, cfg.ExactLen = k, alpha, -1
	m, err := NewMH(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkStationaryPhi(t, m, len(words), p, phi)
}

// TestExactDrawTail checks the part of an exact draw that statPhi never
// reaches: topics left out of the word's proposal table for being below
// proposalCut of its largest entry, drawn by a scan of the column. A
// one-token document has no document part, so its topic is drawn ∝ φ_kw.
// 4·10⁶ draws give the two left-out topics about 1,900 and 750 expected
// counts; the chi-square test over the four topics fails falsely with
// probability 1e-6.
func TestExactDrawTail(t *testing.T) {
	t.Parallel()
	col := []float64{0.9, 5e-4, 2e-4, 0.6} // cut = 9e-4: topics 1 and 2 are left out
	phi := make([]float64, 0, 8)
	for _, x := range col {
		phi = append(phi, x, 1-x)
	}
	c := &corpus.Corpus{V: 2, DocStart: []int{0, 1}, Words: []int32{0}}
	m, err := NewMH(c, Config{K: 4, Alpha: 0.3, Workers: 1, Seed: 2, BurnIn: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetPhi(context.Background(), phi); err != nil {
		t.Fatal(err)
	}
	if got := m.phi.words[0].n; got != 2 {
		t.Fatalf("proposal table of word 0 holds %d topics, want 2", got)
	}
	const draws = 4_000_000
	src := chacha8.New([32]byte{7})
	zd, wd := []uint16{0}, []int32{0}
	obs := make([]int, 4)
	cnt, dt := make([]int32, 4), &docTopics{listed: make([]uint8, 4)}
	for range draws {
		m.phi.exactDoc(src, zd, wd, 0.3, ahead{}, cnt, dt)
		obs[zd[0]]++
	}
	want := make([]float64, 4)
	for k := range want {
		want[k] = float64(float32(col[k]))
	}
	chi, cells := chiSquare(t, obs, want)
	if crit := chiCritical(cells); chi > crit {
		t.Errorf("topic counts %v: chi-square %.1f, want ≤ %.1f", obs, chi, crit)
	}
}

// TestExactDocPairs checks the exact draws of a document's first two
// tokens, in a document short enough to sum its document part over its
// tokens and in one long enough to sum it over its listed topics. The second
// token's draw sees the first token's new topic, which may be new to the
// document (then listed during the document) or leave its old topic, held
// by no other token, listed with count 0. Every draw starts from the same
// state, topics 0 2 2 1 1 2 2 … over K = 6 (3, 4 and 5 unused); the joint
// frequencies of the first two new topics (36 cells) must follow
// π(a)·π(b | a), each the exact conditional given the other tokens' topics.
// 2·10⁶ draws; each chi-square test fails falsely with probability 1e-6.
func TestExactDocPairs(t *testing.T) {
	t.Parallel()
	const k, v, alpha = 6, 3, 0.4
	phi := []float64{
		0.5, 0.3, 0.2,
		0.1, 0.6, 0.3,
		0.3, 0.3, 0.4,
		0.6, 0.2, 0.2,
		0.05, 0.05, 0.9,
		0.25, 0.45, 0.3,
	}
	for _, n := range []int{5, exactListLen + 3} {
		t.Run(fmt.Sprintf("%d tokens", n), func(t *testing.T) {
			t.Parallel()
			words := make([]int32, n)
			z0 := make([]uint16, n)
			for i := range n {
				words[i] = int32(i % v)
				z0[i] = uint16(1 + (i+1)/2%2)
			}
			z0[0] = 0
			c := &corpus.Corpus{V: v, DocStart: []int{0, n}, Words: words}
			m, err := NewMH(c, Config{K: k, Alpha: alpha, Workers: 1, Seed: 2, BurnIn: -1})
			if err != nil {
				t.Fatal(err)
			}
			if err := m.SetPhi(context.Background(), phi); err != nil {
				t.Fatal(err)
			}
			// cond returns the exact conditional of token i given topics z.
			cond := func(z []uint16, i int) []float64 {
				p := make([]float64, k)
				var sum float64
				for t := range p {
					c := 0.0
					for j, x := range z {
						if j != i && int(x) == t {
							c++
						}
					}
					p[t] = (c + alpha) * m.phi.At(t, int(words[i]))
					sum += p[t]
				}
				for t := range p {
					p[t] /= sum
				}
				return p
			}
			want := make([]float64, k*k)
			pa := cond(z0, 0)
			for a := range k {
				z := slices.Clone(z0)
				z[0] = uint16(a)
				for b, pb := range cond(z, 1) {
					want[a*k+b] = pa[a] * pb
				}
			}
			const draws = 2_000_000
			src := chacha8.New([32]byte{9})
			cnt, dt := make([]int32, k), &docTopics{listed: make([]uint8, k)}
			zd := make([]uint16, n)
			obs := make([]int, k*k)
			for range draws {
				copy(zd, z0)
				m.phi.exactDoc(src, zd, words, alpha, ahead{}, cnt, dt)
				obs[int(zd[0])*k+int(zd[1])]++
				if slices.ContainsFunc(cnt, func(n int32) bool { return n != 0 }) || slices.Contains(dt.listed, 1) {
					t.Fatalf("exactDoc left counts %v and marks %v, want all 0", cnt, dt.listed)
				}
			}
			chi, cells := chiSquare(t, obs, want)
			if crit := chiCritical(cells); chi > crit {
				t.Errorf("pair frequencies %v: chi-square %.1f, want ≤ %.1f (%d cells)", obs, chi, crit, cells)
			}
		})
	}
}

func TestMHStationarySentenceLDA(t *testing.T) {
	t.Parallel()
	// Two sentences: [0 3] and [1 1 2]; items are sentences.
	words := []int32{0, 3, 1, 1, 2}
	units := []int{0, 2, 5}
	cfg := statCfg
	cfg.Model = ModelSLDA
	m, err := NewMH(repeatDocs(words, units), cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := enumerate(2, statK, statAlpha, func(u, k int) float64 {
		var ll float64
		for _, w := range words[units[u]:units[u+1]] {
			ll += float64(float32(math.Log(float64(float32(statPhi[k*4+int(w)])))))
		}
		return ll
	})
	checkStationary(t, m, 2, p)
}

// weightedTarget is an FTM-like Target: item i carries weighted word counts
// and LogLik = Σ_w n_iw log φ_kw, with proposal words that differ from the
// counted ones and repeat.
type weightedTarget struct {
	counts   [][]wordWeight // per item kind
	proposal [][]int32
	n        int // items per document
}

type wordWeight struct {
	w int32
	x float64
}

func (wt *weightedTarget) kind(i int) int { return i % wt.n }

func (wt *weightedTarget) LogLik(phi *Phi, i, k int) float64 {
	var ll float64
	row := phi.LogRow(k)
	for _, e := range wt.counts[wt.kind(i)] {
		ll += e.x * float64(row[e.w])
	}
	return ll
}

func (wt *weightedTarget) ProposalWords(i int) []int32 { return wt.proposal[wt.kind(i)] }

func (wt *weightedTarget) AddCounts(i, k int, c *Counts) {
	for _, e := range wt.counts[wt.kind(i)] {
		c.Add(k, int(e.w), e.x)
	}
}

func TestMHStationaryTarget(t *testing.T) {
	t.Parallel()
	wt := &weightedTarget{
		counts: [][]wordWeight{
			{{0, 1.5}, {2, 0.3}},
			{{3, 0.7}},
			{{1, 1}, {3, 0.2}, {0, 0.4}},
		},
		proposal: [][]int32{{0}, {3, 3, 1}, {1, 0}},
		n:        3,
	}
	docStart := make([]int, statDocs+1)
	for d := range docStart {
		docStart[d] = d * wt.n
	}
	m, err := NewTargetMH(docStart, 4, wt, statCfg)
	if err != nil {
		t.Fatal(err)
	}
	p := enumerate(wt.n, statK, statAlpha, func(i, k int) float64 {
		var ll float64
		for _, e := range wt.counts[i] {
			ll += e.x * float64(float32(math.Log(float64(float32(statPhi[k*4+int(e.w)])))))
		}
		return ll
	})
	checkStationary(t, m, wt.n, p)
}

// TestWordsAheadSameChain checks that drawing the MH steps' words ahead
// (MH.wordsAhead, see mhDrawAhead) leaves the chain as it was: the words
// are the stream's in the same order, so a seeded chain with it must give
// the same topics, sweep by sweep, as with each step drawing its own, in
// the collapsed burn-in and in the partially collapsed kernel. Only a slot
// rejected by Lemire's method would make the chains part; at K = 200 that
// has probability below 5·10⁻⁸ a draw, about 0.2% over this test's 40,000
// or so, and with the fixed seed it either happens in every run or in none.
func TestWordsAheadSameChain(t *testing.T) {
	t.Parallel()
	const k, v = 200, 60
	r := rng.Derive(4, "words ahead corpus")
	c := &corpus.Corpus{V: v, DocStart: []int{0}}
	for range 120 {
		for range 1 + r.IntN(40) {
			c.Words = append(c.Words, int32(r.IntN(v)))
		}
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	ctx := context.Background()
	cfg := Config{K: k, Workers: 2, BlockSize: 400, Seed: 9, ExactLen: -1, BurnIn: 4}
	chain := func(ahead bool) *MH {
		m, err := NewMH(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !m.wordsAhead {
			t.Fatalf("K = %d: wordsAhead is off", k)
		}
		m.wordsAhead = ahead
		return m
	}
	a, b := chain(true), chain(false)
	for sweep := range 8 {
		for _, m := range []*MH{a, b} {
			if err := m.Run(ctx, 1, nil); err != nil {
				t.Fatal(err)
			}
		}
		for i := range a.z {
			if a.z[i] != b.z[i] {
				t.Fatalf("sweep %d: token %d has topic %d with the words drawn ahead, %d without", sweep+1, i, a.z[i], b.z[i])
			}
		}
	}
}
