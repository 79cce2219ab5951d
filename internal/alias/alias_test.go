package alias

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestDistribution draws 10⁶ times from tables of several shapes (with
// zero weights, one dominant weight, a weight that Vose's pairing leaves
// over) and compares the counts with the weights by a chi-square test at a
// false-failure rate of 1e-6 per table.
func TestDistribution(t *testing.T) {
	tests := []struct {
		name string
		w    []float64
	}{
		{"uniform", []float64{1, 1, 1, 1}},
		{"skewed", []float64{100, 1, 0.5, 3, 7}},
		{"zeros", []float64{0, 2, 0, 5, 0, 1}},
		{"single", []float64{4}},
		{"tiny", []float64{1e-4, 1, 1, 2e-3}},
	}
	const draws = 1_000_000
	var b Builder
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sum float64
			for _, x := range tt.w {
				sum += x
			}
			tab := make([]Entry, len(tt.w))
			b.Build(tab, tt.w, sum)
			lem := LemireBound(len(tab))
			r := rand.New(rand.NewChaCha8([32]byte{byte(i)}))
			obs := make([]int, len(tt.w))
			for range draws {
				for {
					if k, ok := Draw(tab, lem, r.Uint64()); ok {
						obs[k]++
						break
					}
				}
			}
			var chi float64
			cells := 0
			for k, x := range tt.w {
				e := draws * x / sum
				if e == 0 {
					if obs[k] != 0 {
						t.Errorf("outcome %d of weight 0 drawn %d times; want never", k, obs[k])
					}
					continue
				}
				cells++
				chi += (float64(obs[k]) - e) * (float64(obs[k]) - e) / e
			}
			if cells < 2 {
				return
			}
			if crit := (distuv.ChiSquared{K: float64(cells - 1)}).Quantile(1 - 1e-6); chi > crit {
				t.Errorf("counts %v for weights %v: chi-square %.1f; want ≤ %.1f", obs, tt.w, chi, crit)
			}
		})
	}
}

func TestThreshold(t *testing.T) {
	tests := []struct {
		p    float64
		want uint32
	}{
		{0, 0}, {-1, 0}, {1, math.MaxUint32}, {2, math.MaxUint32}, {0.5, 1 << 31}, {0x1p-32, 1},
		// Halves round up; below a half, down.
		{0x1p-33, 1}, {0x3p-33, 2}, {0x1p-34, 0}, {1 - 0x1p-33, math.MaxUint32},
	}
	for _, tt := range tests {
		if got := Threshold(tt.p); got != tt.want {
			t.Errorf("Threshold(%v) = %d; want %d", tt.p, got, tt.want)
		}
	}
}

func TestLemireBound(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 1000, 1 << 20, math.MaxUint32} {
		want := uint32((1 << 32) % uint64(n))
		if got := LemireBound(n); got != want {
			t.Errorf("LemireBound(%d) = %d; want %d", n, got, want)
		}
	}
}

// BenchmarkBuild builds tables of 4 to 17 slots, the size of a word's
// sparse proposal table at K = 50.
func BenchmarkBuild(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	const tables = 1024
	ws := make([][]float64, tables)
	sums := make([]float64, tables)
	for i := range ws {
		ws[i] = make([]float64, 4+r.IntN(14))
		for j := range ws[i] {
			ws[i][j] = r.ExpFloat64() * r.ExpFloat64()
			sums[i] += ws[i][j]
		}
	}
	var bl Builder
	tab := make([]Entry, 32)
	i := 0
	for b.Loop() {
		w := ws[i%tables]
		bl.Build(tab[:len(w)], w, sums[i%tables])
		i++
	}
}
