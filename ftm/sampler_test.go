package ftm

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
)

// tinyCorpus returns a corpus over v words with the given documents, each a
// list of sentences.
func tinyCorpus(v int, docs [][][]int32) *corpus.Corpus {
	c := &corpus.Corpus{V: v, DocStart: []int{0}, UnitStart: []int{0}, DocUnit: []int{0}}
	for _, d := range docs {
		for _, s := range d {
			c.Words = append(c.Words, s...)
			c.UnitStart = append(c.UnitStart, len(c.Words))
		}
		c.DocStart = append(c.DocStart, len(c.Words))
		c.DocUnit = append(c.DocUnit, len(c.UnitStart)-1)
	}
	return c
}

// testStore privatizes c with a seeded source.
func testStore(t testing.TB, c *corpus.Corpus, pc privatizeConfig, seed uint64) *store {
	t.Helper()
	if pc.blockSize == 0 {
		pc.blockSize = DefaultBlockSize
	}
	if pc.workers == 0 {
		pc.workers = 1
	}
	st, err := newStore(context.Background(), c, pc, privacy.NewSeededSource(seed).Indexed("test", "privatize"))
	if err != nil {
		t.Fatalf("newStore: %v", err)
	}
	return st
}

// dirichletRows returns k rows of v entries drawn from a symmetric
// Dirichlet(a).
func dirichletRows(k, v int, a float64, seed uint64) []float64 {
	r := rng.Derive(seed, "rows")
	rows := make([]float64, k*v)
	for t := 0; t < k; t++ {
		var s float64
		for w := 0; w < v; w++ {
			x := math.Exp(logGamma(r, a))
			rows[t*v+w] = x
			s += x
		}
		for w := 0; w < v; w++ {
			rows[t*v+w] /= s
		}
	}
	return rows
}

// exactJoint returns π(z_d) over all k^n topic vectors of document d
// (index Σ z_j k^j), with Φ fixed:
// π ∝ Π_k Γ(C_dk + α) · Π_j exp(ℓ_j(z_j)), computed from the same float32
// logarithms the sampler reads.
func exactJoint(ch *chain, d int) []float64 {
	st := ch.st
	s, e := st.docStart[d], st.docStart[d+1]
	n := e - s
	k := ch.k
	ll := make([][]float64, n)
	rd := st.newReader()
	rd.openBlock(0)
	for b := 0; b < len(st.blocks)-1; b++ {
		if d >= st.blocks[b] && d < st.blocks[b+1] {
			rd.openBlock(b)
			for dd := st.blocks[b]; dd < d; dd++ {
				rd.openDoc(dd)
				for i := st.docStart[dd]; i < st.docStart[dd+1]; i++ {
					rd.next(i)
				}
			}
		}
	}
	rd.openDoc(d)
	for j := 0; j < n; j++ {
		es := st.decodeBody(nil, rd.next(s+j))
		ll[j] = make([]float64, k)
		for t := 0; t < k; t++ {
			var a float64
			for _, en := range es {
				a += float64(en.s) * float64(ch.phi.logRow[t*ch.v+int(en.w)])
			}
			ll[j][t] = a * st.unit
		}
	}
	states := 1
	for range n {
		states *= k
	}
	p := make([]float64, states)
	z := make([]int, n)
	cnt := make([]int, k)
	var total float64
	for x := 0; x < states; x++ {
		y := x
		clear(cnt)
		var lp float64
		for j := 0; j < n; j++ {
			z[j] = y % k
			y /= k
			cnt[z[j]]++
			lp += ll[j][z[j]]
		}
		for t := 0; t < k; t++ {
			lg, _ := math.Lgamma(float64(cnt[t]) + ch.alpha)
			lp += lg
		}
		p[x] = math.Exp(lp)
		total += p[x]
	}
	for x := range p {
		p[x] /= total
	}
	return p
}

