package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

func TestRecoveryHandComputed(t *testing.T) {
	// Hand-computed Hellinger distances (v = 2):
	//   A = (1, 0),     X = (0.8, 0.2): sqrt(1 − sqrt(0.8))              = 0.3249196962
	//   A = (1, 0),     Y = (0, 1):     sqrt(1 − 0)                      = 1
	//   B = (0.5, 0.5), X = (0.8, 0.2): sqrt(1 − sqrt(0.4) − sqrt(0.1))  = 0.2265327730
	//   B = (0.5, 0.5), Y = (0, 1):     sqrt(1 − sqrt(0.5))              = 0.5411961001
	// Greedy matching would take B–X (0.2265) first and leave A–Y (1), total
	// 1.2265; the optimum is A–X + B–Y = 0.8661.
	dAX := math.Sqrt(1 - math.Sqrt(0.8))
	dBY := math.Sqrt(1 - math.Sqrt(0.5))
	tests := []struct {
		name             string
		planted, learned []float64
		k, v             int
		wantAssign       []int
		wantDist         []float64
		wantRecovered    int
	}{
		{
			name:    "greedy fails",
			planted: []float64{1, 0, 0.5, 0.5}, learned: []float64{0.8, 0.2, 0, 1}, k: 2, v: 2,
			wantAssign: []int{0, 1}, wantDist: []float64{dAX, dBY}, wantRecovered: 0,
		},
		{
			name:    "counts are normalized",
			planted: []float64{7, 0, 3, 3}, learned: []float64{4, 1, 0, 2}, k: 2, v: 2,
			wantAssign: []int{0, 1}, wantDist: []float64{dAX, dBY}, wantRecovered: 0,
		},
		{
			name:    "permuted exact copy",
			planted: []float64{1, 0, 0, 0, 1, 0, 0.2, 0.3, 0.5},
			learned: []float64{0.2, 0.3, 0.5, 1, 0, 0, 0, 1, 0}, k: 3, v: 3,
			wantAssign: []int{1, 2, 0}, wantDist: []float64{0, 0, 0}, wantRecovered: 3,
		},
		{
			name:    "one recovered",
			planted: []float64{1, 0, 0.5, 0.5}, learned: []float64{0, 1, 0.9, 0.1}, k: 2, v: 2,
			// A–(0.9,0.1): sqrt(1 − sqrt(0.9)) = 0.2269 < 0.25; B–(0,1): 0.5412.
			wantAssign: []int{1, 0}, wantDist: []float64{math.Sqrt(1 - math.Sqrt(0.9)), dBY}, wantRecovered: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Recovery(tt.planted, tt.learned, tt.k, tt.v)
			if err != nil {
				t.Fatalf("Recovery: %v", err)
			}
			for i := range tt.wantAssign {
				if got.Assign[i] != tt.wantAssign[i] {
					t.Fatalf("Recovery assign = %v; want %v", got.Assign, tt.wantAssign)
				}
				if math.Abs(got.Distance[i]-tt.wantDist[i]) > 1e-12 {
					t.Errorf("Recovery distance[%d] = %.12f; want %.12f", i, got.Distance[i], tt.wantDist[i])
				}
			}
			wantMean := 0.0
			for _, d := range tt.wantDist {
				wantMean += d
			}
			wantMean /= float64(tt.k)
			if math.Abs(got.Mean-wantMean) > 1e-12 {
				t.Errorf("Recovery mean = %.12f; want %.12f", got.Mean, wantMean)
			}
			if got.Recovered != tt.wantRecovered {
				t.Errorf("Recovery recovered = %d; want %d", got.Recovered, tt.wantRecovered)
			}
		})
	}
}

func TestRecoveryErrors(t *testing.T) {
	tests := []struct {
		name             string
		planted, learned []float64
		k, v             int
		want             string
	}{
		{name: "k zero", k: 0, v: 2, want: "k ≥ 1"},
		{name: "short planted", planted: []float64{1}, learned: []float64{1, 0}, k: 1, v: 2, want: "planted has 1 entries"},
		{name: "NaN", planted: []float64{1, 0}, learned: []float64{math.NaN(), 1}, k: 1, v: 2, want: "learned topic 0 word 0"},
		{name: "negative", planted: []float64{1, -1}, learned: []float64{1, 0}, k: 1, v: 2, want: "planted topic 0 word 1"},
		{name: "zero row", planted: []float64{1, 0}, learned: []float64{0, 0}, k: 1, v: 2, want: "learned topic 0: row sum 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Recovery(tt.planted, tt.learned, tt.k, tt.v)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Recovery error = %v; want one containing %q", err, tt.want)
			}
		})
	}
}

// bruteAssign returns the minimal assignment cost by trying every injection
// of rows into columns.
func bruteAssign(cost []float64, n, m int) float64 {
	best := math.Inf(1)
	used := make([]bool, m)
	var rec func(i int, sum float64)
	rec = func(i int, sum float64) {
		if i == n {
			best = min(best, sum)
			return
		}
		for j := range m {
			if !used[j] {
				used[j] = true
				rec(i+1, sum+cost[i*m+j])
				used[j] = false
			}
		}
	}
	rec(0, 0)
	return best
}

func TestAssignMatchesBruteForce(t *testing.T) {
	r := rng.Derive(1, "eval", "assign")
	for trial := range 300 {
		n := 1 + r.IntN(6)
		m := n + r.IntN(3)
		cost := make([]float64, n*m)
		for i := range cost {
			// Small integer costs make ties frequent, the hard case.
			cost[i] = float64(r.IntN(5))
			if trial%2 == 1 {
				cost[i] = r.Float64()
			}
		}
		match := assign(cost, n, m)
		seen := make(map[int]bool)
		got := 0.0
		for i, j := range match {
			if j < 0 || j >= m || seen[j] {
				t.Fatalf("trial %d: assign(%d×%d) = %v; want distinct columns in [0, %d)", trial, n, m, match, m)
			}
			seen[j] = true
			got += cost[i*m+j]
		}
		if want := bruteAssign(cost, n, m); math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: assign(%d×%d) cost = %v; want %v (cost %v)", trial, n, m, got, want, cost)
		}
	}
}
