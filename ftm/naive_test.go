package ftm

import (
	"context"
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// gibbsSweep is the naive private Gibbs sampler of FTM Eq. 6, the
// reference the MH kernel is measured against: for every item of the
// first docs documents it expands n̂_i to a dense V-vector and computes
// ℓ_i(k) = Σ_{w<V} n̂_iw·log φ_kw for every topic — O(K·V) per item — then
// draws z_i from (C_dk^(−i) + α)·exp(ℓ_i(k)) exactly. It keeps no counts;
// it returns the number of items sampled.
func (ch *chain) gibbsSweep(docs int, seed uint64) int {
	st := ch.st
	k, v := ch.k, ch.v
	r := rng.Derive(seed, "gibbs")
	rd := st.newReader()
	dense := make([]float64, v)
	lp := make([]float64, k)
	cnt := make([]int, k)
	n := 0
	for b := 0; b+1 < len(st.blocks) && n < docs; b++ {
		rd.openBlock(b)
		for d := st.blocks[b]; d < st.blocks[b+1] && n < docs; d, n = d+1, n+1 {
			rd.openDoc(d)
			zd := ch.z[st.docStart[d]:st.docStart[d+1]]
			clear(cnt)
			for _, t := range zd {
				cnt[t]++
			}
			for j := range zd {
				es := st.decodeBody(nil, rd.next(st.docStart[d]+j))
				clear(dense)
				for _, e := range es {
					dense[e.w] = float64(e.s) * st.unit
				}
				cnt[zd[j]]--
				m := math.Inf(-1)
				for t := 0; t < k; t++ {
					row := ch.phi.logRow[t*v : (t+1)*v]
					var l float64
					for w, x := range dense {
						if x != 0 { // 0·log 0 is 0 in the count vector's exponential form
							l += x * float64(row[w])
						}
					}
					lp[t] = math.Log(float64(cnt[t])+ch.alpha) + l
					m = math.Max(m, lp[t])
				}
				var s float64
				for t := range lp {
					lp[t] = math.Exp(lp[t] - m)
					s += lp[t]
				}
				u := r.Float64() * s
				t := 0
				for ; t < k-1 && u >= lp[t]; t++ {
					u -= lp[t]
				}
				zd[j] = uint16(t)
				cnt[t]++
			}
		}
	}
	items := 0
	for d := 0; d < min(docs, len(st.docStart)-1); d++ {
		items += st.docStart[d+1] - st.docStart[d]
	}
	return items
}

// TestGibbsReferenceStationary checks the naive Gibbs sampler against the
// same exact enumeration as TestChainStationary (same problem, chains and
// threshold), so that the benchmark compares two correct samplers.
func TestGibbsReferenceStationary(t *testing.T) {
	const (
		v, k   = 6, 3
		chains = 10000
		sweeps = 10
	)
	c := tinyCorpus(v, [][][]int32{{{0, 1}, {1, 2, 2}, {4}}, {{5, 3}, {3}}})
	c = &corpus.Corpus{V: v, Words: c.Words, DocStart: c.DocStart}
	st := testStore(t, c, privatizeConfig{eps: 1.5, tau: 0.2}, 3)
	ctx := context.Background()
	ch := newChain(st, k, 0.3, 0.01, 1, 1, 0, []any{"test"}, 0)
	if err := ch.phi.set(ctx, 1, dirichletRows(k, v, 1, 4)); err != nil {
		t.Fatal(err)
	}
	want := [][]float64{exactJoint(ch, 0), exactJoint(ch, 1)}
	obs := [][]int{make([]int, len(want[0])), make([]int, len(want[1]))}
	for rep := 0; rep < chains; rep++ {
		ch.seed = uint64(rep)
		if err := ch.initUniform(ctx, 1); err != nil {
			t.Fatal(err)
		}
		for it := 0; it < sweeps; it++ {
			ch.gibbsSweep(2, uint64(rep*sweeps+it))
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
			t.Errorf("document %d: chi-square %.1f with %d degrees of freedom > %.1f", d, stat, dof, crit)
		}
	}
}

// BenchmarkNaiveGibbs measures the naive private Gibbs sampler (Eq. 6) on
// the corpus and setting of BenchmarkPrivateMH, over its first 20
// documents (2,000 tokens).
func BenchmarkNaiveGibbs(b *testing.B) {
	ch := benchChain(b, 1000, DefaultNoiseMemory, 1, 1)
	n := 0
	seed := uint64(0)
	for b.Loop() {
		seed++
		n += ch.gibbsSweep(20, seed)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tokens/s")
}