// chiSquareCrit returns the 1 − 10⁻⁶ quantile of the chi-square
// distribution with dof degrees of freedom: a test that rejects above it
// fails by chance once in a million runs.
func chiSquareCrit(dof int) float64 { return distuv.ChiSquared{K: float64(dof)}.Quantile(1 - 1e-6) }

// chiSquare returns the statistic of observed counts against probabilities
// p for n draws, pooling the cells whose expectation is below 5, and its
// degrees of freedom.
func chiSquare(obs []int, p []float64, n int) (stat float64, dof int) {
	var poolO, poolE float64
	cells := 0
	for x, pr := range p {
		e := pr * float64(n)
		if e < 5 {
			poolO += float64(obs[x])
			poolE += e
			continue
		}
		d := float64(obs[x]) - e
		stat += d * d / e
		cells++
	}
	if poolE > 0 {
		d := poolO - poolE
		stat += d * d / math.Max(poolE, 1e-300)
		cells++
	}
	return stat, cells - 1
}

// TestChainStationary checks the private MH kernel against exact
// enumeration of its target on a small problem: V = 6 words, K = 3 topics,
// Φ fixed, privatized vectors of ε = 1.5 (a few noisy entries each), one
// document of three items and one of two. Independent chains (seeds 1..M)
// run 20 sweeps each from uniform topics, and the final states of each
// document are compared with π by a chi-square test whose threshold is the
// 1 − 10⁻⁶ quantile (false failure 10⁻⁶ per document and case). With a
// 3-topic, 3-item document the kernel mixes in a few sweeps, so 20 leave
// no bias a test of this size can see.
func TestChainStationary(t *testing.T) {
	tests := []struct {
		name      string
		sentences bool
		steps     int
		noNoise   bool
	}{
		{name: "tokens", steps: 1},
		{name: "tokens two steps", steps: 2},
		{name: "sentences", sentences: true, steps: 1},
		{name: "tokens without noise", steps: 1, noNoise: true},
	}
	const (
		v, k   = 6, 3
		chains = 10000
		sweeps = 20
	)
	docs := [][][]int32{
		{{0, 1}, {1, 2, 2}, {4}},
		{{5, 3}, {3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tinyCorpus(v, docs)
			if !tt.sentences {
				// Tokens: one item per token, same documents.
				c = &corpus.Corpus{V: v, Words: c.Words, DocStart: c.DocStart}
			}
			st := testStore(t, c, privatizeConfig{eps: 1.5, tau: 0.2, noNoise: tt.noNoise, sentences: tt.sentences}, 3)
			rows := dirichletRows(k, v, 1, 4)
			ctx := context.Background()
			ch := newChain(st, k, 0.3, 0.01, tt.steps, 1, 0, []any{"test"}, 0)
			if err := ch.phi.set(ctx, 1, rows); err != nil {
				t.Fatal(err)
			}
			want := [][]float64{exactJoint(ch, 0), exactJoint(ch, 1)}
			obs := [][]int{make([]int, len(want[0])), make([]int, len(want[1]))}
			for rep := 0; rep < chains; rep++ {
				ch.seed = uint64(rep)
				if err := ch.initUniform(ctx, 1); err != nil {
					t.Fatal(err)
				}
				for it := 1; it <= sweeps; it++ {
					if err := ch.sweep(ctx, 1, it, sampleDelta); err != nil {
						t.Fatal(err)
					}
				}
				for d := 0; d < 2; d++ {
					x, m := 0, 1
					for i := st.docStart[d]; i < st.docStart[d+1]; i++ {
						x += int(ch.z[i]) * m
						m *= k
					}
					obs[d][x]++
				}
			}
			for d := 0; d < 2; d++ {
				stat, dof := chiSquare(obs[d], want[d], chains)
				if crit := chiSquareCrit(dof); stat > crit {
					t.Errorf("document %d: chi-square %.1f with %d degrees of freedom > %.1f (1e-6 quantile): the chain does not sample π", d, stat, dof, crit)
				}
			}
		})
	}
}

