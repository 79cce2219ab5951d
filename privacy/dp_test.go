package privacy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// nDP is the number of draws per neighbouring input in the empirical DP
// tests (the CI size; a nightly run would take 10⁶).
const nDP = 100000

// dpStatistic returns max over both directions of
// Σ_bins max(0, p̂_A(b) − e^ε·p̂_B(b)) for bin indices in [0, k).
func dpStatistic(a, b []int, k int, eps float64) float64 {
	pa, pb := make([]float64, k), make([]float64, k)
	for _, x := range a {
		pa[x] += 1 / float64(len(a))
	}
	for _, x := range b {
		pb[x] += 1 / float64(len(b))
	}
	var ab, ba float64
	for i := range pa {
		ab += math.Max(0, pa[i]-math.Exp(eps)*pb[i])
		ba += math.Max(0, pb[i]-math.Exp(eps)*pa[i])
	}
	return math.Max(ab, ba)
}

// dpTolerance bounds how far dpStatistic can exceed the binned δ by chance.
// For the true bin probabilities p_A, p_B the statistic is at most
// δ + ‖p̂_A − p_A‖₁ + e^ε‖p̂_B − p_B‖₁, and by Weissman et al. (2003),
// P(‖p̂ − p‖₁ ≥ t) ≤ 2^k·e^(−n t²/2); with failure 0.5e-5 for each
// empirical law, t = √(2(k ln 2 + ln 2e5)/n) and the test's false-failure
// rate is at most 1e-5.
func dpTolerance(k, n int, eps float64) float64 {
	tl := math.Sqrt(2 * (float64(k)*math.Ln2 + math.Log(2e5)) / float64(n))
	return tl * (1 + math.Exp(eps))
}

// dpCase samples a mechanism on two neighbouring inputs and bins outputs.
type dpCase struct {
	name  string
	eps   float64
	delta float64 // the δ(ε) the mechanism claims at this ε
	k     int     // bins
	a, b  func(r *rand.Rand) int
}

func runDP(t *testing.T, c dpCase) (stat, tol float64) {
	t.Helper()
	ra, rb := rng.Derive(31, c.name, "A"), rng.Derive(31, c.name, "B")
	a, b := make([]int, nDP), make([]int, nDP)
	for i := range a {
		a[i], b[i] = c.a(ra), c.b(rb)
	}
	return dpStatistic(a, b, c.k, c.eps), dpTolerance(c.k, nDP, c.eps)
}

// valueBins bins a real output into k bins of width w starting at lo, with
// both tails in the end bins.
func valueBins(x, lo, w float64, k int) int {
	i := int(math.Floor((x - lo) / w))
	return max(0, min(i, k-1))
}

// discreteGaussianDelta returns δ(ε) = Σ_y max(0, P(y − s) − e^ε P(y)) for
// the discrete Gaussian with parameter σ (grid steps) and shift s.
func discreteGaussianDelta(sigma float64, s int64, eps float64) float64 {
	f := discreteGaussianPMF(sigma, int64(40*sigma)+s+40)
	p := func(z int64) float64 {
		i := z - f.lo
		if i < 0 || i >= int64(len(f.p)) {
			return 0
		}
		return f.p[i]
	}
	var d float64
	for z := f.lo; z < f.lo+int64(len(f.p)); z++ {
		d += math.Max(0, p(z-s)-math.Exp(eps)*p(z))
	}
	return d
}

func gdpDelta(eps, mu float64) float64 {
	phi := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	return phi(-eps/mu+mu/2) - math.Exp(eps)*phi(-eps/mu-mu/2)
}

