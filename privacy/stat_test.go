package privacy

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// Statistical tests use fixed seeds and a false-failure rate of at most 1e-5
// each:
//
//   - zCrit = 4.41717 is the two-sided 1e-5 quantile of the standard normal,
//     used for means, variances and proportions over ≥ 10⁵ draws, where the
//     central limit approximation is accurate far beyond that tail;
//   - chi-square statistics are compared with the 1 − 1e-6 quantile of
//     χ²(bins − 1), bins merged so that every expected count is ≥ 20.
const zCrit = 4.41717

// chiSquareCrit returns the 1 − 1e-6 quantile of χ² with bins−1 degrees of
// freedom.
func chiSquareCrit(bins int) float64 {
	return distuv.ChiSquared{K: float64(bins - 1)}.Quantile(1 - 1e-6)
}

// pmf is a probability mass function on the integers, given on [lo, hi] with
// the mass outside folded into the end points' tail bins by chiSquare.
type pmf struct {
	lo int64
	p  []float64 // p[i] = P(X = lo + i)
}

// moments returns the mean, variance and fourth central moment of f.
func (f pmf) moments() (mean, variance, m4 float64) {
	for i, p := range f.p {
		mean += p * float64(f.lo+int64(i))
	}
	for i, p := range f.p {
		d := float64(f.lo+int64(i)) - mean
		variance += p * d * d
		m4 += p * d * d * d * d
	}
	return mean, variance, m4
}

// discreteLaplacePMF returns P(Z = z) ∝ e^(−λ|z|) on |z| ≤ reach.
func discreteLaplacePMF(lambda float64, reach int64) pmf {
	a := math.Exp(-lambda)
	f := pmf{lo: -reach, p: make([]float64, 2*reach+1)}
	for z := -reach; z <= reach; z++ {
		f.p[z+reach] = (1 - a) / (1 + a) * math.Pow(a, math.Abs(float64(z)))
	}
	return f
}

// discreteGaussianPMF returns P(Z = z) ∝ e^(−z²/2σ²) on |z| ≤ reach.
func discreteGaussianPMF(sigma float64, reach int64) pmf {
	f := pmf{lo: -reach, p: make([]float64, 2*reach+1)}
	var sum float64
	for z := -reach; z <= reach; z++ {
		v := math.Exp(-float64(z*z) / (2 * sigma * sigma))
		f.p[z+reach] = v
		sum += v
	}
	for i := range f.p {
		f.p[i] /= sum
	}
	return f
}

// checkMoments asserts the sample mean and variance of xs against f's
// moments: |mean − μ| ≤ zCrit·√(σ²/N) and |s² − σ²| ≤ zCrit·√((μ₄ − σ⁴)/N).
func checkMoments(t *testing.T, name string, xs []int64, f pmf) {
	t.Helper()
	mu, v, m4 := f.moments()
	n := float64(len(xs))
	var sum float64
	for _, x := range xs {
		sum += float64(x)
	}
	mean := sum / n
	var ss float64
	for _, x := range xs {
		d := float64(x) - mean
		ss += d * d
	}
	s2 := ss / (n - 1)
	if tol := zCrit * math.Sqrt(v/n); math.Abs(mean-mu) > tol {
		t.Errorf("%s: sample mean = %.5f; want %.5f ± %.5f", name, mean, mu, tol)
	}
	if tol := zCrit * math.Sqrt((m4-v*v)/n); math.Abs(s2-v) > tol {
		t.Errorf("%s: sample variance = %.5f; want %.5f ± %.5f", name, s2, v, tol)
	}
}

// chiSquare returns Pearson's statistic of the integer samples xs against
// f and the number of bins used: outcomes are merged from each end inwards
// until every bin expects at least 20 draws.
func chiSquare(xs []int64, f pmf) (stat float64, bins int) {
	n := float64(len(xs))
	obs := make([]float64, len(f.p))
	for _, x := range xs {
		i := x - f.lo
		i = max(0, min(i, int64(len(f.p)-1)))
		obs[i]++
	}
	exp := make([]float64, len(f.p))
	var inside float64
	for i, p := range f.p {
		exp[i] = p * n
		inside += p
	}
	// Tail mass beyond the support goes to the end bins, split evenly
	// (the pmfs here are symmetric or one-sided with negligible tails).
	exp[0] += (1 - inside) * n / 2
	exp[len(exp)-1] += (1 - inside) * n / 2
	var eb, ob []float64
	var ae, ao float64
	for i := range exp {
		ae += exp[i]
		ao += obs[i]
		if ae >= 20 {
			eb, ob = append(eb, ae), append(ob, ao)
			ae, ao = 0, 0
		}
	}
	if len(eb) > 0 {
		eb[len(eb)-1] += ae
		ob[len(ob)-1] += ao
	}
	for i := range eb {
		d := ob[i] - eb[i]
		stat += d * d / eb[i]
	}
	return stat, len(eb)
}

func checkChiSquare(t *testing.T, name string, xs []int64, f pmf) {
	t.Helper()
	stat, bins := chiSquare(xs, f)
	if bins < 2 {
		return
	}
	if crit := chiSquareCrit(bins); stat > crit {
		t.Errorf("%s: chi-square = %.2f over %d bins; want ≤ %.2f", name, stat, bins, crit)
	}
}

// checkProportion asserts that k successes in n trials agree with p.
func checkProportion(t *testing.T, name string, k, n int, p float64) {
	t.Helper()
	got := float64(k) / float64(n)
	if tol := zCrit * math.Sqrt(p*(1-p)/float64(n)); math.Abs(got-p) > tol {
		t.Errorf("%s: proportion = %.6f (%d of %d); want %.6f ± %.6f", name, got, k, n, p, tol)
	}
}
