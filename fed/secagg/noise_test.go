package secagg

import (
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// TestDistributedNoise checks that t parties' shares sum to noise of mean
// 0 and variance σ²: N = 125,000 sums, tolerances 4.41717·√(Var/N) for the
// mean and 4.41717·√2·Var/√N for the variance (false failure 10⁻⁵
// each; the sum is close to Gaussian, whose fourth moment
// gives the √2).
func TestDistributedNoise(t *testing.T) {
	const n = 125000
	tests := []struct {
		sigma float64
		t     int
	}{{sigma: 6, t: 3}, {sigma: 20, t: 26}}
	for _, tt := range tests {
		sum := make([]int64, n)
		for party := range tt.t {
			if err := AddNoise(sum, tt.sigma, tt.t, rng.Derive(7, "noise", party)); err != nil {
				t.Fatalf("AddNoise(σ=%v, t=%d) = %v", tt.sigma, tt.t, err)
			}
		}
		var m, v float64
		for _, z := range sum {
			m += float64(z)
		}
		m /= n
		for _, z := range sum {
			v += (float64(z) - m) * (float64(z) - m)
		}
		v /= n - 1
		want := tt.sigma * tt.sigma
		if tol := 4.41717 * math.Sqrt(want/n); math.Abs(m) > tol {
			t.Errorf("σ=%v, t=%d: mean of the summed noise = %v, want 0 ± %v", tt.sigma, tt.t, m, tol)
		}
		if tol := 4.41717 * math.Sqrt2 * want / math.Sqrt(n); math.Abs(v-want) > tol {
			t.Errorf("σ=%v, t=%d: variance of the summed noise = %v, want %v ± %v", tt.sigma, tt.t, v, want, tol)
		}
	}
}

func TestPartySigmaRefuses(t *testing.T) {
	tests := []struct {
		name  string
		sigma float64
		t     int
	}{
		{name: "below one step each", sigma: 1.9, t: 4},
		{name: "zero", sigma: 0, t: 3},
		{name: "NaN", sigma: math.NaN(), t: 3},
		{name: "infinite", sigma: math.Inf(1), t: 3},
		{name: "no threshold", sigma: 5, t: 0},
	}
	for _, tt := range tests {
		if got, err := PartySigma(tt.sigma, tt.t); err == nil {
			t.Errorf("%s: PartySigma(%v, %d) = %v, nil; want an error", tt.name, tt.sigma, tt.t, got)
		}
	}
	if got, err := PartySigma(6, 4); err != nil || got != 3 {
		t.Errorf("PartySigma(6, 4) = %v, %v; want 3, nil", got, err)
	}
}
