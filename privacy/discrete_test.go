package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// n1 is the sample size of the moment and shape tests.
const n1 = 125000

func TestDiscreteLaplaceDistribution(t *testing.T) {
	// Scales cover a single lookup table (small and moderate scale), a
	// top table with one low level (scale 300 → 4 low bits, 3000 → 7, the
	// inlined sample2 path), a multi-level geometric (scale 20000 → 8 + 2
	// low bits) and the almost deterministic regime (scale 0.2).
	for _, scale := range []float64{0.2, 1, 7.5, 23.27, 300, 3000, 20000} {
		t.Run(fmt.Sprint(scale), func(t *testing.T) {
			d, err := NewDiscreteLaplace(scale)
			if err != nil {
				t.Fatalf("NewDiscreteLaplace(%v) error: %v", scale, err)
			}
			xs := make([]int64, n1)
			d.Fill(rng.Derive(11, "dlap", scale), xs)
			f := discreteLaplacePMF(d.lambda, int64(60*scale)+60)
			checkMoments(t, fmt.Sprintf("DiscreteLaplace(%v)", scale), xs, f)
			checkChiSquare(t, fmt.Sprintf("DiscreteLaplace(%v)", scale), xs, f)
			if _, v, _ := f.moments(); math.Abs(v-d.Variance())/v > 1e-9 {
				t.Errorf("DiscreteLaplace(%v).Variance() = %v; want %v", scale, d.Variance(), v)
			}
		})
	}
}

func TestDiscreteLaplaceScaleRoundsSafely(t *testing.T) {
	for _, scale := range []float64{1, 3, 0.1, 1.0 / 3, 1e6 / 7} {
		d, err := NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatalf("NewDiscreteLaplace(%v) error: %v", scale, err)
		}
		if d.Scale() < scale {
			t.Errorf("NewDiscreteLaplace(%v).Scale() = %v; want ≥ %v", scale, d.Scale(), scale)
		}
		if rel := (d.Scale() - scale) / scale; rel > 1e-15 {
			t.Errorf("NewDiscreteLaplace(%v).Scale() = %v; relative excess %v, want ≤ 1e-15", scale, d.Scale(), rel)
		}
	}
}

func TestDiscreteGaussianDistribution(t *testing.T) {
	// σ = 0.3 … 20 use a single-table proposal, σ = 200 a top table with
	// one low level, σ = 20000 the general multi-level proposal with most
	// proposals beyond the acceptance table.
	for _, sigma := range []float64{0.3, 1, 2.5, 20, 200, 20000} {
		t.Run(fmt.Sprint(sigma), func(t *testing.T) {
			d, err := NewDiscreteGaussian(sigma)
			if err != nil {
				t.Fatalf("NewDiscreteGaussian(%v) error: %v", sigma, err)
			}
			xs := make([]int64, n1)
			d.Fill(rng.Derive(12, "dgauss", sigma), xs)
			f := discreteGaussianPMF(sigma, int64(20*sigma)+20)
			checkMoments(t, fmt.Sprintf("DiscreteGaussian(%v)", sigma), xs, f)
			checkChiSquare(t, fmt.Sprintf("DiscreteGaussian(%v)", sigma), xs, f)
		})
	}
}

func TestIntegerNoiseResidues(t *testing.T) {
	// integer noise takes every residue mod 2 and mod 3 at its exact
	// rate (1,000 draws per ε would be too few for a 1e-5 test at these
	// rates, so n1 draws are used).
	for _, eps := range []float64{0.5, 1, 4} {
		d, err := NewDiscreteLaplace(1 / eps)
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]int64, n1)
		d.Fill(rng.Derive(13, "residue", eps), xs)
		f := discreteLaplacePMF(d.lambda, 200)
		for _, m := range []int64{2, 3} {
			want := make([]float64, m)
			for i, p := range f.p {
				z := f.lo + int64(i)
				want[((z%m)+m)%m] += p
			}
			got := make([]int, m)
			for _, x := range xs {
				got[((x%m)+m)%m]++
			}
			for res := range m {
				checkProportion(t, fmt.Sprintf("ε = %v: Z ≡ %d mod %d", eps, res, m), got[res], n1, want[res])
			}
		}
	}
}

func TestSamplersReproducible(t *testing.T) {
	d, _ := NewDiscreteLaplace(5)
	g, _ := NewDiscreteGaussian(5)
	for name, f := range map[string]func(*rand.Rand, []int64){"laplace": d.Fill, "gaussian": g.Fill} {
		a, b := make([]int64, 1000), make([]int64, 1000)
		f(rng.Derive(3, name), a)
		f(rng.Derive(3, name), b)
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s: draw %d differs between identical streams: %d != %d", name, i, a[i], b[i])
			}
		}
	}
}

