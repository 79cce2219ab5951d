package lda

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// chiSquare returns Σ (obs − n·p)²/(n·p) over the cells with p > 0 and the
// number of such cells; it fails the test if a cell with p = 0 was observed
// or an expected count is below 5 (where the chi-square approximation is
// not trusted).
func chiSquare(t *testing.T, obs []int, p []float64) (float64, int) {
	t.Helper()
	var n, sum float64
	for i, o := range obs {
		n += float64(o)
		sum += p[i]
	}
	var chi float64
	cells := 0
	for i, o := range obs {
		if p[i] == 0 {
			if o != 0 {
				t.Fatalf("cell %d has probability 0 but was observed %d times", i, o)
			}
			continue
		}
		e := n * p[i] / sum
		if e < 5 {
			t.Fatalf("cell %d: expected count %.2f < 5; the test needs more samples", i, e)
		}
		chi += (float64(o) - e) * (float64(o) - e) / e
		cells++
	}
	return chi, cells
}

// chiCritical is the chi-square quantile with a false-failure rate of 1e-6
// for the given number of cells.
func chiCritical(cells int) float64 {
	return distuv.ChiSquared{K: float64(cells - 1)}.Quantile(1 - 1e-6)
}

func TestAliasDistribution(t *testing.T) {
	tests := []struct {
		name    string
		weights []float64
	}{
		{name: "uniform", weights: []float64{1, 1, 1, 1, 1, 1, 1}},
		{name: "skewed", weights: []float64{1, 0, 3, 0.5, 10, 2.5, 0.02, 7}},
		{name: "one heavy", weights: []float64{1000, 1, 1, 1, 1}},
		{name: "single", weights: []float64{2}},
		{name: "zeros around", weights: []float64{0, 0, 5, 0, 1, 0}},
		{name: "power of two", weights: []float64{1, 2, 3, 4, 5, 6, 7, 8}},
	}
	const draws = 400_000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := NewAlias(tt.weights)
			if err != nil {
				t.Fatalf("NewAlias(%v): %v", tt.weights, err)
			}
			if a.Len() != len(tt.weights) {
				t.Fatalf("Len() = %d; want %d", a.Len(), len(tt.weights))
			}
			r := rng.Derive(1, "alias", tt.name)
			obs := make([]int, len(tt.weights))
			for range draws {
				obs[a.Draw(r)]++
			}
			chi, cells := chiSquare(t, obs, tt.weights)
			if cells == 1 {
				return // one possible outcome: checked by chiSquare's zero cells
			}
			if crit := chiCritical(cells); chi > crit {
				t.Errorf("chi-square of %d draws = %.2f; want ≤ %.2f (false-failure rate 1e-6)", draws, chi, crit)
			}
		})
	}
}

func TestAliasErrors(t *testing.T) {
	tests := []struct {
		name    string
		weights []float64
	}{
		{name: "empty"},
		{name: "all zero", weights: []float64{0, 0}},
		{name: "negative", weights: []float64{1, -1}},
		{name: "nan", weights: []float64{1, math.NaN()}},
		{name: "inf", weights: []float64{1, math.Inf(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewAlias(tt.weights); err == nil {
				t.Errorf("NewAlias(%v) = nil error; want an error", tt.weights)
			}
		})
	}
}

// TestLemireUniform checks the slot choice of the 64-bit split draw over a
// size that is not a power of two.
func TestLemireUniform(t *testing.T) {
	const n, draws = 13, 260_000
	src := newSource(7)
	obs := make([]int, n)
	for range draws {
		obs[uniformN(src, n)]++
	}
	p := make([]float64, n)
	for i := range p {
		p[i] = 1
	}
	chi, cells := chiSquare(t, obs, p)
	if crit := chiCritical(cells); chi > crit {
		t.Errorf("uniformN(%d): chi-square = %.2f; want ≤ %.2f", n, chi, crit)
	}
}
