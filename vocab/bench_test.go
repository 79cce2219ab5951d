package vocab_test

import (
	"context"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/vocab"
)

// BenchmarkPrepare reads, tokenizes and encodes the shipped demo corpus
// (WordNet glosses, JSONL) and reports input tokens per second.
func BenchmarkPrepare(b *testing.B) {
	paths := []string{"../demo/wordnet-glosses.jsonl"}
	for _, bc := range []struct {
		name string
		tc   corpus.TokenizerConfig
	}{
		{name: "unicode", tc: corpus.TokenizerConfig{}},
		{name: "unicode-stem", tc: corpus.TokenizerConfig{Stem: true}},
		{name: "whitespace", tc: corpus.TokenizerConfig{Mode: corpus.ModeWhitespace}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			tokens := 0
			for b.Loop() {
				c, _, st, err := vocab.Prepare(context.Background(), paths, corpus.ReadOptions{}, bc.tc, vocab.BuildOptions{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				tokens += c.NumTokens() + st.Encode.OOVTokens
			}
			b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
