package ftm

import (
	"context"
	"math"
	"testing"
)

// TestPhiDraw checks the Dirichlet draw of Φ: every row sums to 1 — also a
// row of a topic without counts, whose variates (shape β) mostly fall below
// 10⁻³⁰⁰ — and the mean of each φ_kw over 2,000 draws is (C_kw + β)/(C_k +
// Vβ) within 4.41717 standard errors (Dirichlet variance p(1−p)/(A+1),
// A = C_k + Vβ; false failure 10⁻⁵ per entry).
func TestPhiDraw(t *testing.T) {
	const (
		k, v  = 2, 5
		draws = 2000
		beta  = 0.01
	)
	counts := []int64{100, 50, 0, 10, 40, 0, 0, 0, 0, 0} // topic 1 has no counts
	p := newPhi(k, v, []int32{0, 3})
	mean := make([]float64, k*v)
	ctx := context.Background()
	for d := 0; d < draws; d++ {
		if err := p.draw(ctx, 1, counts, 1, nil, beta, uint64(d), []any{"test"}); err != nil {
			t.Fatal(err)
		}
		for tp := 0; tp < k; tp++ {
			var s float64
			for w := 0; w < v; w++ {
				x := math.Exp(float64(p.logRow[tp*v+w]))
				s += x
				mean[tp*v+w] += x / draws
			}
			if math.Abs(s-1) > 1e-5 {
				t.Fatalf("draw %d: row %d sums to %v", d, tp, s)
			}
		}
		for _, w := range []int32{0, 3} {
			var s float64
			for tp := 0; tp < k; tp++ {
				s += p.proposalProb(w, tp)
			}
			if math.Abs(s-1) > 1e-6 {
				t.Fatalf("draw %d: word proposal of %d sums to %v", d, w, s)
			}
		}
	}
	for w := 0; w < v; w++ {
		a := 200 + v*beta
		want := (float64(counts[w]) + beta) / a
		se := math.Sqrt(want * (1 - want) / (a + 1) / draws)
		if d := math.Abs(mean[w] - want); d > 4.41717*se {
			t.Errorf("mean φ_0,%d = %v; want %v ± %v", w, mean[w], want, 4.41717*se)
		}
	}
}
