package privacy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// n1 is the sample size of the moment and shape tests (RELIABILITY.md N-1).
const n1 = 125000

func TestDiscreteLaplaceDistribution(t *testing.T) {
	// Scales cover a single lookup table (small and moderate scale), a
	// multi-level geometric (scale 3000 → 2 low-bit levels) and the almost
	// deterministic regime (scale 0.2).
	for _, scale := range []float64{0.2, 1, 7.5, 23.27, 300, 3000} {
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
	for _, sigma := range []float64{0.3, 1, 2.5, 20, 200} {
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
	// N-3: integer noise takes every residue mod 2 and mod 3 at its exact
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
