package privacy

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// script is a rand.Source that returns fixed words, then zeros.
type script struct {
	xs []uint64
	i  int
}

func (s *script) Uint64() uint64 {
	if s.i >= len(s.xs) {
		return 0
	}
	s.i++
	return s.xs[s.i-1]
}

func f64(b *big.Float) float64 { f, _ := b.Float64(); return f }

func TestExpNegEncloses(t *testing.T) {
	for _, x := range []float64{0, 1e-300, 1e-10, 0.25, 0.5, 1, 3.7, 100, 700, 12345.678} {
		b := expNeg(floatOf(x), 200)
		want := math.Exp(-x)
		if b.lo.Cmp(b.hi) > 0 {
			t.Errorf("expNeg(%v) = [%v, %v]; want lo ≤ hi", x, f64(b.lo), f64(b.hi))
		}
		if lo, hi := f64(b.lo), f64(b.hi); want > 0 && (math.Abs(lo-want) > 2e-16*want || math.Abs(hi-want) > 2e-16*want) {
			t.Errorf("expNeg(%v) = [%v, %v]; want both within 2e-16 relative of math.Exp = %v", x, lo, hi, want)
		}
		if w := new(big.Float).Sub(b.hi, b.lo); x > 0 && w.Cmp(new(big.Float).Mul(b.lo, big.NewFloat(0x1p-190))) > 0 {
			t.Errorf("expNeg(%v) width %v; want ≤ 2^-190 relative at 200 bits", x, f64(w))
		}
	}
}

func TestOneMinusExpNegRelative(t *testing.T) {
	for _, x := range []float64{1e-30, 1e-12, 0.001, 0.9, 1, 2, 50} {
		b := oneMinusExpNeg(floatOf(x), 128)
		want := -math.Expm1(-x)
		if lo, hi := f64(b.lo), f64(b.hi); math.Abs(lo-want) > 4e-16*want || math.Abs(hi-want) > 4e-16*want || lo > hi {
			t.Errorf("oneMinusExpNeg(%v) = [%v, %v]; want within 4e-16 relative of %v", x, lo, hi, want)
		}
	}
}

func TestComplementRatioPow(t *testing.T) {
	q := 0.0551
	c := complementRatio{q: func(prec uint) bounds { return pointFloat(q) }}
	for _, k := range []uint64{1, 7, 1000, 1 << 20} {
		b := c.oneMinusPow(k, 128)
		want := -math.Expm1(float64(k) * math.Log1p(-q))
		if lo, hi := f64(b.lo), f64(b.hi); math.Abs(lo-want) > 1e-14*want || math.Abs(hi-want) > 1e-14*want {
			t.Errorf("1 − (1−%v)^%d = [%v, %v]; want %v", q, k, lo, hi, want)
		}
	}
}

func TestRefineBelowDecidesPastEquality(t *testing.T) {
	third := func(prec uint) bounds { return quoPos(pointFloat(1), pointFloat(3), prec) }
	const fives = 0x5555555555555555 // 1/3 = 0.010101… in binary
	tests := []struct {
		name  string
		u     uint64
		more  []uint64
		below bool
	}{
		{name: "half, first bits below", u: 1<<63 - 1, more: []uint64{math.MaxUint64}, below: true},
		{name: "third, agree 192 bits then smaller", u: fives, more: []uint64{fives, fives, 0x4000000000000000}, below: true},
		{name: "third, agree 192 bits then larger", u: fives, more: []uint64{fives, fives, 0x6000000000000000}, below: false},
		{name: "third, larger at once", u: fives, more: []uint64{math.MaxUint64}, below: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := third
			if tt.u == 1<<63-1 {
				enc = func(uint) bounds { return pointFloat(0.5) }
			}
			br := bitReader{r: rand.New(&script{xs: tt.more})}
			if got := refineBelow(tt.u, &br, enc); got != tt.below {
				t.Errorf("refineBelow(%#x, %#x…) = %v; want %v", tt.u, tt.more, got, tt.below)
			}
		})
	}
}

func TestTableResolvesBoundaryExactly(t *testing.T) {
	g, err := newGeometric(expRatio(0.5), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	tb := g.top
	cut := tb.cutLo[0] // within one unit of 2⁶⁴·F₀, F₀ = 1 − e^(−½)
	f0 := oneMinusExpNeg(floatOf(0.5), 256)
	frac := new(big.Float).SetPrec(256).SetMantExp(f0.lo, 64)
	frac.Sub(frac, new(big.Float).SetUint64(cut)) // 2⁶⁴·F₀ − cut ∈ [0, 1)
	if frac.Sign() < 0 || frac.Cmp(big.NewFloat(1)) >= 0 {
		t.Fatalf("cutLo[0] = %#x is not ⌊2⁶⁴·F₀⌋", cut)
	}
	for _, tt := range []struct {
		next uint64
		want int
	}{{next: 0, want: 0}, {next: math.MaxUint64, want: 1}} {
		// Word 1 supplies the 16-bit chunk, word 2 the next 48 bits, word
		// 3 the bits beyond 64 that decide.
		src := &script{xs: []uint64{cut >> 48, (cut & (1<<48 - 1)) << 16, tt.next}}
		br := bitReader{r: rand.New(src)}
		before := tb.slow.Load()
		if got := tb.sample(&br); (got == 0) != (tt.want == 0) {
			t.Errorf("sample at U = 2⁻⁶⁴·(%#x + %#x·2⁻⁶⁴) = %d; want %d", cut, tt.next, got, tt.want)
		}
		if tb.slow.Load() == before {
			t.Errorf("sample at the boundary did not take the arbitrary-precision path")
		}
	}
}

func TestBernoulliExactFrequency(t *testing.T) {
	third := func(prec uint) bounds { return quoPos(pointFloat(1), pointFloat(3), prec) }
	br := bitReader{r: rng.Derive(5, "bernoulli")}
	const n = 200000
	k := 0
	for range n {
		if bernoulli(&br, 1.0/3*(1-1e-15), 1.0/3*(1+1e-15), third) {
			k++
		}
	}
	checkProportion(t, "bernoulli(1/3)", k, n, 1.0/3)
}

func TestCutHelpers(t *testing.T) {
	if got := cutLow(big.NewFloat(0.5)); got != 1<<63 {
		t.Errorf("cutLow(0.5) = %#x; want 1<<63", got)
	}
	if got, sat := cutHigh(big.NewFloat(0.5)); got != 1<<63 || sat {
		t.Errorf("cutHigh(0.5) = %#x, %v; want 1<<63, false", got, sat)
	}
	if _, sat := cutHigh(big.NewFloat(1)); !sat {
		t.Errorf("cutHigh(1) not saturated")
	}
	if got := floorScaled(0.25); got != 1<<62 {
		t.Errorf("floorScaled(0.25) = %#x; want 1<<62", got)
	}
	if got, sat := ceilScaled(math.Nextafter(0.25, 1)); got != 1<<62+1024 || sat {
		t.Errorf("ceilScaled(0.25+ulp) = %#x, %v; want 1<<62 + 2048", got, sat)
	}
}