// runChain privatizes c and runs a round from random topics and a round
// from composed rows, as a Learner does, with the given workers; it checks
// after every sweep that the incrementally kept counts equal a recount.
func runChain(t *testing.T, c *corpus.Corpus, sentences bool, workers int, debias float64, wide bool) *chain {
	t.Helper()
	ctx := context.Background()
	st := testStore(t, c, privatizeConfig{eps: 3, tau: 0.2, sentences: sentences, blockSize: 64, noiseMemory: 20 << 10, workers: workers}, 9)
	if wide {
		st.valueBound = math.MaxInt64 // as for a corpus whose sums could overflow 32 bits
	}
	const k = 8
	ch := newChain(st, k, 0.2, 0.01, 2, workers, 11, []any{"test"}, debias)
	ch.debiasDraw = debias > 0
	if ch.narrow == wide {
		t.Fatalf("chain keeps 32-bit partial counts: %v; want %v", ch.narrow, !wide)
	}
	check := func(when string) {
		t.Helper()
		c, nk := slices.Clone(ch.c), slices.Clone(ch.nk)
		if err := ch.sweep(ctx, 0, 0, countOnly); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c, ch.c) || !slices.Equal(nk, ch.nk) {
			t.Fatalf("workers=%d, %s: kept counts differ from a recount", workers, when)
		}
	}
	if err := ch.initUniform(ctx, 1); err != nil {
		t.Fatal(err)
	}
	for it := 1; it <= 4; it++ {
		if err := ch.drawPhi(ctx, 1, it); err != nil {
			t.Fatal(err)
		}
		if err := ch.sweep(ctx, 1, it, sampleDelta); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("round 1 sweep %d", it))
	}
	if err := ch.phi.set(ctx, workers, ch.rows()); err != nil {
		t.Fatal(err)
	}
	if err := ch.reinit(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if err := ch.sweep(ctx, 2, 1, sampleFull); err != nil {
		t.Fatal(err)
	}
	check("round 2 sweep 1")
	for it := 2; it <= 3; it++ {
		if err := ch.drawPhi(ctx, 2, it); err != nil {
			t.Fatal(err)
		}
		if err := ch.sweep(ctx, 2, it, sampleDelta); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("round 2 sweep %d", it))
	}
	return ch
}

// TestChainWorkersAndCounts checks that the number of workers never
// changes the topics, counts or model, and that the counts a sampleDelta
// sweep keeps equal a recount, for tokens and sentences, with and without
// debiasing, with 32- and 64-bit partial counts.
func TestChainWorkersAndCounts(t *testing.T) {
	c := randomCorpus(300, 300, 2)
	for _, tc := range []struct {
		name      string
		sentences bool
		debias    float64
		wide      bool
	}{{"tokens", false, 0, false}, {"sentences", true, 0, false}, {"tokens debiased", false, 0.01, false}, {"tokens 64-bit counts", false, 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			one := runChain(t, c, tc.sentences, 1, tc.debias, tc.wide)
			three := runChain(t, c, tc.sentences, 3, tc.debias, tc.wide)
			if !slices.Equal(one.z, three.z) || !slices.Equal(one.c, three.c) {
				t.Errorf("topics or counts differ between 1 and 3 workers")
			}
			if !slices.Equal(one.rows(), three.rows()) {
				t.Errorf("local models differ between 1 and 3 workers")
			}
			if !slices.Equal(one.phi.logRow, three.phi.logRow) {
				t.Errorf("Φ differs between 1 and 3 workers")
			}
			if tc.wide {
				narrow := runChain(t, c, tc.sentences, 2, tc.debias, false)
				if !slices.Equal(one.z, narrow.z) || !slices.Equal(one.c, narrow.c) {
					t.Errorf("32- and 64-bit partial counts give different chains")
				}
			}
		})
	}
}
