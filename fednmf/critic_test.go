package fednmf

import (
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// testMatrix returns a random sparse V×N matrix with about nnz entries per
// column.
func testMatrix(v, n, nnz int, seed uint64) *Matrix {
	r := rng.Derive(seed, "matrix")
	a := &Matrix{V: v, N: n, Start: []int{0}}
	for range n {
		seen := map[int32]bool{}
		for range nnz {
			seen[int32(r.IntN(v))] = true
		}
		for w := range int32(v) {
			if seen[w] {
				a.Rows = append(a.Rows, w)
				a.Vals = append(a.Vals, r.Float64())
			}
		}
		a.Start = append(a.Start, len(a.Rows))
	}
	return a
}

// TestSmileGradient checks the hand-written gradient of the SMILE estimate
// with respect to the parameters of θ and every entry of y against
// central finite differences. The step h = 1e-6 and the tolerance
// (absolute 1e-7 plus relative 1e-5) follow from the O(h²) truncation
// error of central differences on a function with second derivatives of
// order 1, plus rounding of order ε/h ≈ 1e-10. The clip τ is set so that
// some pairs are clipped, whose gradient is zero.
func TestSmileGradient(t *testing.T) {
	tests := []struct {
		name string
		tau  float64
		b    int
		js   bool // the Jensen–Shannon gradient that trains the critic
	}{
		{name: "no clip active", tau: 50, b: 5},
		{name: "clip active", tau: 0.05, b: 4},
		{name: "two documents", tau: 5, b: 2},
		{name: "JS bound", tau: 5, b: 4, js: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const v, k = 7, 3
			a := testMatrix(v, tt.b, 3, 1)
			c := critic{v, k}
			theta := make([]float64, c.size())
			r := rng.Derive(2, "theta")
			c.init(r, theta)
			// Larger first-layer weights, so that T varies across pairs.
			for i := range theta[:c.offW2()] {
				theta[i] *= 4
			}
			y := make([]float64, tt.b*k)
			for i := range y {
				y[i] = r.Float64()
			}
			cols := make([]int, tt.b)
			for i := range cols {
				cols[i] = i
			}
			ws := newSmileWork(c, tt.b)
			gy := make([]float64, len(y))
			c.smile(theta, a, cols, y, tt.tau, ws, gy, tt.js)
			grad := make([]float64, len(theta))
			c.ascend(grad, a, cols, ws, 1)
			var clipped int
			for p, tp := range ws.t[:tt.b*tt.b] {
				if p%(tt.b+1) != 0 && math.Abs(tp) >= tt.tau {
					clipped++
				}
			}
			if tt.tau < 1 && clipped == 0 {
				t.Fatalf("no shuffled pair is clipped at τ = %v: the case tests nothing", tt.tau)
			}
			fws := newSmileWork(c, tt.b)
			f := func() float64 {
				v, jv := c.smile(theta, a, cols, y, tt.tau, fws, nil, tt.js)
				if tt.js {
					return jv
				}
				return v
			}
			const h = 1e-6
			check := func(what string, i int, p *float64, got float64) {
				t.Helper()
				old := *p
				*p = old + h
				up := f()
				*p = old - h
				down := f()
				*p = old
				want := (up - down) / (2 * h)
				if math.Abs(got-want) > 1e-7+1e-5*math.Abs(want) {
					t.Errorf("∂Î/∂%s[%d] = %.9g; finite difference %.9g", what, i, got, want)
				}
			}
			// Every parameter but W2's Hidden1·Hidden2 weights, of which
			// every 13th (a stride prime to both widths, so every row and
			// column is visited) keeps the test fast.
			for i := range theta {
				if i >= c.offW2() && i < c.offB2() && (i-c.offW2())%13 != 0 {
					continue
				}
				check("θ", i, &theta[i], grad[i])
			}
			for i := range y {
				check("y", i, &y[i], gy[i])
			}
		})
	}
}
