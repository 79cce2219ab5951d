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
	bUnit      float64 // b·2⁻⁵³: q = float64(r>>11)·bUnit is b·unit(r)
	pow        int     // 1/a when it is a small integer (β = 0.01 gives 100), else 0
}

func newGammaSmall(a float64) gammaSmall {
	g := gammaSmall{a: a, b: 1 + a/math.E, invA: 1 / a}
	g.bUnit = g.b * 0x1p-53
	if n := math.Round(g.invA); n == g.invA && n <= 1024 {
		g.pow = int(n)
	}
	return g
}

// drawSrc returns one Gamma(a, 1) variate, reading the 64-bit words of src
// directly.
func (g gammaSmall) drawSrc(src *chacha8.Stream) float64 {
	x, _ := g.from(g.b*unit(src.Uint64()), src, false)
	return x
}

// from finishes the GS algorithm for the first uniform already drawn and
// scaled, p = b·U, and starts over with fresh uniforms on rejection. It
// returns the variate x and, when wantLog is set, its logarithm lx, which
// stays exact where x underflows to 0.
func (g gammaSmall) from(p float64, src *chacha8.Stream, wantLog bool) (x, lx float64) {
	for {
		if p <= 1 {
			if g.pow > 0 {
				x = powInt(p, g.pow)
			} else {
				lx = math.Log(p) * g.invA
				x = math.Exp(lx)
			}
			// Accept when U ≤ e^(−x). Below 2⁻⁵³ the bound rounds to 1
			// and every U in [0, 1) passes, so U need not be drawn.
			if x < 0x1p-53 || acceptExp(x, unit(src.Uint64())) {
				break
			}
		} else {
			// Accept when U ≤ x^(a−1). Here x > 1 (b − p < b − 1 = a/e),
			// so x^(a−1) ≥ 1/x, which decides most draws without a power.
			x = -math.Log((g.b - p) * g.invA)
			if u := unit(src.Uint64()); u*x <= 1 || u <= math.Pow(x, g.a-1) {
				if wantLog {
					lx = math.Log(x)
				}
				return x, lx
			}
		}
		p = g.b * unit(src.Uint64())
	}
	if wantLog && g.pow > 0 {
		lx = math.Log(p) * g.invA
	}
	return x, lx
}

// acceptExp reports whether u ≤ e^(−x) for x ≥ 0, deciding by the
// Taylor bounds 1 − x + x²/2 − x³/6 ≤ e^(−x) ≤ 1 − x + x²/2 where they
// can, which is all but a sliver of the cases.
func acceptExp(x, u float64) bool {
	hi := 1 - x + x*x/2
	if u > hi {
		return false
	}
	if u <= hi-x*x*x/6 {
		return true
	}
	return u <= math.Exp(-x)
}

// lane starts the GS algorithm from one 64-bit word r, for a shape with
// pow > 0: the high 53 bits give the first uniform, q = b·unit(r), and the
// low 11 bits c the leading bits of the acceptance uniform U = (c + U')/2¹¹.
// When q ≤ 1 and (c+1)/2¹¹ ≤ 1 − x for x = q^pow, U < e^(−x) whatever U'
// is, so r alone decides the draw: lane returns x and true, for all but
// about 1% of the words at β = 0.01. Otherwise it returns false, and
// finish completes the draw from the stream. The Dirichlet draw of Φ runs
// this test on a column's words at once (zeroLanes).
func (g gammaSmall) lane(r uint64) (float64, bool) {
	q := float64(r>>11) * g.bUnit
	if !(q <= 1) {
		return 0, false
	}
	x := powInt(q, g.pow)
	return x, (float64(r&0x7ff)+1)*0x1p-11 <= 1-x
}

// finish completes the draw that lane did not decide from r, reading
// further words from src, and returns the variate and, when wantLog is
// set, its logarithm.
func (g gammaSmall) finish(r uint64, src *chacha8.Stream, wantLog bool) (x, lx float64) {
	q := float64(r>>11) * g.bUnit
	if !(q <= 1) {
		return g.from(q, src, wantLog)
	}
	x = powInt(q, g.pow)
	if c := float64(r & 0x7ff); (c+1)*0x1p-11 <= 1-x || acceptExp(x, (c+unit(src.Uint64()))*0x1p-11) {
		if wantLog {
			lx = g.laneLog(r)
		}
		return x, lx
	}
	return g.from(g.b*unit(src.Uint64()), src, wantLog) // rejected: start over
}

// laneLog returns log x for a draw that lane decided from r.
func (g gammaSmall) laneLog(r uint64) float64 {
	return math.Log(float64(r>>11)*g.bUnit) * g.invA
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
