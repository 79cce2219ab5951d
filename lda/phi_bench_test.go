package lda

import (
	"context"
	"fmt"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// BenchmarkDrawPhi measures the Dirichlet draw of Φ with its proposal
// tables, the O(K·V) part of an MH iteration, on counts shaped like a
// trained model's (about 40 tokens per word spread over a few topics), and
// reports nanoseconds per entry of Φ.
func BenchmarkDrawPhi(b *testing.B) {
	const v = 20000
	for _, k := range []int{50, 1000} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			counts := make([]int32, k*v)
			r := rng.Derive(1, "bench counts")
			for w := range v {
				for range 40 {
					counts[w*k+int(r.Uint64N(uint64(min(k, 8))))*(k/min(k, 8))]++
				}
			}
			propose := make([]bool, v)
			for w := range propose {
				propose[w] = true
			}
			p := newPhi(k, v, propose, false)
			workers := []*phiWorker{newPhiWorker(k)}
			buf := make([]int32, len(counts))
			b.ReportAllocs()
			it := 0
			for b.Loop() {
				copy(buf, counts)
				if err := drawPhi(context.Background(), p, buf, 0.01, 1, it, workers); err != nil {
					b.Fatal(err)
				}
				it++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(it)/float64(k*v), "ns/entry")
		})
	}
}
