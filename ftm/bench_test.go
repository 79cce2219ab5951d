package ftm

import (
	"context"
	"testing"

	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// The throughput figures of issue 5 (one core, V = 12,000, K = 50, ε = 11,
// τ = 0.2; a synthetic LDA corpus of 1,000 documents of 100 tokens):
//
//	go test -run '^$' -bench 'PrivateMH|NaiveGibbs' -benchtime 5x -cpu 1 ./ftm

const (
	benchV, benchK = 12000, 50
	benchEps       = 11
	benchTau       = 0.2
)

// benchChain privatizes a synthetic corpus of docs documents at the issue's
// setting and returns a chain after burn-in sweeps.
func benchChain(b *testing.B, docs int, noiseMemory int64, steps, burnIn int) *chain {
	b.Helper()
	d, err := synth.Generate(synth.Config{K: benchK, V: benchV, Docs: docs, DocLen: 100, FixedLen: true, WordsOnly: true}, rng.Derive(1, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	st := testStore(b, d.Corpus, privatizeConfig{eps: benchEps, tau: benchTau, blockSize: DefaultBlockSize, noiseMemory: noiseMemory, workers: 2}, 1)
	ch := newChain(st, benchK, DefaultAlphaSum/benchK, DefaultBeta, steps, 1, 1, []any{"bench"}, 0)
	if err := ch.initUniform(ctx, 1); err != nil {
		b.Fatal(err)
	}
	for it := 1; it <= burnIn; it++ {
		if err := ch.drawPhi(ctx, 1, it); err != nil {
			b.Fatal(err)
		}
		if err := ch.sweep(ctx, 1, it, sampleDelta); err != nil {
			b.Fatal(err)
		}
	}
	return ch
}

// BenchmarkPrivateMH measures iterations of the private MH sampler on one
// worker after 10 iterations of burn-in (by then a few percent of the
// tokens change topic per sweep, as in the later local iterations of a
// round): tokens/s counts a sweep's tokens over the time of the sweep and
// of the Dirichlet draw of Φ before it; bytes/token is the memory the
// sampler keeps per token beyond the corpus — the compact encoding of the
// privatized vector, the proposal word and the topic — and entries/token
// the surviving entries of a privatized vector (q·V ≈ 657).
func BenchmarkPrivateMH(b *testing.B) {
	for _, bc := range []struct {
		name   string
		memory int64
		steps  int
	}{
		{name: "compact/steps=1", memory: DefaultNoiseMemory, steps: 1},
		{name: "compact/steps=2", memory: DefaultNoiseMemory, steps: 2},
		{name: "regenerate/steps=1", memory: -1, steps: 1},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ch := benchChain(b, 1000, bc.memory, bc.steps, 10)
			ctx := context.Background()
			it := 10
			b.ResetTimer()
			for b.Loop() {
				it++
				if err := ch.drawPhi(ctx, 1, it); err != nil {
					b.Fatal(err)
				}
				if err := ch.sweep(ctx, 1, it, sampleDelta); err != nil {
					b.Fatal(err)
				}
			}
			n := ch.st.numItems()
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(ch.st.entries)/float64(n), "entries/token")
			b.ReportMetric(float64(ch.st.bytes()+2*int64(len(ch.z)))/float64(n), "bytes/token")
		})
	}
}
