package lda

import (
	"math"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/internal/chacha8"
)

// Gamma(a, 1) variates, exact up to floating point, for any shape a > 0:
//   - a ≥ 1: gammaMT, Marsaglia and Tsang, "A simple method for generating
//     gamma variables", ACM TOMS 26(3), 2000;
//   - a < 1: gammaSmall, Ahrens and Dieter's GS algorithm, "Computer methods
//     for sampling from gamma, beta, Poisson and binomial distributions",
//     Computing 12, 1974 — one uniform and one power per draw almost
//     always, which matters because the Dirichlet draw of Φ makes K·V draws
//     per iteration, most of them of shape β.

// gammaMT is Marsaglia and Tsang's method for a ≥ 1.
func gammaMT(r *rand.Rand, a float64) float64 {
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
		if u < 1-0.0331*x2*x2 {
			return d * v
		}
		if math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// gammaSmall holds the constants of the GS algorithm for one shape a < 1.
type gammaSmall struct {
	a, b, invA float64
	pow        int // 1/a when it is a small integer (β = 0.01 gives 100), else 0
}

func newGammaSmall(a float64) gammaSmall {
	g := gammaSmall{a: a, b: 1 + a/math.E, invA: 1 / a}
	if n := math.Round(g.invA); n == g.invA && n <= 1024 {
		g.pow = int(n)
	}
	return g
}

// drawSrc returns one Gamma(a, 1) variate, reading the 64-bit words of src
// directly.
func (g gammaSmall) drawSrc(src *chacha8.Stream) float64 {
	x, _ := g.from(g.b*unit(src.Uint64()), src)
	return x
}

// from finishes the GS algorithm for the first uniform already drawn and
// scaled, p = b·U, and starts over with fresh uniforms on rejection. It
// returns the variate x and its logarithm lx, which stays exact where x
// underflows to 0. Callers may accept the common case themselves first —
// p ≤ 1 and p^(1/a) < 2⁻⁵³, where acceptance is certain — and call from
// only for the rest, as long as they draw the same uniforms.
func (g gammaSmall) from(p float64, src *chacha8.Stream) (x, lx float64) {
	for {
		if p <= 1 {
			if g.pow > 0 {
				x = powInt(p, g.pow)
				lx = math.Inf(1) // computed below only when needed
			} else {
				lx = math.Log(p) * g.invA
				x = math.Exp(lx)
			}
			// Accept when U ≤ e^(−x). Below 2⁻⁵³ the bound rounds to 1
			// and every U in [0, 1) passes, so U need not be drawn; the
			// squeeze e^(−x) ≥ 1 − x spares most exponentials.
			if x < 0x1p-53 {
				break
			}
			if u := unit(src.Uint64()); u <= 1-x || u <= math.Exp(-x) {
				break
			}
		} else {
			x = -math.Log((g.b - p) * g.invA)
			if unit(src.Uint64()) <= math.Pow(x, g.a-1) {
				return x, math.Log(x)
			}
		}
		p = g.b * unit(src.Uint64())
	}
	if math.IsInf(lx, 1) {
		lx = math.Log(p) * g.invA
	}
	return x, lx
}

// pow100 returns x^100 by a fixed chain of eight multiplications: the
// power of the GS algorithm for the default β = 0.01, small enough to be
// inlined into the Dirichlet draw.
func pow100(x float64) float64 {
	x2 := x * x
	x4 := x2 * x2
	x8 := x4 * x4
	x16 := x8 * x8
	x32 := x16 * x16
	return x32 * x32 * (x32 * x4)
}

// powInt returns x^n for n ≥ 1 by repeated squaring. n is the same for
// every draw of a Dirichlet draw, so the branches are predicted.
func powInt(x float64, n int) float64 {
	y := 1.0
	for n > 0 {
		if n&1 == 1 {
			y *= x
		}
		x *= x
		n >>= 1
	}
	return y
}
