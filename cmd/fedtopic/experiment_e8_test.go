package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentE8 runs e8 on a small labelled corpus: the n-gram line,
// each party alone, the pooled model, AD-LDA and every variant at one
// target and without noise, each at every λ with λ = 0 equal to the n-gram
// model alone; the private lines spend at most their target; a claim line
// per federated model.
func TestExperimentE8(t *testing.T) {
	out := filepath.Join(t.TempDir(), "e8.jsonl")
	args := []string{"experiment", "e8", "--corpus", labelledCorpus(t, 300), "--tokenizer", "whitespace", "--min-df", "1",
		"--topics", "3", "--party-topics", "2,3", "--iterations", "30", "--max-doc-length", "8", "--workers", "1",
		"--rounds", "ftm=2,pctd=2,fedlda=2,fednmf=2", "--adlda-rounds", "10", "--doc-epsilon", "2,inf",
		"--lambda-grid", "0.5", "--out", out}
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	lines := readLines(t, out)
	var ngram float64
	perp := map[string]map[float64]float64{} // model → λ → perplexity
	claims := map[string]bool{}
	plots := 0
	for _, l := range lines {
		switch {
		case l["plot"] != nil:
			plots++
		case l["claim"] != nil:
			name, _ := l["model"].(string)
			claims[name] = true
			if _, ok := l["held"].(bool); !ok {
				t.Errorf("claim line %v has no held", l)
			}
		case l["role"] == "ngram":
			ngram, _ = l["perplexity"].(float64)
		case l["status"] == "unreachable":
			t.Errorf("%v at ε = %v: unreachable (%v); every variant reaches ε = 2 by its noise", l["method"], l["target_epsilon"], l["reason"])
		default:
			name, _ := l["model"].(string)
			lambda, _ := l["lambda"].(float64)
			p, ok := l["perplexity"].(float64)
			if !ok || !(p > 1) {
				t.Errorf("%s at λ = %v: perplexity %v; want a number > 1", name, lambda, l["perplexity"])
			}
			if perp[name] == nil {
				perp[name] = map[float64]float64{}
			}
			perp[name][lambda] = p
			if l["role"] == "private" {
				if eps, _ := l["doc_epsilon"].(float64); !(eps > 0 && eps <= 2) {
					t.Errorf("%s: spent ε = %v; want in (0, 2]", name, l["doc_epsilon"])
				}
			}
		}
	}
	if plots != 1 || !(ngram > 1) {
		t.Fatalf("%d plot lines, n-gram perplexity %v; want 1 and a number > 1", plots, ngram)
	}
	want := []string{"p1 alone", "p2 alone", "p3 alone", "pooled", "adlda"}
	for _, v := range compareVariants() {
		for _, e := range []string{"2", "inf"} {
			want = append(want, fmt.Sprintf("%s ε=%s", v.name, e))
		}
	}
	for _, name := range want {
		ps := perp[name]
		if len(ps) != 3 {
			t.Errorf("%s: perplexities at λ %v; want 0, 0.1 and 0.5", name, ps)
			continue
		}
		if ps[0] != ngram {
			t.Errorf("%s at λ = 0: perplexity %v; want the n-gram model's %v", name, ps[0], ngram)
		}
		if !strings.HasSuffix(name, " alone") && !claims[name] {
			t.Errorf("%s: no claim line", name)
		}
	}
	// At λ = 0.5 the topics weigh enough to tell models apart: a party
	// alone knows only some of the label groups, so its topics mislead on
	// the others' documents, while models of all the parties' documents
	// improve on the n-gram model.
	for _, name := range []string{"pooled", "adlda", "ftm ε=inf"} {
		got := perp[name][0.5]
		if !(got < ngram) {
			t.Errorf("%s at λ = 0.5: perplexity %v; want below the n-gram model's %v", name, got, ngram)
		}
		for _, p := range []string{"p1 alone", "p2 alone", "p3 alone"} {
			if !(got < perp[p][0.5]) {
				t.Errorf("%s at λ = 0.5: perplexity %v; want below %s's %v", name, got, p, perp[p][0.5])
			}
		}
	}
}
