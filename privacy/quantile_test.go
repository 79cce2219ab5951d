package privacy

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// quantilePMF returns the exponential mechanism's law over 1..max for the
// utility −|#{x < c} − q·n| at exponent factor h (ε/2 for the mechanism),
// computed directly in float64, in log space and normalized by the largest
// term; sign = −1 is a deliberately wrong law with the utility not negated.
func quantilePMF(xs []int, q float64, max int, h, sign float64) pmf {
	f := pmf{lo: 1, p: make([]float64, max)}
	logw := make([]float64, max)
	for c := 1; c <= max; c++ {
		k := 0
		for _, x := range xs {
			if x < c {
				k++
			}
		}
		logw[c-1] = -sign * h * math.Abs(float64(k)-q*float64(len(xs)))
	}
	top := slices.Max(logw)
	var sum float64
	for i, l := range logw {
		f.p[i] = math.Exp(l - top)
		sum += f.p[i]
	}
	for i := range f.p {
		f.p[i] /= sum
	}
	return f
}

// drawPMF samples f by inversion of a float64 uniform: the deliberately
// wrong samplers of the power check, which need not be exact.
func drawPMF(r *rand.Rand, f pmf, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		u, acc := r.Float64(), 0.0
		out[i] = f.lo + int64(len(f.p)-1)
		for j, p := range f.p {
			if acc += p; u < acc {
				out[i] = f.lo + int64(j)
				break
			}
		}
	}
	return out
}

// quantileDraws releases the quantile of xs n times from one seeded stream.
func quantileDraws(t *testing.T, cfg QuantileConfig, xs []int, n int, labels ...any) []int64 {
	t.Helper()
	m, err := NewQuantile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.Derive(41, labels...)
	out := make([]int64, n)
	for i := range out {
		c, _, err := m.Release(r, xs)
		if err != nil {
			t.Fatal(err)
		}
		if c < 1 || c > cfg.Max {
			t.Fatalf("Release = %d; want a candidate in [1, %d]", c, cfg.Max)
		}
		out[i] = int64(c)
	}
	return out
}

// TestQuantileDistribution checks the sampler's law against the exact
// exponential-mechanism probabilities on tiny datasets by Pearson's
// chi-square: 200,000 draws, bins merged to ≥ 20 expected draws, compared
// with the 1 − 1e-6 quantile of χ²(bins − 1) (stat_test.go), so each case
// fails by chance with probability 1e-6 and the three cases together with
// at most 3e-6 ≤ 1e-5. It also checks that the same statistic rejects
// deliberately wrong samplers at the same sample size: the mechanism at ε
// instead of ε/2 in the exponent (the real sampler, configured with 2ε),
// and the utility not negated (inversion of the wrong law). Those checks
// pass on a correct sampler unless the statistic by chance falls below the
// critical value, which at their non-centralities (printed on failure, in
// the thousands) has a probability far below 1e-6.
func TestQuantileDistribution(t *testing.T) {
	const n = 200000
	cases := []struct {
		name string
		xs   []int
		q    float64
		max  int
		eps  float64
	}{
		{"median of six", []int{1, 2, 2, 3, 5, 8}, 0.5, 10, 1},
		{"95th percentile of twenty", []int{3, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 9, 10, 12, 15, 20}, 0.95, 24, 2},
		{"values outside the range", []int{-3, 0, 0, 1, 4, 30, 30, 99}, 0.25, 6, 0.7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := QuantileConfig{Epsilon: tc.eps, Quantile: tc.q, Max: tc.max}
			want := quantilePMF(tc.xs, tc.q, tc.max, tc.eps/2, 1)
			got := quantileDraws(t, cfg, tc.xs, n, "quantile", tc.name)
			checkChiSquare(t, "quantile "+tc.name, got, want)

			// Power: wrong samplers must fail the same check.
			wrongs := map[string][]int64{
				"ε instead of ε/2":    quantileDraws(t, QuantileConfig{Epsilon: 2 * tc.eps, Quantile: tc.q, Max: tc.max}, tc.xs, n, "quantile wrong", tc.name),
				"utility not negated": drawPMF(rng.Derive(42, "quantile wrong sign", tc.name), quantilePMF(tc.xs, tc.q, tc.max, tc.eps/2, -1), n),
			}
			for name, xs := range wrongs {
				stat, bins := chiSquare(xs, want)
				if crit := chiSquareCrit(bins); !(stat > crit) {
					t.Errorf("%s: chi-square of a sampler with %s = %.1f over %d bins; want > %.1f (the check must reject it)", tc.name, name, stat, bins, crit)
				}
			}
		})
	}
}

