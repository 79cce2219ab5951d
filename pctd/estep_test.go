package pctd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// smallProblem returns units of docs documents, each of three units of
// three tokens drawn from v words, and K×V topics with rows ∝ Exp(1).
func smallProblem(docs, k, v int, seed uint64) (*units, []float64) {
	r := rng.Derive(seed, "small")
	c := &corpus.Corpus{V: v, DocStart: []int{0}, UnitStart: []int{0}, DocUnit: []int{0}}
	for range docs {
		for range 3 {
			for range 3 {
				c.Words = append(c.Words, int32(r.IntN(v/2))) // half the words never occur
			}
			c.UnitStart = append(c.UnitStart, len(c.Words))
		}
		c.DocStart = append(c.DocStart, len(c.Words))
		c.DocUnit = append(c.DocUnit, len(c.UnitStart)-1)
	}
	phi := make([]float64, k*v)
	for t := range k {
		var s float64
		for w := range v {
			phi[t*v+w] = r.ExpFloat64()
			s += phi[t*v+w]
		}
		for w := range v {
			phi[t*v+w] /= s
		}
	}
	return buildUnits(c, 0, 0), phi
}

// drawM returns n independent draws of one iteration's M_t from fresh
// state (uniform θ) with the given noise path.
func drawM(t *testing.T, us *units, phi []float64, k, v, n int, sigma float64, path string, dropRemainder bool, seed uint64) [][]float64 {
	t.Helper()
	out := make([][]float64, n)
	for i := range out {
		nz := noise{variant: VariantUnit, path: path, std: sigma, dropRemainder: dropRemainder,
			stream: func(labels ...any) *rand.Rand { return rng.Derive(seed, append([]any{"draw", i}, labels...)...) }}
		m, err := newEM(us, k, v).iterate(context.Background(), phi, nz, 1)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = m
	}
	return out
}

// momentsDiffer compares two samples of vectors: the mean of every entry,
// the variance of every entry and the covariance of chosen pairs, each by
// a two-sample z-test of the per-draw statistic. It returns the tests
// whose |z| exceeds zMax.
func momentsDiffer(a, b [][]float64, pairs [][2]int, zMax float64) []string {
	dim := len(a[0])
	mean := func(s [][]float64) []float64 {
		m := make([]float64, dim)
		for _, x := range s {
			for i, y := range x {
				m[i] += y
			}
		}
		for i := range m {
			m[i] /= float64(len(s))
		}
		return m
	}
	ma, mb := mean(a), mean(b)
	// z compares the means of f over the two samples.
	z := func(f func(x, m []float64) float64) float64 {
		stat := func(s [][]float64, m []float64) (float64, float64) {
			var sum, sq float64
			for _, x := range s {
				y := f(x, m)
				sum += y
				sq += y * y
			}
			n := float64(len(s))
			mu := sum / n
			return mu, (sq/n - mu*mu) / (n - 1)
		}
		m1, v1 := stat(a, ma)
		m2, v2 := stat(b, mb)
		if v1+v2 == 0 {
			return 0
		}
		return (m1 - m2) / math.Sqrt(v1+v2)
	}
	var bad []string
	check := func(name string, f func(x, m []float64) float64) {
		if zz := z(f); math.Abs(zz) > zMax {
			bad = append(bad, fmt.Sprintf("%s: z = %.1f", name, zz))
		}
	}
	for i := range dim {
		check(fmt.Sprintf("mean %d", i), func(x, _ []float64) float64 { return x[i] })
		check(fmt.Sprintf("variance %d", i), func(x, m []float64) float64 { return (x[i] - m[i]) * (x[i] - m[i]) })
	}
	for _, p := range pairs {
		i, j := p[0], p[1]
		check(fmt.Sprintf("covariance %d,%d", i, j), func(x, m []float64) float64 { return (x[i] - m[i]) * (x[j] - m[j]) })
	}
	return bad
}

// TestFastPathMatchesLiteral checks that the fast noise path draws M_t
// from the same distribution as the literal one (Eq. 4 over all V
// entries of every unit), on V = 50 words, K = 4 topics, 18 units of 3
// tokens and σ = 0.3 (E-step noise of a few nats, so r̂ depends on it):
// 3,000 draws of each, and the means, variances of all 200 entries and
// the covariances of 496 pairs of entries (same word, other topic; same
// topic, next word) compared by two-sample z-tests. There are about 900
// tests; |z| > 5.8 has probability 6.6e-9 under the normal approximation
// of each, so a correct path fails with probability below 1e-5
// (Bonferroni). The draws are seeded, so the outcome is fixed; the bound
// says how unlucky a seed would have to be. The same comparison must
// reject a deliberately wrong fast path that leaves out the projected
// remainder σ(I − P)ZCᵀ.
func TestFastPathMatchesLiteral(t *testing.T) {
	const k, v, n, sigma, zMax = 4, 50, 3000, 0.3, 5.8
	us, phi := smallProblem(6, k, v, 1)
	var pairs [][2]int
	for w := range v {
		for a := range k {
			for b := a + 1; b < k; b++ {
				pairs = append(pairs, [2]int{w*k + a, w*k + b})
			}
			if w+1 < v {
				pairs = append(pairs, [2]int{w*k + a, (w+1)*k + a})
			}
		}
	}
	lit := drawM(t, us, phi, k, v, n, sigma, PathLiteral, false, 10)
	fast := drawM(t, us, phi, k, v, n, sigma, PathFast, false, 20)
	if bad := momentsDiffer(fast, lit, pairs, zMax); len(bad) > 0 {
		t.Errorf("fast path differs from the literal path in %d of the moment tests, e.g. %v", len(bad), bad[:min(len(bad), 5)])
	}
	wrong := drawM(t, us, phi, k, v, n, sigma, PathFast, true, 30)
	if bad := momentsDiffer(wrong, lit, pairs, zMax); len(bad) < 50 {
		t.Errorf("the fast path without its remainder term fails only %d moment tests (%v); want the comparison to reject it clearly", len(bad), bad)
	}
}

// TestNoNoisePathsAgree checks that without noise every variant computes
// the same E-step: the SSP path with σ = 0 and the unit path with σ = 0
// give identical M_t and θ.
func TestNoNoisePathsAgree(t *testing.T) {
	const k, v = 3, 20
	us, phi := smallProblem(5, k, v, 2)
	a, b := newEM(us, k, v), newEM(us, k, v)
	ma, err := a.iterate(context.Background(), phi, noise{variant: VariantSSP}, 1)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := b.iterate(context.Background(), phi, noise{variant: VariantUnit, path: PathLiteral}, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ma {
		if ma[i] != mb[i] {
			t.Fatalf("M_t entry %d: %v (ssp, σ = 0) and %v (unit, σ = 0)", i, ma[i], mb[i])
		}
	}
	// Without noise, Σ_k M(w, k) is w's count: every r̂_u sums to 1.
	counts := make([]float64, v)
	for i, w := range us.w {
		counts[w] += us.c[i]
	}
	for w := range v {
		var s float64
		for t := range k {
			s += ma[w*k+t]
		}
		if math.Abs(s-counts[w]) > 1e-9 {
			t.Errorf("Σ_k M(%d, k) = %v; want the word's count %v", w, s, counts[w])
		}
	}
}
