package privacy

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

func TestLaplaceScale(t *testing.T) {
	tests := []struct {
		name             string
		sensitivity, eps float64
		want             float64 // b = Δ/ε (Dwork & Roth 2014, §3.3)
	}{
		{name: "unit", sensitivity: 1, eps: 1, want: 1},
		{name: "tight budget", sensitivity: 2, eps: 0.5, want: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LaplaceScale(tt.sensitivity, tt.eps)
			if err != nil || got != tt.want {
				t.Errorf("LaplaceScale(%v, %v) = %v, %v; want %v, nil", tt.sensitivity, tt.eps, got, err, tt.want)
			}
		})
	}
}

// TestParameterChecks checks that every constructor refuses bad
// ε, δ, σ, sensitivity and granularity with ErrInvalidParameter.
func TestParameterChecks(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		err  error
	}{
		{"laplace ε below 2^-50", second(NewLaplace(LaplaceConfig{Epsilon: 0x1p-51}))},
		{"laplace ε NaN", second(NewLaplace(LaplaceConfig{Epsilon: nan}))},
		{"laplace ε +Inf", second(NewLaplace(LaplaceConfig{Epsilon: inf}))},
		{"laplace ε -Inf", second(NewLaplace(LaplaceConfig{Epsilon: -inf}))},
		{"laplace ε 0", second(NewLaplace(LaplaceConfig{Epsilon: 0}))},
		{"laplace ε negative", second(NewLaplace(LaplaceConfig{Epsilon: -1}))},
		{"laplace Δ negative", second(NewLaplace(LaplaceConfig{Epsilon: 1, Sensitivity: -1}))},
		{"laplace Δ NaN", second(NewLaplace(LaplaceConfig{Epsilon: 1, Sensitivity: nan}))},
		{"laplace Δ Inf", second(NewLaplace(LaplaceConfig{Epsilon: 1, Sensitivity: inf}))},
		{"laplace granularity 0.3", second(NewLaplace(LaplaceConfig{Epsilon: 1, Granularity: 0.3}))},
		{"laplace granularity negative", second(NewLaplace(LaplaceConfig{Epsilon: 1, Granularity: -0.5}))},
		{"laplace granularity 2^-70", second(NewLaplace(LaplaceConfig{Epsilon: 1, Granularity: 0x1p-70}))},
		{"gaussian σ 0", second(NewGaussian(GaussianConfig{Sigma: 0}))},
		{"gaussian σ NaN", second(NewGaussian(GaussianConfig{Sigma: nan}))},
		{"gaussian σ Inf", second(NewGaussian(GaussianConfig{Sigma: inf}))},
		{"gaussian Δ 0 is default, Δ negative", second(NewGaussian(GaussianConfig{Sigma: 1, Sensitivity: -2}))},
		{"continuous gaussian with granularity", second(NewContinuousGaussian(GaussianConfig{Sigma: 1, Granularity: 0.5}))},
		{"continuous gaussian σ negative", second(NewContinuousGaussian(GaussianConfig{Sigma: -1}))},
		{"krr ε NaN", second(NewKRR(nan, 5, ""))},
		{"krr ε 0", second(NewKRR(0, 5, ""))},
		{"krr one category", second(NewKRR(1, 1, ""))},
		{"truncated krr word out of range", second(NewTruncatedKRR(1, 10, []int{1, 10}, ""))},
		{"truncated krr duplicate word", second(NewTruncatedKRR(1, 10, []int{1, 1}, ""))},
		{"truncated krr one word", second(NewTruncatedKRR(1, 10, []int{3}, ""))},
		{"rrp δ 0", second(NewRRP(RRPConfig{Epsilon: 1, Delta: 0}))},
		{"rrp δ 0.5", second(NewRRP(RRPConfig{Epsilon: 1, Delta: 0.5}))},
		{"rrp δ NaN", second(NewRRP(RRPConfig{Epsilon: 1, Delta: nan}))},
		{"rrp γ 0.5", second(NewRRP(RRPConfig{Epsilon: 1, Delta: 0.1, Gamma: 0.5}))},
		{"rrp ε Inf", second(NewRRP(RRPConfig{Epsilon: inf, Delta: 0.1}))},
		{"partition δ 0", second(NewPartitionSelection(PartitionSelectionConfig{Epsilon: 1, Delta: 0}))},
		{"partition δ 1", second(NewPartitionSelection(PartitionSelectionConfig{Epsilon: 1, Delta: 1}))},
		{"partition δ negative", second(NewPartitionSelection(PartitionSelectionConfig{Epsilon: 1, Delta: -1e-6}))},
		{"partition δ NaN", second(NewPartitionSelection(PartitionSelectionConfig{Epsilon: 1, Delta: nan}))},
		{"partition ε NaN", second(NewPartitionSelection(PartitionSelectionConfig{Epsilon: nan, Delta: 1e-6}))},
		{"partition l0 negative", second(NewPartitionSelection(PartitionSelectionConfig{Epsilon: 1, Delta: 1e-6, MaxWordsPerDoc: -1}))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !errors.Is(tt.err, ErrInvalidParameter) {
				t.Errorf("got error %v; want one wrapping ErrInvalidParameter", tt.err)
			}
		})
	}
}

