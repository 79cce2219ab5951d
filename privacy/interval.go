package privacy

import (
	"math"
	"math/big"
)

// This file holds the rigorous arithmetic the exact samplers rest on. A
// bounds value is a closed interval [lo, hi] that provably contains an exact
// real number (a probability such as e^(−λk)); every operation rounds lo
// down and hi up, so the enclosure survives any number of steps. Samplers
// compare random bits against these enclosures and draw more bits, at
// higher precision, whenever the comparison is not yet decided — which makes
// them exact rather than approximately right.

// bounds encloses an exact real number: lo ≤ x ≤ hi.
type bounds struct{ lo, hi *big.Float }

func fdown(prec uint) *big.Float { return new(big.Float).SetPrec(prec).SetMode(big.ToNegativeInf) }
func fup(prec uint) *big.Float   { return new(big.Float).SetPrec(prec).SetMode(big.ToPositiveInf) }

// point returns the degenerate enclosure of the exactly representable x.
func point(x *big.Float) bounds {
	p := x.MinPrec()
	if p < 64 {
		p = 64
	}
	return bounds{lo: new(big.Float).SetPrec(p).Set(x), hi: new(big.Float).SetPrec(p).Set(x)}
}

// pointFloat returns the degenerate enclosure of the float64 x.
func pointFloat(x float64) bounds {
	return bounds{lo: new(big.Float).SetPrec(64).SetFloat64(x), hi: new(big.Float).SetPrec(64).SetFloat64(x)}
}

// mulPos encloses a·b for non-negative a and b.
func mulPos(a, b bounds, prec uint) bounds {
	return bounds{lo: fdown(prec).Mul(a.lo, b.lo), hi: fup(prec).Mul(a.hi, b.hi)}
}

// quoPos encloses a/b for non-negative a and positive b.
func quoPos(a, b bounds, prec uint) bounds {
	return bounds{lo: fdown(prec).Quo(a.lo, b.hi), hi: fup(prec).Quo(a.hi, b.lo)}
}

// addB encloses a+b.
func addB(a, b bounds, prec uint) bounds {
	return bounds{lo: fdown(prec).Add(a.lo, b.lo), hi: fup(prec).Add(a.hi, b.hi)}
}

// oneMinus encloses 1−a.
func oneMinus(a bounds, prec uint) bounds {
	one := big.NewFloat(1)
	return bounds{lo: fdown(prec).Sub(one, a.hi), hi: fup(prec).Sub(one, a.lo)}
}

// powPos encloses a^k for non-negative a by repeated squaring.
func powPos(a bounds, k uint64, prec uint) bounds {
	r := bounds{lo: fdown(prec).SetInt64(1), hi: fup(prec).SetInt64(1)}
	sq := bounds{lo: fdown(prec).Set(a.lo), hi: fup(prec).Set(a.hi)}
	for k > 0 {
		if k&1 == 1 {
			r = mulPos(r, sq, prec)
		}
		k >>= 1
		if k > 0 {
			sq = mulPos(sq, sq, prec)
		}
	}
	return r
}

// alternatingSeries encloses Σ_{k≥k0} (−1)^(k−k0)·y^k/k! for 0 ≤ y ≤ 1,
// whose terms never increase, so consecutive partial sums bracket the limit.
// With k0 = 0 it is e^(−y); with k0 = 1 it is 1 − e^(−y).
func alternatingSeries(y *big.Float, k0 int, prec uint) bounds {
	wp := prec + 16
	tLo, tHi := fdown(wp).SetInt64(1), fup(wp).SetInt64(1) // y^k/k!, bracketed
	for k := 1; k <= k0; k++ {
		tLo.Quo(tLo.Mul(tLo, y), big.NewFloat(float64(k)))
		tHi.Quo(tHi.Mul(tHi, y), big.NewFloat(float64(k)))
	}
	sLo, sHi := fdown(wp).Set(tLo), fup(wp).Set(tHi) // partial sum S_k0 = t_k0 ≥ limit
	hi := new(big.Float).SetPrec(wp).Set(sHi)
	var lo *big.Float
	tiny := new(big.Float).SetMantExp(big.NewFloat(1), -int(prec)-8)
	for k := k0 + 1; ; k++ {
		kf := big.NewFloat(float64(k))
		tLo.Quo(tLo.Mul(tLo, y), kf)
		tHi.Quo(tHi.Mul(tHi, y), kf)
		if (k-k0)%2 == 1 { // subtract: S_k ≤ limit
			sLo.Sub(sLo, tHi)
			sHi.Sub(sHi, tLo)
			lo = new(big.Float).SetPrec(wp).Set(sLo)
		} else { // add: S_k ≥ limit
			sLo.Add(sLo, tLo)
			sHi.Add(sHi, tHi)
			hi = new(big.Float).SetPrec(wp).Set(sHi)
			if tHi.Cmp(tiny) < 0 && lo != nil {
				break
			}
		}
	}
	if lo.Sign() < 0 {
		lo.SetInt64(0)
	}
	return bounds{lo: lo, hi: hi}
}

