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
