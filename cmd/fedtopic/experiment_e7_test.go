package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestExperimentE7 runs e7 on a small labelled corpus over 10 Dirichlet
// parties: one line per method and K with SVM scores, NPMI and no
// perplexity, the plot spec, and the claims with their held field; then
// the FedNMF runs again at one α and one number of parties (the sweeps).
// The topic proportions of the three-group corpus must classify well above
// chance (1/3) for the pooled NMF.
func TestExperimentE7(t *testing.T) {
	out := filepath.Join(t.TempDir(), "e7.jsonl")
	args := []string{"experiment", "e7", "--corpus", labelledCorpus(t, 400), "--tokenizer", "whitespace", "--min-df", "1",
		"--test-fraction", "0.5", "--ks", "3", "--rounds", "3", "--lda-iterations", "30", "--fedlda-rounds", "5", "--workers", "1",
		"--alphas", "0.5", "--party-counts", "4", "--out", out}
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	methods, claims, plots := map[string]bool{}, 0, 0
	sweeps := map[string]int{}
	for _, l := range readLines(t, out) {
		switch {
		case l["plot"] != nil:
			plots++
		case l["claim"] != nil:
			claims++
			if _, ok := l["held"].(bool); !ok {
				t.Errorf("claim line %v has no held", l)
			}
		case l["sweep"] != nil:
			kind, _ := l["sweep"].(string)
			sweeps[kind]++
			switch {
			case kind == "alpha" && (l["alpha"] != 0.5 || l["parties"] != 10.0):
				t.Errorf("α sweep line %v; want α = 0.5 over 10 parties", l)
			case kind == "parties" && l["parties"] != 4.0:
				t.Errorf("party sweep line %v; want 4 parties", l)
			case l["server_opt"] == nil || l["svm_accuracy"] == nil:
				t.Errorf("sweep line %v; want a FedNMF run with its SVM accuracy", l)
			}
		default:
			name, _ := l["method"].(string)
			methods[name] = true
			acc, ok := l["svm_accuracy"].(float64)
			if !ok || l["npmi"] == nil || l["svm_macro_f1"] == nil || l["perplexity"] != nil {
				t.Errorf("line %v; want SVM accuracy, macro-F1 and NPMI, no perplexity", l)
			}
			if name == "nmf" && acc < 0.8 {
				t.Errorf("nmf: SVM accuracy %v; want ≥ 0.8 on three separate word groups", acc)
			}
			if name == "fedadam+mi" && (l["parties"] != 10.0 || l["mi_lambda"] != 0.1) {
				t.Errorf("fedadam+mi line %v; want 10 parties and λ = 0.1", l)
			}
			if name == "fedlda" && (l["parties"] != 10.0 || l["mechanism"] != "none" || l["rounds"] != 5.0) {
				t.Errorf("fedlda line %v; want 10 parties, no mechanism and 5 rounds", l)
			}
		}
	}
	for _, m := range e7Methods() {
		if !methods[m.name] {
			t.Errorf("no line for %s", m.name)
		}
	}
	// 5 pairs × 3 metrics for MI, 3 optimizers × 2 for the server claim;
	// in each sweep, 4 pairs × 3 and 3 × 2.
	if plots != 1 || claims != 21+2*18 {
		t.Errorf("%d plot lines and %d claims; want 1 and %d", plots, claims, 21+2*18)
	}
	if n := len(e7FedNMF()); sweeps["alpha"] != n || sweeps["parties"] != n {
		t.Errorf("sweep lines %v; want %d of each", sweeps, n)
	}
}

// TestExperimentE7BadSweeps checks that e7 refuses sweep values it cannot
// run, naming the flag, before it reads the corpus.
func TestExperimentE7BadSweeps(t *testing.T) {
	tests := []struct {
		flag, value string
	}{
		{"--alphas", "0.5,x"},
		{"--alphas", "0"},
		{"--party-counts", "0"},
		{"--party-counts", "2.5"},
	}
	for _, tt := range tests {
		args := []string{"experiment", "e7", "--corpus", "no-such-file.jsonl", tt.flag, tt.value}
		_, _, err := runCmd(t, args...)
		if err == nil || !strings.Contains(err.Error(), tt.flag) {
			t.Errorf("run(%q) = %v; want an error naming %s", args, err, tt.flag)
		}
	}
}
