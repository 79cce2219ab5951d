package lda_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/lda"
	"github.com/fedtopic/fedtopic/vocab"
)

// benchCorpus is the corpus the benchmarks train on: the file named by
// FEDTOPIC_BENCH_CORPUS (any format the corpus readers take, tokenized with
// the default tokenizer, words in fewer than 5 documents dropped), or else a
// synthetic corpus of 100,000 short documents (about 1.2 million tokens,
// V = 20,000), the shape of the WordNet glosses corpus.
var benchCorpus = sync.OnceValues(func() (*corpus.Corpus, error) {
	if path := os.Getenv("FEDTOPIC_BENCH_CORPUS"); path != "" {
		c, _, _, err := vocab.Prepare(context.Background(), []string{path}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, vocab.BuildOptions{MinDF: 5}, nil)
		return c, err
	}
	d, err := synth.Generate(synth.Config{K: 50, V: 20000, Docs: 100000, DocLen: 12, Alpha: 0.1, WordsOnly: true}, rng.Derive(1, "bench"))
	if err != nil {
		return nil, err
	}
	return d.Corpus, nil
})

// BenchmarkMH measures whole MH iterations (sweep, counts, Dirichlet draw of
// Φ and alias tables) and reports tokens per second.
func BenchmarkMH(b *testing.B) { benchIterations(b, lda.SamplerMH, []int{50, 1000}) }

// BenchmarkCollapsed measures whole iterations of the collapsed kernel
// (sweep, counts, proposal tables), which MH chains run for their burn-in —
// most sweeps of a default chain — and reports tokens per second.
func BenchmarkCollapsed(b *testing.B) { benchIterations(b, lda.SamplerADLDA, []int{50, 1000}) }

// benchBurnIn is the number of untimed burn-in sweeps (of the collapsed
// kernel) before a benchmark times its sweeps. The cost of a sweep depends on
// the state: on WordNet glosses (min-df 5, K = 50) a short document of 8
// tokens holds 7.3 distinct topics on average from random topics and 4.1
// after 20 burn-in sweeps — the kind of state a default chain runs its exact
// sweeps from — where BenchmarkMH K=50 with one worker ran 1.3× as fast
// (median of 4 alternated pairs, 0.91–1.47).
const benchBurnIn = 20

// benchIterations times single iterations of a chain of sampler after
// benchBurnIn + 2 untimed ones, for each K and one and two workers.
func benchIterations(b *testing.B, sampler string, ks []int) {
	c, err := benchCorpus()
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range ks {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("K=%d/workers=%d", k, workers), func(b *testing.B) {
				m, err := lda.NewMH(c, lda.Config{K: k, Workers: workers, Seed: 1, Sampler: sampler, BurnIn: benchBurnIn})
				if err != nil {
					b.Fatal(err)
				}
				ctx := context.Background()
				if err := m.Run(ctx, benchBurnIn+2, nil); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				n := 0
				for b.Loop() {
					if err := m.Run(ctx, 1, nil); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64(n)*float64(c.NumTokens())/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// BenchmarkGibbs measures the collapsed Gibbs reference sampler.
func BenchmarkGibbs(b *testing.B) {
	c, err := benchCorpus()
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []int{50} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			g, err := lda.NewGibbs(c, lda.Config{K: k, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if err := g.Run(ctx, 1, nil); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)*float64(c.NumTokens())/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