func TestSamplerParameterChecks(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"laplace scale 0", second(NewDiscreteLaplace(0))},
		{"laplace scale -1", second(NewDiscreteLaplace(-1))},
		{"laplace scale NaN", second(NewDiscreteLaplace(math.NaN()))},
		{"laplace scale +Inf", second(NewDiscreteLaplace(math.Inf(1)))},
		{"laplace scale 2^70", second(NewDiscreteLaplace(0x1p70))},
		{"gaussian sigma 0", second(NewDiscreteGaussian(0))},
		{"gaussian sigma NaN", second(NewDiscreteGaussian(math.NaN()))},
		{"gaussian sigma -Inf", second(NewDiscreteGaussian(math.Inf(-1)))},
		{"gaussian sigma 2^50", second(NewDiscreteGaussian(0x1p50))},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: got nil error; want an error", tt.name)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// TestDiscreteGaussianAcceptTable checks every entry of the acceptance
// table against a 100-bit enclosure of the acceptance probability p: the
// 15-bit thresholds must satisfy lo/2¹⁵ ≤ p ≤ (hi+1)/2¹⁵, so that a coin
// the table decides is decided correctly, and leave at most a few values
// of the 15 bits undecided.
func TestDiscreteGaussianAcceptTable(t *testing.T) {
	for _, sigma := range []float64{0.3, 3, 16, 1000} {
		d, err := NewDiscreteGaussian(sigma)
		if err != nil {
			t.Fatalf("NewDiscreteGaussian(%v) error: %v", sigma, err)
		}
		step := max(1, len(d.acc)/1000) // about 1,000 magnitudes per σ keep the test fast
		for m := 0; m < len(d.acc); m += step {
			a := d.acc[d.accIndex(uint64(m))]
			lo, hi := a&0xffff, a>>16
			p := d.acceptProb(int64(m), 100)
			loF := new(big.Float).SetFloat64(float64(lo) / 0x1p15)
			hiF := new(big.Float).SetFloat64(float64(hi+1) / 0x1p15)
			if loF.Cmp(p.lo) > 0 || hiF.Cmp(p.hi) < 0 {
				t.Fatalf("σ=%v: acceptance thresholds of magnitude %d = [%d, %d]; want lo/2^15 ≤ p ≤ (hi+1)/2^15 for p ∈ [%.20g, %.20g]", sigma, m, lo, hi, p.lo, p.hi)
			}
			if hi+1 > lo+2 {
				t.Fatalf("σ=%v: magnitude %d leaves %d of 2^15 values undecided; want ≤ 2", sigma, m, hi+1-lo)
			}
		}
	}
}

// TestTwoChunkTable checks every cell of the two-chunk lookup tables of
// single-table laws, and of the top tables of one-level laws, against the 64-bit boundary enclosures: each sub-cell
// the table decides must lie, from its first to its last 64-bit point,
// surely inside the outcome it gives; and the slow draws must be rare, since
// they are the only ones whose time depends on the outcome.
func TestTwoChunkTable(t *testing.T) {
	for _, scale := range []float64{0.09, 1, 7.5, 16, 17, 31.9, 160, 3000, 8000} {
		d, err := NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatal(err)
		}
		g := d.geo
		if g.lut2 == nil || d.twoChunk != (scale < 32) || d.oneLevel != (scale >= 32) {
			t.Fatalf("scale %v: two-chunk table %v, single-table path %v, one-level path %v", scale, g.lut2 != nil, d.twoChunk, d.oneLevel)
		}
		tab := g.top
		// surely returns the outcome of the 64-bit point u when the
		// enclosures decide it, and −1 when they do not.
		surely := func(u uint64) int {
			for j := 0; j < tab.n; j++ {
				if u < tab.cutLo[j] {
					return j
				}
				if tab.cutHi[j] == math.MaxUint64 || u < tab.cutHi[j] {
					return -1
				}
			}
			return tab.n
		}
		rnd := rand.New(rand.NewPCG(uint64(scale*100), 3))
		decided := 0
		for i := range 1 << 16 {
			p := cellOf(uint16(i))
			e := g.lut2[i]
			a, dd := e&lut2A, e>>lut2D&1
			if e>>lut2Slow&1 != 0 {
				continue
			}
			qs := []uint32{0, 1<<16 - 1, a, a + dd, uint32(rnd.IntN(1 << 16))}
			if a > 0 {
				qs = append(qs, a-1)
			}
			for _, q := range qs {
				if q >= 1<<16 {
					continue
				}
				o, slow := lut2Decide(e, q)
				if slow {
					continue
				}
				want := int(o)
				lo := uint64(p)<<48 | uint64(q)<<32
				for _, u := range []uint64{lo, lo | (1<<32 - 1)} {
					if got := surely(u); got != want {
						t.Fatalf("scale %v: cell %#04x sub-cell %#04x gives %d; the enclosures give %d at %#016x", scale, p, q, want, got, u)
					}
				}
				decided++
			}
		}
		_, slow, err := tab.buildLUT2()
		if err != nil {
			t.Fatal(err)
		}
		// At scale s the cells crossing several boundaries hold the values
		// of probability below 2⁻¹⁶, a mass of about s·2⁻¹⁶; 2⁻⁹ bounds it
		// for s < 32 with room, and a one-level law's top table has a
		// scale between 16 and 32.
		if slow > 0x1p-9 {
			t.Errorf("scale %v: slow cells hold %.3g of the draws; want ≤ 2⁻⁹", scale, slow)
		}
		t.Logf("scale %v: %d outcomes, %d sub-cells checked, slow mass %.3g", scale, tab.n+1, decided, slow)
	}
}
