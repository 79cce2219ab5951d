package topic

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// synthModel draws a corpus from LDA's generative process (corpus/synth)
// and returns its true topics as a valid Model with α = 0.1, together with
// the corpus. cfg's zero fields take synth's defaults.
func synthModel(t testing.TB, seed uint64, cfg synth.Config) (*Model, *corpus.Corpus) {
	t.Helper()
	cfg.WordsOnly = true
	data, err := synth.Generate(cfg, rng.Derive(seed, "test", "synth"))
	if err != nil {
		t.Fatalf("synth.Generate: %v", err)
	}
	k, v := data.K, data.Corpus.V
	m := &Model{K: k, V: v, Phi: data.Phi, Vocab: make([]string, v), Alpha: make([]float64, k), Beta: cfg.Beta}
	for w := range v {
		m.Vocab[w] = fmt.Sprintf("w%03d", w)
	}
	for t := range k {
		m.Alpha[t] = 0.1
	}
	return m, data.Corpus
}

// randomModel returns the true topics of a small synthetic corpus with k
// topics over v words drawn from Dirichlet(beta).
func randomModel(t testing.TB, seed uint64, k, v int, beta float64) *Model {
	t.Helper()
	m, _ := synthModel(t, seed, synth.Config{K: k, V: v, Docs: 1, Beta: beta})
	return m
}

// tinyModel is a hand-written valid model: 2 topics over 4 words.
func tinyModel() *Model {
	return &Model{
		K: 2, V: 4,
		Phi:   []float64{0.5, 0.25, 0.25, 0, 0, 0.125, 0.375, 0.5},
		Vocab: []string{"apple", "banana", "cherry", "date"},
		Alpha: []float64{0.1, 0.2},
		Beta:  0.01,
		Prov: Provenance{
			Method: "lda", Params: map[string]string{"topics": "2", "iterations": "100"},
			Seed: 42, Iterations: 100, Corpus: "fruit.txt: 3 documents, 12 tokens",
			Created: "2026-11-01T12:00:00Z", Version: "0.1.0",
			Privacy: []PrivacySpend{{Party: "a", Epsilon: 8, Delta: 1e-6, Unit: "word occurrence"}},
		},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		modify func(m *Model)
		want   string // substring of the error; "" for valid
	}{
		{name: "valid", modify: func(m *Model) {}},
		{name: "no alpha", modify: func(m *Model) { m.Alpha = nil }},
		{name: "K zero", modify: func(m *Model) { m.K = 0 }, want: "K = 0"},
		{name: "phi length", modify: func(m *Model) { m.Phi = m.Phi[:7] }, want: "Phi has 7 entries"},
		{name: "row sum", modify: func(m *Model) { m.Phi[0] = 0.6 }, want: "row 0 of Phi sums to 1.1"},
		{name: "NaN", modify: func(m *Model) { m.Phi[5] = math.NaN() }, want: "Phi[1][1] = NaN"},
		{name: "negative", modify: func(m *Model) { m.Phi[3] = -0 - 1e-9 }, want: "Phi[0][3]"},
		{name: "vocab length", modify: func(m *Model) { m.Vocab = m.Vocab[:3] }, want: "vocabulary has 3 words"},
		{name: "duplicate word", modify: func(m *Model) { m.Vocab[3] = "apple" }, want: `"apple" appears twice (ids 0 and 3)`},
		{name: "empty word", modify: func(m *Model) { m.Vocab[1] = "" }, want: "word 1 is empty"},
		{name: "newline word", modify: func(m *Model) { m.Vocab[1] = "a\nb" }, want: "line break"},
		{name: "bad UTF-8", modify: func(m *Model) { m.Vocab[1] = "\xff" }, want: "not valid UTF-8"},
		{name: "alpha length", modify: func(m *Model) { m.Alpha = []float64{1} }, want: "Alpha has 1 entries"},
		{name: "alpha zero", modify: func(m *Model) { m.Alpha[1] = 0 }, want: "Alpha[1] = 0"},
		{name: "beta inf", modify: func(m *Model) { m.Beta = math.Inf(1) }, want: "Beta = +Inf"},
		{name: "epsilon NaN", modify: func(m *Model) { m.Prov.Privacy[0].Epsilon = math.NaN() }, want: `party "a"`},
		{name: "joined", modify: func(m *Model) { m.Beta = -1; m.Alpha[0] = -1 }, want: "Alpha[0] = -1, want finite and positive\ntopic: Beta = -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tinyModel()
			tt.modify(m)
			err := m.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v; want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v; want an error containing %q", err, tt.want)
			}
		})
	}
	var nilModel *Model
	if err := nilModel.Validate(); err == nil {
		t.Error("(*Model)(nil).Validate() = nil; want an error")
	}
}
