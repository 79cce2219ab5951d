package eval

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// docsOf builds a corpus over v words from word-id lists.
func docsOf(v int, docs ...[]int32) *corpus.Corpus {
	c := &corpus.Corpus{V: v, DocStart: []int{0}}
	for _, d := range docs {
		c.Words = append(c.Words, d...)
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	return c
}

// words returns the documents of c as word-id lists.
func words(c *corpus.Corpus) [][]int32 {
	out := make([][]int32, c.NumDocs())
	for d := range out {
		out[d] = append([]int32{}, c.Doc(d)...)
	}
	return out
}

func TestSplitCompletion(t *testing.T) {
	c := docsOf(10, []int32{5, 6, 7, 8, 9}, []int32{1}, nil, []int32{2, 3})
	obs, held := SplitCompletion(c)
	if diff := cmp.Diff([][]int32{{5, 7, 9}, {1}, {}, {2}}, words(obs)); diff != "" {
		t.Errorf("SplitCompletion observed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([][]int32{{6, 8}, {}, {}, {3}}, words(held)); diff != "" {
		t.Errorf("SplitCompletion held out (-want +got):\n%s", diff)
	}
	if obs.V != 10 || held.V != 10 {
		t.Errorf("SplitCompletion V = %d, %d; want 10, 10", obs.V, held.V)
	}
}

func TestHeldOutLikelihoodHandComputed(t *testing.T) {
	m := &topic.Model{K: 2, V: 3, Phi: []float64{0.5, 0.5, 0, 0, 0.2, 0.8}, Vocab: []string{"a", "b", "c"}}
	theta := []float64{0.25, 0.75, 0.5, 0.5, 0.9, 0.1}
	held := docsOf(3, []int32{0, 2}, []int32{1}, nil)
	// Token probabilities Σ_k θ_dk φ_kw:
	//   doc 0, word a: 0.25·0.5          = 0.125
	//   doc 0, word c: 0.75·0.8          = 0.6
	//   doc 1, word b: 0.5·0.5 + 0.5·0.2 = 0.35
	// log-likelihood = ln(0.125·0.6·0.35) = ln 0.02625 = −3.640089…,
	// perplexity = 0.02625^(−1/3) = 3.364546…
	got, err := HeldOutLikelihood(m, theta, held)
	if err != nil {
		t.Fatalf("HeldOutLikelihood: %v", err)
	}
	if want := math.Log(0.02625); math.Abs(got.LogLikelihood-want) > 1e-12 {
		t.Errorf("HeldOutLikelihood log-likelihood = %.12f; want %.12f", got.LogLikelihood, want)
	}
	if want := math.Pow(0.02625, -1.0/3); math.Abs(got.Perplexity-want) > 1e-12 {
		t.Errorf("HeldOutLikelihood perplexity = %.12f; want %.12f", got.Perplexity, want)
	}
	if got.HeldOutTokens != 3 || got.Docs != 2 {
		t.Errorf("HeldOutLikelihood tokens, docs = %d, %d; want 3, 2", got.HeldOutTokens, got.Docs)
	}
}

func TestPerplexityHandComputed(t *testing.T) {
	tests := []struct {
		name  string
		model *topic.Model
		test  *corpus.Corpus
		want  float64
	}{
		{
			// One topic: θ = 1, so the perplexity is exp(−mean log φ_w)
			// over the held-out words b (0.25) and a (0.5): 0.125^(−1/2).
			name:  "one topic",
			model: &topic.Model{K: 1, V: 3, Phi: []float64{0.5, 0.25, 0.25}, Vocab: []string{"a", "b", "c"}, Alpha: []float64{1}},
			test:  docsOf(3, []int32{0, 1, 2, 0}),
			want:  math.Sqrt(8),
		},
		{
			// Disjoint topics force the fold-in assignments: observed
			// (a, b) gives C = (2, 0) and θ = ((2+1)/(2+2), (0+1)/(2+2)) =
			// (3/4, 1/4); held-out c and d each have probability 1/4·1/2,
			// so the perplexity is 8. The one-token document holds nothing
			// out and does not count.
			name: "forced topics",
			model: &topic.Model{K: 2, V: 4, Phi: []float64{0.5, 0.5, 0, 0, 0, 0, 0.5, 0.5},
				Vocab: []string{"a", "b", "c", "d"}, Alpha: []float64{1, 1}},
			test: docsOf(4, []int32{0, 2, 1, 3}, []int32{3}),
			want: 8,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Perplexity(context.Background(), tt.model, tt.test, topic.InferConfig{Seed: 1})
			if err != nil {
				t.Fatalf("Perplexity: %v", err)
			}
			if math.Abs(got.Perplexity-tt.want) > 1e-12 {
				t.Errorf("Perplexity = %.12f; want %.12f", got.Perplexity, tt.want)
			}
			if want := -math.Log(tt.want) * 2; math.Abs(got.LogLikelihood-want) > 1e-12 {
				t.Errorf("Perplexity log-likelihood = %.12f; want %.12f", got.LogLikelihood, want)
			}
		})
	}
}

func TestPerplexityErrors(t *testing.T) {
	m := &topic.Model{K: 2, V: 4, Phi: []float64{0.5, 0.5, 0, 0, 0, 0, 1, 0}, Vocab: []string{"a", "b", "c", "d"}}
	tests := []struct {
		name string
		test *corpus.Corpus
		want string
	}{
		{name: "nothing held out", test: docsOf(4, []int32{0}, nil), want: "no held-out tokens"},
		{name: "zero probability", test: docsOf(4, []int32{0, 3}), want: `word "d" has probability 0`},
		{name: "word id", test: docsOf(9, []int32{0, 8}), want: "word id 8 outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Perplexity(context.Background(), m, tt.test, topic.InferConfig{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Perplexity error = %v; want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := HeldOutLikelihood(m, []float64{1}, docsOf(4, []int32{0})); err == nil {
		t.Error("HeldOutLikelihood(theta of wrong length) = nil error; want an error")
	}
}
