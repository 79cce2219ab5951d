package fedlda

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/vocab"
)

// The throughput figures (one core, K = 50, the demo corpus of 29,415
// WordNet glosses with its 12,000 most frequent words, documents truncated
// to M = 20 tokens, kRR at ε = 10 per tuple):
//
//	go test -run '^$' -bench 'User|Collector' -benchtime 5x -cpu 1 ./fedlda
//
// FEDTOPIC_BENCH_CORPUS names another JSON-lines corpus (the full WordNet
// glosses, for example).

const benchK, benchV = 50, 12000

// benchCorpus reads the benchmark corpus with a vocabulary of its benchV
// most frequent words.
func benchCorpus(b *testing.B) (*corpus.Corpus, []string) {
	b.Helper()
	path := os.Getenv("FEDTOPIC_BENCH_CORPUS")
	if path == "" {
		path = "../demo/wordnet-glosses.jsonl"
	}
	c, v, _, err := vocab.Prepare(context.Background(), []string{path}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, vocab.BuildOptions{MaxSize: benchV}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return c, v.Words()
}

// benchRun returns a learner and collector over the benchmark corpus (one
// party) after burnIn iterations, and the latest broadcast.
func benchRun(b *testing.B, sampler string, burnIn int) (*Learner, *Aggregator, []byte) {
	b.Helper()
	c, words := benchCorpus(b)
	params, _ := json.Marshal(Config{K: benchK, Mechanism: MechanismKRR, Epsilon: 10, Sampler: sampler, Rounds: 1000})
	s := fed.Setup{Run: "bench", Parties: []string{"p1"}, Vocab: words, Seed: 1, Params: params}
	l, err := NewLearner(s, 0, c)
	if err != nil {
		b.Fatal(err)
	}
	a, err := NewAggregator(s)
	if err != nil {
		b.Fatal(err)
	}
	step, _ := a.Init()
	for round := 1; round <= burnIn; round++ {
		ls, err := l.Learn(round, step.Payload)
		if err != nil {
			b.Fatal(err)
		}
		if step, err = a.Aggregate(round, []fed.Update{{Party: 0, ID: "p1", Payload: ls.Payload}}); err != nil {
			b.Fatal(err)
		}
	}
	return l, a, step.Payload
}

// BenchmarkUser measures one iteration of every user of a party after 5
// iterations of burn-in: computing φ (and the alias tables for MH) from
// the broadcast, re-sampling, tuple generation, padding and sampling, and
// kRR on the sent words. tokens/s counts the party's tokens; bytes/token
// and bytes/user are the learner's state.
func BenchmarkUser(b *testing.B) {
	for _, sampler := range []string{SamplerMH, SamplerGibbs} {
		b.Run(sampler, func(b *testing.B) {
			l, _, bc := benchRun(b, sampler, 5)
			round := 5
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				round++
				if _, err := l.Learn(round, bc); err != nil {
					b.Fatal(err)
				}
			}
			m := l.Memory()
			b.ReportMetric(float64(m.Tokens)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			b.ReportMetric(float64(m.Users*l.l)*float64(b.N)/b.Elapsed().Seconds(), "tuples/s")
			b.ReportMetric(float64(m.PerToken), "bytes/token")
			b.ReportMetric(float64(m.PerUser), "bytes/user")
			b.ReportMetric(float64(tupleSize*l.l), "wire-bytes/user/iteration")
		})
	}
}

// BenchmarkCollector measures the collector on one update of every user
// of the corpus: the Validator's checks plus applying the tuples
// ("validate+apply"), and a whole Aggregate, which also encodes the
// K×V broadcast ("aggregate").
func BenchmarkCollector(b *testing.B) {
	l, a, bc := benchRun(b, SamplerMH, 5)
	ls, err := l.Learn(6, bc)
	if err != nil {
		b.Fatal(err)
	}
	val := &Validator{shape: a.shape()}
	tuples := float64(l.Users() * l.l)
	b.Run("validate+apply", func(b *testing.B) {
		for b.Loop() {
			if err := val.CheckUpdate(6, ls.Payload); err != nil {
				b.Fatal(err)
			}
			_, body, _ := decodeTuplesUnchecked(ls.Payload)
			a.apply(body)
		}
		b.ReportMetric(tuples*float64(b.N)/b.Elapsed().Seconds(), "tuples/s")
	})
	b.Run("aggregate", func(b *testing.B) {
		round := 6
		for b.Loop() {
			if err := val.CheckUpdate(round, ls.Payload); err != nil {
				b.Fatal(err)
			}
			if _, err := a.Aggregate(round, []fed.Update{{Party: 0, ID: "p1", Payload: ls.Payload}}); err != nil {
				b.Fatal(err)
			}
			round++
		}
		b.ReportMetric(tuples*float64(b.N)/b.Elapsed().Seconds(), "tuples/s")
	})
}

// decodeTuplesUnchecked returns an update's users and tuples without the
// per-tuple checks (the Validator has made them).
func decodeTuplesUnchecked(b []byte) (users int, body []byte, err error) {
	if len(b) < headerSize+8 {
		return 0, nil, fmt.Errorf("%w: short", errCodec)
	}
	return 0, b[headerSize+8:], nil
}