// TestQuantileNeighbours checks the privacy analysis on the exact law: for
// datasets differing by one value added, removed or replaced, no output's
// probability changes by more than a factor e^ε.
func TestQuantileNeighbours(t *testing.T) {
	base := []int{2, 3, 3, 4, 6, 6, 7, 9, 12}
	const max, eps = 14, 1.5
	neighbours := map[string][]int{
		"added short":   append(slices.Clone(base), 1),
		"added long":    append(slices.Clone(base), 40),
		"removed":       base[1:],
		"replaced":      append(slices.Clone(base[:8]), 1),
		"replaced long": append([]int{13}, base[1:]...),
	}
	for _, q := range []float64{0.05, 0.5, 0.95} {
		a := quantilePMF(base, q, max, eps/2, 1)
		for name, nb := range neighbours {
			b := quantilePMF(nb, q, max, eps/2, 1)
			for i := range a.p {
				if r := math.Abs(math.Log(a.p[i] / b.p[i])); r > eps+1e-12 {
					t.Errorf("q = %v, %s: |ln P(c = %d) ratio| = %.6f; want ≤ ε = %v", q, name, i+1, r, eps)
				}
			}
		}
	}
}

// TestQuantileLarge releases quantiles of 100,000 values, where a naive
// e^(ε·u/2) with unnormalized utilities would underflow or overflow: every
// release must be within the exponential mechanism's accuracy bound of the
// best candidate at β = 1e-7: each release falls outside with probability
// at most 1e-7, so the 60 releases fail by chance with at most 6e-6.
func TestQuantileLarge(t *testing.T) {
	r := rng.Derive(43, "quantile data")
	xs := make([]int, 100000)
	for i := range xs {
		xs[i] = 1 + int(r.ExpFloat64()*12) // long-tailed lengths
	}
	const q, max = 0.95, 1000
	hist := make([]int, max+1)
	for _, x := range xs {
		hist[min(x, max)]++
	}
	below := make([]int, max) // below[c−1] = #{x < c}; every x ≥ 1
	for c := 2; c <= max; c++ {
		below[c-1] = below[c-2] + hist[c-1]
	}
	best := math.Inf(1)
	for _, k := range below {
		best = math.Min(best, math.Abs(float64(k)-q*float64(len(xs))))
	}
	for _, eps := range []float64{0.01, 1, 50} {
		m, err := NewQuantile(QuantileConfig{Epsilon: eps, Quantile: q, Max: max, Unit: "document"})
		if err != nil {
			t.Fatal(err)
		}
		rr := rng.Derive(44, "quantile large", eps)
		// The exponential mechanism's bound at β = 1e-7.
		tol := 2 / eps * (math.Log(max) + math.Log(1e7))
		for range 20 {
			c, ev, err := m.Release(rr, xs)
			if err != nil {
				t.Fatal(err)
			}
			if ev != (Event{Mechanism: MechanismExponential, Epsilon: eps, Sensitivity: 1, Unit: "document", Count: 1}) {
				t.Errorf("Event = %+v; want the exponential mechanism at ε = %v per document", ev, eps)
			}
			if d := math.Abs(float64(below[c-1]) - q*float64(len(xs))); d > best+tol {
				t.Errorf("ε = %v: release %d has #{x < c} = %d, %.0f from q·n; want within %.0f of the best %.0f", eps, c, below[c-1], d, tol, best)
			}
		}
	}
}

