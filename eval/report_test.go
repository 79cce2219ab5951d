package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedtopic/fedtopic/topic"
)

func TestEvaluate(t *testing.T) {
	m := &topic.Model{K: 2, V: 4, Phi: []float64{0.5, 0.5, 0, 0, 0, 0, 0.5, 0.5},
		Vocab: []string{"a", "b", "c", "d"}, Alpha: []float64{1, 1}}
	docs := docsOf(4, []int32{0, 2, 1, 3}, []int32{0, 1}, []int32{2, 3, 3})
	emb, err := ReadEmbeddings(strings.NewReader("a 1 0\nb 1 1\nc 0 1\nd 0 2\n"), m.Vocab)
	if err != nil {
		t.Fatal(err)
	}
	data := Data{Test: docs, Train: docs, Reference: docs, Embeddings: emb,
		Planted: []float64{0, 0, 0.5, 0.5, 0.5, 0.5, 0, 0}}
	cfg := Config{TopN: 2, DiversityTopN: 1, Infer: topic.InferConfig{Seed: 4}}
	got, err := Evaluate(context.Background(), m, data, cfg)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	top := [][]int32{{0, 1}, {2, 3}}
	p, _ := Perplexity(context.Background(), m, docs, cfg.Infer)
	u, _ := UMass(top, docs)
	n, _ := NPMI(top, docs)
	ec, _ := EmbeddingCoherence(top, emb)
	rc, _ := Recovery(data.Planted, m.Phi, 2, 4)
	want := Report{Topics: 2, Vocab: 4, Perplexity: &p, UMass: &u, NPMI: &n, EmbeddingCoherence: &ec,
		Diversity: 1, Recovery: &rc}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Evaluate (-want +got):\n%s", diff)
	}
	if rc.Recovered != 2 || rc.Assign[0] != 1 {
		t.Errorf("Evaluate recovery = %+v; want both topics recovered, swapped", rc)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Errorf("json.Marshal(Report): %v", err)
	}
	var b bytes.Buffer
	if err := got.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"topics                   2\n", "perplexity               ", "recovered topics         2 of 2 (Hellinger < 0.25)\n", "topic diversity          1.0000\n"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("WriteTable output\n%s\nlacks %q", b.String(), line)
		}
	}
	// With the default top 25 capped at V = 4, both topics list all four
	// words: diversity 4/8.
	only, err := Evaluate(context.Background(), m, Data{}, Config{})
	if err != nil || only.Perplexity != nil || only.UMass != nil || only.Recovery != nil || only.Diversity != 0.5 {
		t.Errorf("Evaluate(no data) = %+v, %v; want only diversity 0.5", only, err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "zero value", cfg: Config{}},
		{name: "top one", cfg: Config{TopN: 1}, want: "top_n = 1"},
		{name: "diversity", cfg: Config{DiversityTopN: -2}, want: "diversity_top_n = -2"},
		{name: "infer", cfg: Config{Infer: topic.InferConfig{Sweeps: -1}}, want: "sweeps = -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v; want %q", err, tt.want)
			}
		})
	}
}

func TestEvaluateWarnings(t *testing.T) {
	uniform := func(k, v int) *topic.Model {
		m := &topic.Model{K: k, V: v, Phi: make([]float64, k*v)}
		for i := range m.Phi {
			m.Phi[i] = 1 / float64(v)
		}
		for w := range v {
			m.Vocab = append(m.Vocab, string(rune('a'+w%26))+strings.Repeat("x", w/26))
		}
		return m
	}
	docs := docsOf(3, []int32{0, 1, 2}, []int32{1, 2})
	tests := []struct {
		name string
		m    *topic.Model
		data Data
		want []string
	}{
		{name: "more topics than words", m: uniform(4, 3), data: Data{Train: docs}, want: []string{
			"more topics (K = 4) than vocabulary words (V = 3)",
			"top 10 words of each topic, but the vocabulary has only 3",
			"diversity is 1/K = 0.2500 whatever the topics",
		}},
		{name: "no coherence, no coherence warning", m: uniform(2, 3), want: []string{"diversity is 1/K = 0.5000"}},
		{name: "enough words", m: uniform(2, 30), data: Data{Train: docsOf(30, []int32{0, 1})}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Evaluate(context.Background(), tt.m, tt.data, Config{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Warnings) != len(tt.want) {
				t.Errorf("Warnings = %q; want %d", rep.Warnings, len(tt.want))
			}
			for i, w := range tt.want {
				if i >= len(rep.Warnings) || !strings.Contains(rep.Warnings[i], w) {
					t.Errorf("Warnings = %q; want [%d] to contain %q", rep.Warnings, i, w)
				}
			}
		})
	}
}

func TestWriteTableNamesCoherence(t *testing.T) {
	c := docsOf(3, []int32{0, 1, 2}, []int32{1, 2})
	c.Sources = []string{"train.txt", "more.txt"}
	u, err := UMass([][]int32{{0, 1, 2}}, c)
	if err != nil {
		t.Fatal(err)
	}
	n, err := NPMI([][]int32{{0, 1}}, c)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := (Report{Topics: 1, Vocab: 3, UMass: &u, NPMI: &n}).WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"mean per pair of top-3 words (3 pairs per topic), averaged over topics; document counts from train.txt, more.txt (2 documents; two words co-occur when one document holds both)",
		"score of the pair of top-2 words, averaged over topics; reference corpus train.txt, more.txt (2 documents;",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteTable output\n%s\nlacks %q", b.String(), want)
		}
	}
}
