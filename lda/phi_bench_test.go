package lda

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"

	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/vocab"
)

// BenchmarkDrawPhi measures the Dirichlet draw of Φ with its proposal
// tables, the O(K·V) part of an MH iteration, on counts shaped like a
// trained model's (about 40 tokens per word spread over a few topics), and
// reports nanoseconds per entry of Φ.
func BenchmarkDrawPhi(b *testing.B) {
	const v = 20000
	for _, k := range []int{50, 1000} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			counts := benchCounts(k, v)
			propose := make([]bool, v)
			for w := range propose {
				propose[w] = true
			}
			p := newPhi(k, v, propose, false)
			workers := []*phiWorker{newPhiWorker()}
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

// benchCounts returns counts shaped like a trained model's, cols[w·K + k]:
// 40 tokens per word spread over at most 8 topics.
func benchCounts(k, v int) []int32 {
	counts := make([]int32, k*v)
	r := rng.Derive(1, "bench counts")
	for w := range v {
		for range 40 {
			counts[w*k+int(r.Uint64N(uint64(min(k, 8))))*(k/min(k, 8))]++
		}
	}
	return counts
}

// BenchmarkAddState measures adding one state's posterior mean of Φ to the
// average Train returns (see Config.Average), on counts shaped as in
// BenchmarkDrawPhi, with one and two workers, and reports nanoseconds per
// entry of Φ.
func BenchmarkAddState(b *testing.B) {
	const v = 20000
	for _, k := range []int{50, 1000} {
		counts := benchCounts(k, v)
		for _, workers := range []int{1, 2} {
			ps := newPosteriorSum(k, v, workers, 0.01)
			b.Run(fmt.Sprintf("K=%d/workers=%d", k, workers), func(b *testing.B) {
				for b.Loop() {
					addState(ps, counts)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(k*v), "ns/entry")
			})
		}
	}
}

// BenchmarkAverage measures what Train's average of 10 states costs from
// the start, memory included: a fresh sum, 10 states added and the model's
// Φ made of them, on counts shaped as in BenchmarkDrawPhi, with two
// workers; it reports nanoseconds per entry of Φ and state.
func BenchmarkAverage(b *testing.B) {
	const v, states, workers = 20000, 10, 2
	for _, k := range []int{50, 1000} {
		counts := benchCounts(k, v)
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			for b.Loop() {
				ps := newPosteriorSum(k, v, workers, 0.01)
				for range states {
					addState(ps, counts)
				}
				_ = ps.phi()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(k*v*states), "ns/entry/state")
		})
	}
}

// tokenTarget is plain LDA written as a Target, to measure what the
// interface costs against the specialised loop.
type tokenTarget struct{ words []int32 }

func (tt *tokenTarget) LogLik(phi *Phi, i, k int) float64 {
	return math.Log(phi.At(k, int(tt.words[i])))
}
func (tt *tokenTarget) ProposalWords(i int) []int32 { return tt.words[i : i+1] }
func (tt *tokenTarget) AddCounts(i, k int, c *Counts) {
	c.Data[int(tt.words[i])*c.K+k]++
}

// BenchmarkSweep compares one sweep of the specialised plain-LDA loop with
// the same model through the Target interface, on the corpus named by
// FEDTOPIC_BENCH_CORPUS (as BenchmarkMH reads it) or else a synthetic corpus
// of short documents (K = 50), and reports tokens per second of the sweep
// alone (no Φ draw).
func BenchmarkSweep(b *testing.B) {
	var c *corpus.Corpus
	if path := os.Getenv("FEDTOPIC_BENCH_CORPUS"); path != "" {
		var err error
		c, _, _, err = vocab.Prepare(context.Background(), []string{path}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, vocab.BuildOptions{MinDF: 5}, nil)
		if err != nil {
			b.Fatal(err)
		}
	} else {
		d, err := synth.Generate(synth.Config{K: 50, V: 5000, Docs: 20000, DocLen: 12, WordsOnly: true}, rng.Derive(1, "bench sweep"))
		if err != nil {
			b.Fatal(err)
		}
		c = d.Corpus
	}
	var err error
	cfg := Config{K: 50, Workers: 1, Seed: 1, BurnIn: -1}
	for _, path := range []string{"lda", "target"} {
		b.Run(path, func(b *testing.B) {
			var m *MH
			if path == "lda" {
				m, err = NewMH(c, cfg)
			} else {
				m, err = NewTargetMH(c.DocStart, c.V, &tokenTarget{c.Words}, cfg)
			}
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := m.Run(ctx, 3, nil); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				m.phiStale = false // keep Φ: time the sweep only
				m.clearCounts()
				if err := m.sweep(ctx); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(n)*float64(c.NumTokens())/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