// TestEmpiricalDP tests the DP predicate: neighbouring inputs, binned
// outputs, Σ max(0, p̂_A − e^ε p̂_B) ≤ δ + tolerance — and a broken mechanism
// (half the noise) must fail the same check, which shows the test can fail.
func TestEmpiricalDP(t *testing.T) {
	const eps = 1.0
	lap := func(e float64) *Laplace {
		m, err := NewLaplace(LaplaceConfig{Epsilon: e})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	lapCase := func(name string, m *Laplace) dpCase {
		const k = 40 // bins of width ¼ over [−5, 5]
		rel := func(x0 float64) func(r *rand.Rand) int {
			return func(r *rand.Rand) int {
				x := []float64{x0}
				if _, err := m.Release(r, x); err != nil {
					t.Fatal(err)
				}
				return valueBins(x[0], -5, 0.25, k)
			}
		}
		return dpCase{name: name, eps: eps, k: k, a: rel(0), b: rel(1)}
	}
	gauss := func(sigma float64) *Gaussian {
		m, err := NewGaussian(GaussianConfig{Sigma: sigma})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	gaussCase := func(name string, m *Gaussian, claimedSigma float64) dpCase {
		const k = 40
		rel := func(x0 float64) func(r *rand.Rand) int {
			return func(r *rand.Rand) int {
				x := []float64{x0}
				if _, err := m.Release(r, x); err != nil {
					t.Fatal(err)
				}
				return valueBins(x[0], -4, 0.25, k)
			}
		}
		g := m.Granularity()
		return dpCase{name: name, eps: eps, delta: discreteGaussianDelta(claimedSigma/g, int64(1/g), eps), k: k, a: rel(0), b: rel(1)}
	}
	cont := func(sigma float64) func(x0 float64) func(r *rand.Rand) int {
		m, err := NewContinuousGaussian(GaussianConfig{Sigma: sigma})
		if err != nil {
			t.Fatal(err)
		}
		return func(x0 float64) func(r *rand.Rand) int {
			return func(r *rand.Rand) int {
				x := []float64{x0}
				if _, err := m.Release(r, x); err != nil {
					t.Fatal(err)
				}
				return valueBins(x[0], -4, 0.25, 40)
			}
		}
	}
	krr := func(e float64) func(v int) func(r *rand.Rand) int {
		m, err := NewKRR(e, 4, "")
		if err != nil {
			t.Fatal(err)
		}
		return func(v int) func(r *rand.Rand) int {
			return func(r *rand.Rand) int { return m.Perturb(r, v) }
		}
	}
	good, broken := cont(1), cont(0.5)
	kGood, kBroken := krr(eps), krr(2*eps)
	tests := []struct {
		c      dpCase
		broken bool
	}{
		{c: lapCase("laplace", lap(eps))},
		{c: lapCase("laplace, noise halved", lap(2*eps)), broken: true},
		{c: gaussCase("discrete gaussian", gauss(1), 1)},
		{c: gaussCase("discrete gaussian, noise halved", gauss(0.5), 1), broken: true},
		{c: dpCase{name: "continuous gaussian", eps: eps, delta: gdpDelta(eps, 1), k: 40, a: good(0), b: good(1)}},
		{c: dpCase{name: "continuous gaussian, noise halved", eps: eps, delta: gdpDelta(eps, 1), k: 40, a: broken(0), b: broken(1)}, broken: true},
		{c: dpCase{name: "krr", eps: eps, k: 4, a: kGood(0), b: kGood(1)}},
		{c: dpCase{name: "krr, noise halved", eps: eps, k: 4, a: kBroken(0), b: kBroken(1)}, broken: true},
	}
	for _, tt := range tests {
		t.Run(tt.c.name, func(t *testing.T) {
			stat, tol := runDP(t, tt.c)
			if !tt.broken && stat > tt.c.delta+tol {
				t.Errorf("empirical DP statistic = %.4f; want ≤ δ + tolerance = %.4f + %.4f", stat, tt.c.delta, tol)
			}
			if tt.broken && stat <= tt.c.delta+tol {
				t.Errorf("broken mechanism: empirical DP statistic = %.4f; want > δ + tolerance = %.4f + %.4f (the test cannot tell)", stat, tt.c.delta, tol)
			}
		})
	}
}
