package lda

import (
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// TestDenseDraw checks denseDraw's running sums against a plain sum in
// order (to a relative 1e-12: the grouping changes the rounding), that the
// topic it returns is the first whose running sum exceeds unit·total, and,
// on amd64 with AVX-512, that the vector and Go loops give the same bits
// and the same topic, for every K from 1 to 200, including columns whose
// counts are all zero but one, and units at 0 and just below 1.
func TestDenseDraw(t *testing.T) {
	r := rng.Derive(1, "dense draw")
	const alpha, beta = 0.1, 0.01
	for k := 1; k <= 200; k++ {
		for trial := range 3 {
			col, cnt, inv := make([]int32, k), make([]int32, k), make([]float64, k)
			for i := range col {
				if trial != 1 || i == k/2 {
					col[i], cnt[i] = int32(r.IntN(50)), int32(r.IntN(5))
				}
				inv[i] = 1 / (float64(r.IntN(1000)) + 100)
			}
			sums := make([]uint64, (k+7)&^7)
			unit := [...]float64{0, r.Float64(), 1 - 0x1p-53}[trial]
			topic := denseDraw(col, inv, cnt, alpha, beta, unit, sums)
			total := math.Float64frombits(sums[k-1])
			u := unit * total
			if topic > k || (topic < k && math.Float64frombits(sums[topic]) <= u) || (topic > 0 && math.Float64frombits(sums[topic-1]) > u) {
				t.Fatalf("K = %d, trial %d: topic %d for u = %g of %g", k, trial, topic, u, total)
			}
			var acc float64
			for i := range k {
				acc += (float64(col[i]) + beta) * inv[i] * (float64(cnt[i]) + alpha)
				if got := math.Float64frombits(sums[i]); math.Abs(got-acc) > 1e-12*acc {
					t.Fatalf("K = %d, trial %d: running sum %d = %g; want %g", k, trial, i, got, acc)
				}
			}
			if useLanesAVX512 {
				goSums := make([]uint64, len(sums))
				denseCumGo(col, inv, cnt, alpha, beta, goSums)
				if goTopic := firstAbove(goSums[:k], unit*math.Float64frombits(goSums[k-1])); goTopic != topic {
					t.Fatalf("K = %d, trial %d: topic %d in Go, %d with AVX-512", k, trial, goTopic, topic)
				}
				for i := range k {
					if goSums[i] != sums[i] {
						t.Fatalf("K = %d, trial %d: running sum %d: Go %g, AVX-512 %g", k, trial, i, math.Float64frombits(goSums[i]), math.Float64frombits(sums[i]))
					}
				}
			}
		}
	}
}
