package privacy

import (
	"math/rand/v2"
	"testing"

	"github.com/fedtopic/fedtopic/internal/chacha8"
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

// BenchmarkThresholdedStream reads from the same kind of stream the words
// one thresholded vector at the setting above consumes (its mean, about
// 550), and nothing else: the floor the stream puts under a vector's time
// on the machine at hand, to read BenchmarkThresholdedLaplace against.
func BenchmarkThresholdedStream(b *testing.B) {
	t, err := NewThresholdedLaplace(ThresholdedLaplaceConfig{Epsilon: 11, Threshold: 0.2, Vocab: 20000})
	if err != nil {
		b.Fatal(err)
	}
	// Two survivors per word, plus the word the true entry's noise takes.
	words := int(t.SurvivalProb()*20000/2) + 1
	r := rng.Derive(1, "bench")
	var sink uint64
	for b.Loop() {
		for range words {
			sink += r.Uint64()
		}
	}
	b.ReportMetric(float64(words), "words/vector")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
	if sink == 1 {
		b.Log(sink)
	}
}

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

// BenchmarkThresholdedRegenerate is the cost of regenerating one token's
// vector from its index instead of storing it: reseed a ChaCha8 with the
// token's key (Source.Indexed), then Draw. It also reports the memory the
// two stored alternatives would take per token.
func BenchmarkThresholdedRegenerate(b *testing.B) {
	t, err := NewThresholdedLaplace(ThresholdedLaplaceConfig{Epsilon: 11, Threshold: 0.2, Vocab: 20000})
	if err != nil {
		b.Fatal(err)
	}
	idx := NewSeededSource(1).Indexed("party", 0, "tokens")
	var c chacha8.Stream
	r := rand.New(&c)
	var dst []Entry
	var compact []byte
	var tok uint64
	entries, bytes := 0, 0
	for b.Loop() {
		idx.Seed(&c, tok)
		dst = t.Draw(r, int(tok%20000), dst)
		if tok < 1000 {
			compact = t.AppendCompact(compact[:0], dst)
			entries += len(dst)
			bytes += len(compact)
		}
		tok++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "vectors/s")
	b.ReportMetric(8*float64(entries)/float64(min(tok, 1000)), "entry-bytes/token")
	b.ReportMetric(float64(bytes)/float64(min(tok, 1000)), "compact-bytes/token")
}
