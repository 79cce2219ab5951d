package eval

import (
	"context"
	"fmt"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/topic"
)

// benchData draws a synthetic corpus and wraps its true topics as a model.
func benchData(b *testing.B, cfg synth.Config) (*topic.Model, *corpus.Corpus) {
	b.Helper()
	cfg.WordsOnly = true
	data, err := synth.Generate(cfg, rng.Derive(1, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	m := &topic.Model{K: data.K, V: data.Corpus.V, Phi: data.Phi, Vocab: make([]string, data.Corpus.V)}
	for w := range m.Vocab {
		m.Vocab[w] = fmt.Sprintf("w%d", w)
	}
	return m, data.Corpus
}

// BenchmarkPerplexity measures document-completion perplexity on 2,000
// test documents of 100 tokens at K = 50, V = 10,000.
func BenchmarkPerplexity(b *testing.B) {
	m, docs := benchData(b, synth.Config{K: 50, V: 10000, Docs: 2000, DocLen: 100, FixedLen: true})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Perplexity(context.Background(), m, docs, topic.InferConfig{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(docs.NumTokens())*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}

// BenchmarkNPMI measures NPMI on 100,000 short documents (15 tokens) for
// K = 50 topics of 10 words, the size the co-occurrence counting is built
// for.
func BenchmarkNPMI(b *testing.B) {
	m, docs := benchData(b, synth.Config{K: 50, V: 10000, Docs: 100000, DocLen: 15, FixedLen: true})
	top := m.TopWordIDs(DefaultTopN)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NPMI(top, docs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(docs.NumDocs())*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}
