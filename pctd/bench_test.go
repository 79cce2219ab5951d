package pctd

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// benchUnits returns window:3 units of docs documents of 30 tokens drawn
// Zipf-like from v words.
func benchUnits(docs, v int) *units {
	r := rng.Derive(1, "bench")
	z := rand.NewZipf(r, 1.1, 1, uint64(v-1))
	c := &corpus.Corpus{V: v, DocStart: []int{0}}
	for range docs {
		for range 30 {
			c.Words = append(c.Words, int32(z.Uint64()))
		}
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	return buildUnits(c, 3, 0)
}

// benchIteration times one party's iteration of the unit variant at
// V = 12,000 and K = 50 on window:3 units, one worker, and reports
// seconds per million tokens.
func benchIteration(b *testing.B, docs int, path string) {
	const k, v = 50, 12000
	us := benchUnits(docs, v)
	phi := InitialTopics(1, k, v)
	e := newEM(us, k, v)
	nz := noise{variant: VariantUnit, path: path, std: PaperSigma,
		stream: func(labels ...any) *rand.Rand { return rng.Derive(2, labels...) }}
	b.ResetTimer()
	for range b.N {
		if _, err := e.iterate(context.Background(), phi, nz, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/float64(us.tokens)*1e6, "s/Mtoken")
}

// BenchmarkIterationFast: 33,334 documents, 1,000,020 tokens.
func BenchmarkIterationFast(b *testing.B) { benchIteration(b, 33334, PathFast) }

// BenchmarkIterationLiteral runs the literal path on 100 documents (1,000
// units) only: its cost is linear in the units, so s/Mtoken scales.
func BenchmarkIterationLiteral(b *testing.B) { benchIteration(b, 100, PathLiteral) }