func TestCheckFunctions(t *testing.T) {
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"ε 2^-50", CheckEpsilon(0x1p-50), true},
		{"ε 2^-50 minus", CheckEpsilon(math.Nextafter(0x1p-50, 0)), false},
		{"δ 0", CheckDelta(0), true},
		{"δ just below 1", CheckDelta(math.Nextafter(1, 0)), true},
		{"δ 1", CheckDelta(1), false},
		{"δ NaN", CheckDelta(math.NaN()), false},
		{"Δ tiny", CheckSensitivity(1e-300), true},
		{"Δ 0", CheckSensitivity(0), false},
		{"granularity 1", CheckGranularity(1), true},
		{"granularity 2^-60", CheckGranularity(0x1p-60), true},
		{"granularity 2^61", CheckGranularity(0x1p61), false},
		{"granularity 3", CheckGranularity(3), false},
	}
	for _, tt := range tests {
		if (tt.err == nil) != tt.ok {
			t.Errorf("%s: got %v; want ok = %v", tt.name, tt.err, tt.ok)
		}
	}
}

func TestReleaseOnGrid(t *testing.T) {
	// every released value is an exact multiple of the granularity.
	for _, eps := range []float64{0.1, 1, 11} {
		lap, err := NewLaplace(LaplaceConfig{Epsilon: eps, Sensitivity: 3})
		if err != nil {
			t.Fatal(err)
		}
		gau, err := NewGaussian(GaussianConfig{Sigma: 3 / eps})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range []interface {
			Granularity() float64
		}{lap, gau} {
			x := make([]float64, 1000)
			for i := range x {
				x[i] = float64(i % 7)
			}
			var err error
			switch m := m.(type) {
			case *Laplace:
				_, err = m.Release(rng.Derive(1, "grid", eps), x)
			case *Gaussian:
				_, err = m.Release(rng.Derive(1, "grid", eps), x)
			}
			if err != nil {
				t.Fatal(err)
			}
			g := m.Granularity()
			for i, v := range x {
				if q := v / g; q != math.Trunc(q) {
					t.Fatalf("%T ε = %v: output %d = %v is not a multiple of %v", m, eps, i, v, g)
				}
			}
		}
	}
}

func TestReleaseRefusesBeforeDrawing(t *testing.T) {
	lap, _ := NewLaplace(LaplaceConfig{Epsilon: 1})
	gau, _ := NewGaussian(GaussianConfig{Sigma: 1})
	cg, _ := NewContinuousGaussian(GaussianConfig{Sigma: 1})
	bad := [][]float64{{1, 0.3}, {math.NaN()}, {math.Inf(1)}, {0x1p60}}
	for i, x := range bad {
		release := map[string]func([]float64) error{
			"laplace":    func(x []float64) error { _, err := lap.Release(rng.Derive(1, "x"), x); return err },
			"gaussian":   func(x []float64) error { _, err := gau.Release(rng.Derive(1, "x"), x); return err },
			"continuous": func(x []float64) error { _, err := cg.Release(rng.Derive(1, "x"), x); return err },
		}
		for name, f := range release {
			if name == "continuous" && (x[0] == 1 || x[0] == 0x1p60) {
				continue // off-grid and huge values are fine without a grid
			}
			y := append([]float64(nil), x...)
			err := f(y)
			if !errors.Is(err, ErrInvalidParameter) {
				t.Errorf("%s.Release(%v) error = %v; want ErrInvalidParameter", name, x, err)
			}
			for j := range y {
				if math.Float64bits(y[j]) != math.Float64bits(x[j]) {
					t.Errorf("%s.Release(bad input %d) changed its input: %v → %v", name, i, x, y)
				}
			}
		}
	}
}

