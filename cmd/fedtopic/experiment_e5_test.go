package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// TestExperimentE5 runs e5 on a small labelled corpus with vectors from
// embed: a convergence line for every setting at every measured iteration
// (federated settings with their cost), a coherence line for every setting
// and K with and without the word-relation step, and every claim.
func TestExperimentE5(t *testing.T) {
	corpusPath := labelledCorpus(t, 240)
	vectors := filepath.Join(t.TempDir(), "vectors.txt")
	if _, stderr, err := runCmd(t, "embed", "--corpus", corpusPath, "--dim", "3", "--min-count", "1", "--workers", "1", "--out", vectors); err != nil {
		t.Fatalf("embed: %v; stderr:\n%s", err, stderr)
	}
	out := filepath.Join(t.TempDir(), "e5.jsonl")
	args := []string{"experiment", "e5", "--corpus", corpusPath, "--min-df", "1", "--topics", "3", "--rounds", "4", "--eval-every", "2",
		"--max-doc-length", "8", "--workers", "1", "--sigmas", "0.25,0.3", "--epsilons", "4,10", "--ks", "2,3",
		"--lda-iterations", "20", "--top-n", "4", "--embeddings", vectors, "--out", out}
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	conv, coh, claims := map[string]int{}, map[string]int{}, map[string]int{}
	plots := 0
	for _, l := range readLines(t, out) {
		switch {
		case l["plot"] != nil:
			plots++
		case l["claim"] != nil:
			claims[l["claim"].(string)]++
			if _, ok := l["held"].(bool); !ok {
				t.Errorf("claim line %v has no held", l)
			}
		case l["part"] == "convergence":
			name := l["setting"].(string)
			conv[name]++
			if strings.HasPrefix(name, "unit") {
				// T = 4: μ = √4/σ per word occurrence; per document (L = 8) far more.
				sigma := l["sigma"].(float64)
				want, _ := accountant.GaussianEpsilon(1e-5, 2/sigma)
				if w, _ := l["epsilon_per_word"].(float64); math.Abs(w-want) > 1e-9*want {
					t.Errorf("%s: ε per word occurrence %v; want %v", name, l["epsilon_per_word"], want)
				}
				if d, _ := l["epsilon_per_document"].(float64); d < 100 {
					t.Errorf("%s: ε per document %v; want far above the per-word cost", name, l["epsilon_per_document"])
				}
			}
			if name == "ssp ε=4" {
				if d, _ := l["epsilon_per_document"].(float64); d < 3.99 || d > 4.01 {
					t.Errorf("%s: ε per document %v; want 4", name, l["epsilon_per_document"])
				}
			}
		case l["part"] == "coherence":
			coh[l["setting"].(string)]++
			if _, ok := l["embedding_coherence"].(float64); !ok {
				t.Errorf("coherence line %v has no embedding coherence", l)
			}
		default:
			t.Errorf("unexpected line %v", l)
		}
	}
	if plots != 1 {
		t.Errorf("%d plot lines; want 1", plots)
	}
	for _, s := range []string{"unit σ=0.25", "unit σ=0.3", "ssp ε=4", "ssp ε=10", "no noise", "pooled", "party p1", "party p2", "party p3"} {
		if conv[s] != 2 {
			t.Errorf("%s: %d convergence lines; want 2 (iterations 2 and 4)", s, conv[s])
		}
	}
	for _, s := range []string{"no noise", "unit σ=0.25", "ssp ε=10", "no noise +relation", "unit σ=0.25 +relation", "ssp ε=10 +relation", "lda"} {
		if coh[s] != 2 {
			t.Errorf("%s: %d coherence lines; want 2 (K = 2 and 3)", s, coh[s])
		}
	}
	want := map[string]int{
		"perplexity falls with iterations":                               5,
		"σ = 0.3 converges more slowly than σ = 0.25":                    1,
		"unit σ=0.25 ends within 5% of the non-private pooled EM":        1,
		"the federated model beats every party alone":                    5,
		"coherence (NPMI) rises with K":                                  7,
		"PC-TD without noise has the best coherence (NPMI)":              2,
		"perturbed PC-TD beats LDA in coherence (NPMI) at the largest K": 2,
		"the word-relation step raises coherence (NPMI)":                 6,
	}
	for c, n := range want {
		if claims[c] != n {
			t.Errorf("claim %q: %d lines; want %d", c, claims[c], n)
		}
	}
	if len(claims) != len(want) {
		t.Errorf("claims %v; want exactly %v", claims, want)
	}
}