// TestQuantileEdges covers the data a party may have: values longer than
// every candidate, all values equal, one candidate. At ε = 20 each case's
// wanted candidates hold all but at most 3·e^(−20·2/2) < 7e-9 of the exact
// law (the closest unwanted candidate is 2 counts further from q·n), so 50
// draws fall outside with probability below 4e-7.
func TestQuantileEdges(t *testing.T) {
	for _, tc := range []struct {
		name string
		xs   []int
		q    float64
		max  int
		want []int
	}{
		// Two values of 3 and eight longer than every candidate: q·n = 5,
		// #{x < c} is 0 (distance 5) up to c = 3 and 2 (distance 3) above.
		{"longer than the candidates", []int{3, 3, 50, 60, 70, 80, 90, 100, 110, 120}, 0.5, 10, []int{4, 5, 6, 7, 8, 9, 10}},
		// All 5: #{x < c} is 0 up to 5 and 200 above; q·n = 190.
		{"all equal", slices.Repeat([]int{5}, 200), 0.95, 10, []int{6, 7, 8, 9, 10}},
		{"one candidate", []int{3, 4}, 0.5, 1, []int{1}},
	} {
		got := quantileDraws(t, QuantileConfig{Epsilon: 20, Quantile: tc.q, Max: tc.max}, tc.xs, 50, "edges", tc.name)
		for _, c := range got {
			if !slices.Contains(tc.want, int(c)) {
				t.Errorf("%s: release %d; want one of %v", tc.name, c, tc.want)
			}
		}
	}
	// No data: every candidate is equally likely.
	got := quantileDraws(t, QuantileConfig{Epsilon: 1, Quantile: 0.95, Max: 5}, nil, 100000, "edges", "none")
	checkChiSquare(t, "quantile of no data", got, pmf{lo: 1, p: []float64{0.2, 0.2, 0.2, 0.2, 0.2}})
}

func TestQuantileConfigValidate(t *testing.T) {
	for _, c := range []QuantileConfig{
		{Epsilon: 0, Quantile: 0.5, Max: 10},
		{Epsilon: math.Inf(1), Quantile: 0.5, Max: 10},
		{Epsilon: 1, Quantile: 0, Max: 10},
		{Epsilon: 1, Quantile: 1, Max: 10},
		{Epsilon: 1, Quantile: math.NaN(), Max: 10},
		{Epsilon: 1, Quantile: 0.5, Max: 0},
		{Epsilon: 1, Quantile: 0.5, Max: MaxQuantileCandidates + 1},
	} {
		if _, err := NewQuantile(c); !errors.Is(err, ErrInvalidParameter) {
			t.Errorf("NewQuantile(%+v) = %v; want an error wrapping ErrInvalidParameter", c, err)
		}
	}
	m, err := NewQuantile(QuantileConfig{Epsilon: 1, Quantile: 0.5, Max: 10})
	if err != nil {
		t.Fatal(err)
	}
	if u := m.Config().Unit; u != DefaultQuantileUnit {
		t.Errorf("Config().Unit = %q; want %q", u, DefaultQuantileUnit)
	}
	if err := m.Event().Validate(); err != nil {
		t.Errorf("Event().Validate() = %v; want nil", err)
	}
}

// TestQuantileReproducible checks that a seeded stream reproduces a
// release.
func TestQuantileReproducible(t *testing.T) {
	xs := []int{4, 8, 15, 16, 23, 42}
	a := quantileDraws(t, QuantileConfig{Epsilon: 0.5, Quantile: 0.5, Max: 50}, xs, 100, "repro")
	b := quantileDraws(t, QuantileConfig{Epsilon: 0.5, Quantile: 0.5, Max: 50}, xs, 100, "repro")
	if !slices.Equal(a, b) {
		t.Errorf("two seeded runs differ: %v vs %v", a[:5], b[:5])
	}
}
