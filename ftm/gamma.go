package ftm

import (
	"math"
	"math/rand/v2"
)

// logGamma returns log G for G ~ Gamma(a, 1), a > 0, computed in log space
// so that the tiny variates of small shapes (a topic with no mass at a word
// has a = β = 0.01, whose draws fall below 10⁻³⁰⁸ about once in 1,700)
// keep a finite logarithm.
//
// For a ≥ 1 it is Marsaglia and Tsang's method ("A simple method for
// generating gamma variables", ACM TOMS 26(3), 2000); for a < 1 it uses
// their boost G_a = G_{a+1}·U^{1/a}, whose logarithm is log G_{a+1} +
// (log U)/a.
func logGamma(r *rand.Rand, a float64) float64 {
	_, lg := gammaDraw(r, a)
	return lg
}

// gammaDraw returns G ~ Gamma(a, 1) and log G from one draw (see
// logGamma); G may underflow to 0 for a < 1, log G never does.
func gammaDraw(r *rand.Rand, a float64) (g, lg float64) {
	var boost float64
	small := a < 1
	if small {
		boost = math.Log(1-r.Float64()) / a // U ∈ (0, 1]
		a++
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			g = d * v
			if !small {
				return g, math.Log(g)
			}
			lg = math.Log(g) + boost
			return math.Exp(lg), lg
		}
	}
}