func TestLaplaceMechanismMoments(t *testing.T) {
	for _, c := range []LaplaceConfig{{Epsilon: 1}, {Epsilon: 0.1, Sensitivity: 2}, {Epsilon: 8, Granularity: 0x1p-4}} {
		m, err := NewLaplace(c)
		if err != nil {
			t.Fatal(err)
		}
		x := make([]float64, n1)
		ev, err := m.Release(rng.Derive(2, "lapmom", c.Epsilon), x)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Mechanism != MechanismLaplace || ev.Epsilon != c.Epsilon || ev.Count != 1 {
			t.Errorf("Release event = %+v; want laplace, ε %v, count 1", ev, c.Epsilon)
		}
		g := m.Granularity()
		zs := make([]int64, len(x))
		for i, v := range x {
			zs[i] = int64(v / g)
		}
		f := discreteLaplacePMF(m.noise.lambda, int64(60*m.Scale()/g)+60)
		checkMoments(t, fmt.Sprintf("Laplace(%+v)", c), zs, f)
		if b := m.Scale(); b < m.Config().Sensitivity/c.Epsilon || b > m.Config().Sensitivity/c.Epsilon*(1+1e-15) {
			t.Errorf("Laplace(%+v).Scale() = %v; want Δ/ε = %v (never below)", c, b, m.Config().Sensitivity/c.Epsilon)
		}
	}
}

func TestContinuousGaussianMoments(t *testing.T) {
	m, err := NewContinuousGaussian(GaussianConfig{Sigma: 2.5})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, n1)
	m.Fill(rng.Derive(3, "cg"), x)
	var s, ss float64
	for _, v := range x {
		s += v
	}
	mean := s / n1
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	v := ss / (n1 - 1)
	want := 2.5 * 2.5
	if tol := zCrit * math.Sqrt(want/n1); math.Abs(mean) > tol {
		t.Errorf("continuous Gaussian mean = %v; want 0 ± %v", mean, tol)
	}
	if tol := zCrit * math.Sqrt(2) * want / math.Sqrt(n1); math.Abs(v-want) > tol {
		t.Errorf("continuous Gaussian variance = %v; want %v ± %v", v, want, tol)
	}
}

func TestContinuousGaussianKS(t *testing.T) {
	// one-sample Kolmogorov–Smirnov with n = 5,000 against N(0, σ²):
	// reject if D > 0.0380516 (α = 1e-6, √(ln(2/α)/(2n))).
	const n = 5000
	m, err := NewContinuousGaussian(GaussianConfig{Sigma: 3})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, n)
	m.Fill(rng.Derive(4, "ks"), x)
	slices.Sort(x)
	var d float64
	for i, v := range x {
		f := 0.5 * math.Erfc(-v/(3*math.Sqrt2))
		d = math.Max(d, math.Max(f-float64(i)/n, float64(i+1)/n-f))
	}
	if d > 0.0380516 {
		t.Errorf("KS statistic D = %v; want ≤ 0.0380516", d)
	}
}

func TestEventsValidate(t *testing.T) {
	lap, _ := NewLaplace(LaplaceConfig{Epsilon: 1})
	gau, _ := NewGaussian(GaussianConfig{Sigma: 2})
	cg, _ := NewContinuousGaussian(GaussianConfig{Sigma: 2})
	tl, _ := NewThresholdedLaplace(ThresholdedLaplaceConfig{Epsilon: 11, Threshold: 0.2, Vocab: 100})
	krr, _ := NewKRR(1, 10, "")
	rrp, _ := NewRRP(RRPConfig{Epsilon: 1, Delta: 0.1})
	ps, _ := NewPartitionSelection(PartitionSelectionConfig{Epsilon: 1, Delta: 1e-6})
	for _, e := range []Event{lap.Event(1), gau.Event(3), cg.Event(2), tl.Event(1), krr.Event(5), rrp.Event(7), ps.Event()} {
		if err := e.Validate(); err != nil {
			t.Errorf("%+v.Validate() = %v; want nil", e, err)
		}
	}
	bad := []Event{
		{Mechanism: "laplace", Epsilon: 1, Count: 0},
		{Mechanism: "nope", Epsilon: 1, Count: 1},
		{Mechanism: "gaussian", Sensitivity: 1, Count: 1},
		{Mechanism: "rrp", Epsilon: 1, Delta: 1.5, Count: 1},
		{Mechanism: "subsampled-gaussian", Sigma: 1, Sensitivity: 1, SamplingRate: 0, Count: 1},
	}
	for _, e := range bad {
		if err := e.Validate(); err == nil {
			t.Errorf("%+v.Validate() = nil; want an error", e)
		}
	}
}
