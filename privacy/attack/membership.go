package attack

import (
	"math"
	"slices"
)

// AUC returns the area under the ROC curve of the scores of members (in)
// against non-members (out): the probability that a random member scores
// above a random non-member, ties counting one half.
func AUC(in, out []float64) float64 {
	if len(in) == 0 || len(out) == 0 {
		return math.NaN()
	}
	o := slices.Sorted(slices.Values(out))
	var s float64
	for _, x := range in {
		lt, _ := slices.BinarySearch(o, x)
		le, _ := slices.BinarySearch(o, math.Nextafter(x, math.Inf(1)))
		s += float64(lt) + float64(le-lt)/2
	}
	return s / (float64(len(in)) * float64(len(out)))
}

// TPRAtFPR returns the largest true-positive rate of a threshold test on
// the scores whose false-positive rate is at most fpr.
func TPRAtFPR(in, out []float64, fpr float64) float64 {
	if len(in) == 0 || len(out) == 0 {
		return math.NaN()
	}
	o := slices.Sorted(slices.Values(out))
	// The smallest threshold t with #(out > t) ≤ fpr·n.
	allowed := int(math.Floor(fpr * float64(len(o))))
	t := o[len(o)-1-min(allowed, len(o)-1)]
	if allowed >= len(o) {
		t = math.Inf(-1)
	}
	var tp int
	for _, x := range in {
		if x > t {
			tp++
		}
	}
	return float64(tp) / float64(len(in))
}

// MaxTPR returns the largest true-positive rate any test can have at
// false-positive rate fpr against an (ε, δ)-DP release:
// min(1, e^ε·fpr + δ, 1 − e^(−ε)·(1 − δ − fpr)) (Kairouz, Oh and Viswanath
// 2015).
func MaxTPR(eps, delta, fpr float64) float64 {
	return max(0, min(1, math.Exp(eps)*fpr+delta, 1-math.Exp(-eps)*(1-delta-fpr)))
}

// MaxAUC returns the largest AUC any membership test can have against an
// (ε, δ)-DP release: the area under MaxTPR, integrated by the midpoint rule
// on 10⁵ cells (MaxTPR is concave, so the rule errs low by less than 10⁻⁹;
// the result is rounded up by 10⁻⁶).
func MaxAUC(eps, delta float64) float64 {
	const n = 100000
	var s float64
	for i := range n {
		s += MaxTPR(eps, delta, (float64(i)+0.5)/n)
	}
	return min(1, s/n+1e-6)
}