// expNeg encloses e^(−x) for an exact x ≥ 0, to about prec bits.
func expNeg(x *big.Float, prec uint) bounds {
	if x.Sign() <= 0 {
		return bounds{lo: big.NewFloat(1), hi: big.NewFloat(1)}
	}
	exp := x.MantExp(nil) // x = m·2^exp, m ∈ [½, 1)
	if exp <= 0 {
		return alternatingSeries(x, 0, prec)
	}
	// e^(−x) = (e^(−x/2^exp))^(2^exp); each squaring doubles the relative
	// error, so work exp bits more precisely.
	wp := prec + uint(exp) + 16
	y := new(big.Float).SetPrec(x.Prec()).SetMantExp(x, -exp)
	b := alternatingSeries(y, 0, wp)
	for i := 0; i < exp; i++ {
		b = mulPos(b, b, wp)
	}
	return b
}

// oneMinusExpNeg encloses 1 − e^(−x) for an exact x ≥ 0, to about prec bits
// of relative precision even for tiny x.
func oneMinusExpNeg(x *big.Float, prec uint) bounds {
	if x.Sign() <= 0 {
		return bounds{lo: new(big.Float), hi: new(big.Float)}
	}
	if x.Cmp(big.NewFloat(1)) <= 0 {
		return alternatingSeries(x, 1, prec)
	}
	return oneMinus(expNeg(x, prec+4), prec+4)
}

// mulExact returns the exact product of a float64 and a uint64.
func mulExact(x float64, k uint64) *big.Float {
	a := new(big.Float).SetPrec(128).SetFloat64(x)
	b := new(big.Float).SetPrec(128).SetUint64(k)
	return new(big.Float).SetPrec(128).Mul(a, b) // 53 + 64 bits: exact
}

// cutLow returns ⌊2⁶⁴·x⌋ for x ∈ [0, 1], saturating at 2⁶⁴−1.
func cutLow(x *big.Float) uint64 {
	if x.Sign() <= 0 {
		return 0
	}
	s := new(big.Float).SetPrec(x.Prec()+64).SetMantExp(x, 64)
	i, _ := s.Int(nil) // truncates toward zero = floor for x ≥ 0
	if !i.IsUint64() {
		return math.MaxUint64
	}
	return i.Uint64()
}

// cutHigh returns ⌈2⁶⁴·x⌉ for x ∈ [0, 1], or 2⁶⁴−1 with sat = true when it
// does not fit (the caller then cannot decide "above" from 64 bits).
func cutHigh(x *big.Float) (c uint64, sat bool) {
	if x.Sign() <= 0 {
		return 0, false
	}
	s := new(big.Float).SetPrec(x.Prec()+64).SetMantExp(x, 64)
	i, acc := s.Int(nil)
	if acc == big.Below { // truncated: round up
		i.Add(i, big.NewInt(1))
	}
	if !i.IsUint64() {
		return math.MaxUint64, true
	}
	return i.Uint64(), false
}

// width returns hi − lo as a float64, for precision checks.
func (b bounds) width() float64 {
	d := new(big.Float).SetPrec(64).Sub(b.hi, b.lo)
	f, _ := d.Float64()
	return f
}
