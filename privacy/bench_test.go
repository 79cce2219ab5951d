package privacy

import (
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// The sampler figures of issue 3 (per core, from a seeded ChaCha8 stream):
//
//	go test -run '^$' -bench . -cpu 1 ./privacy
func benchThresholded(b *testing.B, naive bool) {
	t, err := NewThresholdedLaplace(ThresholdedLaplaceConfig{Epsilon: 11, Threshold: 0.2, Vocab: 20000})
	if err != nil {
		b.Fatal(err)
	}
	r := rng.Derive(1, "bench")
	var dst []Entry
	counts := []Count{{Word: 123, N: 1}}
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		if naive {
			dst = t.DrawNaive(r, counts, dst)
		} else {
			dst = t.Draw(r, 123, dst)
		}
		n += len(dst)
	}
	b.ReportMetric(float64(n)/float64(b.N), "entries/vector")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
}

// BenchmarkThresholdedLaplace is the direct O(q·V) sampler at V = 20,000,
// ε = 11, τ = 0.2.
func BenchmarkThresholdedLaplace(b *testing.B) { benchThresholded(b, false) }

// BenchmarkThresholdedLaplaceNaive is the V-draw reference at the same
// setting.
func BenchmarkThresholdedLaplaceNaive(b *testing.B) { benchThresholded(b, true) }

func BenchmarkDiscreteLaplace(b *testing.B) {
	for _, tc := range []struct {
		name  string
		scale float64
	}{{"scale=23", 256.0 / 11}, {"scale=1000", 1000}} {
		b.Run(tc.name, func(b *testing.B) {
			d, err := NewDiscreteLaplace(tc.scale)
			if err != nil {
				b.Fatal(err)
			}
			r := rng.Derive(1, "bench")
			dst := make([]int64, 1024)
			for b.Loop() {
				d.Fill(r, dst)
			}
			b.ReportMetric(float64(b.N*len(dst))/b.Elapsed().Seconds(), "draws/s")
		})
	}
}

func BenchmarkDiscreteGaussian(b *testing.B) {
	for _, tc := range []struct {
		name  string
		sigma float64
	}{{"sigma=16", 16}, {"sigma=1000", 1000}} {
		b.Run(tc.name, func(b *testing.B) {
			d, err := NewDiscreteGaussian(tc.sigma)
			if err != nil {
				b.Fatal(err)
			}
			r := rng.Derive(1, "bench")
			dst := make([]int64, 1024)
			for b.Loop() {
				d.Fill(r, dst)
			}
			b.ReportMetric(float64(b.N*len(dst))/b.Elapsed().Seconds(), "draws/s")
		})
	}
}
