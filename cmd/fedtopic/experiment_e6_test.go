package main

import (
	"path/filepath"
	"testing"
)

// TestExperimentE6 runs e6 on a small labelled corpus: a convergence line
// for every mechanism and sampler at every measured iteration, a line per
// sweep setting, the two claims, and RRP's cost per user stated beside
// its δ.
func TestExperimentE6(t *testing.T) {
	out := filepath.Join(t.TempDir(), "e6.jsonl")
	args := []string{"experiment", "e6", "--corpus", labelledCorpus(t, 240), "--tokenizer", "whitespace", "--min-df", "1",
		"--topics", "3", "--rounds", "4", "--eval-every", "2", "--max-doc-length", "8", "--workers", "1",
		"--epsilons", "5,8", "--ks", "3", "--truncations", "0.1", "--ratios", "0.5", "--out", out}
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	conv := map[string]int{}
	sweeps, classified, claims := 0, 0, map[string]int{}
	for _, l := range readLines(t, out) {
		switch {
		case l["plot"] != nil:
		case l["claim"] != nil:
			claims[l["claim"].(string)]++
			if _, ok := l["held"].(bool); !ok {
				t.Errorf("claim line %v has no held", l)
			}
		case l["part"] == "convergence":
			conv[l["mechanism"].(string)+"/"+l["sampler"].(string)]++
			if l["mechanism"] == "rrp" {
				// l = ⌈0.7·8⌉ = 6 tuples, T = 4: ε per user 4·6·7.5 and δ 4·6·2·0.05.
				if l["epsilon_per_user"] != 180.0 || l["delta_per_user"].(float64) < 2.39 || l["delta_per_user"].(float64) > 2.41 {
					t.Errorf("RRP line %v; want ε = 180 and δ = 2.4 per user", l)
				}
			}
		case l["part"] == "sweep":
			sweeps++
		case l["part"] == "classification":
			classified++
			for _, key := range []string{"logistic_macro_f1", "logistic_macro_recall", "svm_accuracy", "logistic_macro_auc", "svm_macro_auc"} {
				if v, ok := l[key].(float64); !ok || v < 0 || v > 1 {
					t.Errorf("classification line %v: %s = %v; want a number in [0, 1]", l, key, l[key])
				}
			}
			// Every word group is a label, and the classifiers' test
			// documents hold all of them.
			if l["auc_classes"] != float64(len(wordGroups)) {
				t.Errorf("classification line %v: auc_classes = %v; want %d", l, l["auc_classes"], len(wordGroups))
			}
		default:
			t.Errorf("unexpected line %v", l)
		}
	}
	for _, mech := range e6Mechanisms {
		for _, s := range []string{"gibbs", "mh"} {
			if conv[mech+"/"+s] != 2 {
				t.Errorf("%s/%s: %d convergence lines; want 2 (iterations 2 and 4)", mech, s, conv[mech+"/"+s])
			}
		}
	}
	if classified != len(e6Mechanisms) {
		t.Errorf("%d classification lines; want one per mechanism (%d)", classified, len(e6Mechanisms))
	}
	// ε: 2 values × 3 private mechanisms; K: 1 × 4; δ: 1 × 2; r: 1 × 4.
	if sweeps != 16 {
		t.Errorf("%d sweep lines; want 16", sweeps)
	}
	if claims["MH ends within 5% of Gibbs"] != 4 || claims["RRP gives a lower perplexity than kRR and t-kRR at equal ε per tuple"] != 1+2+1+1 {
		t.Errorf("claims %v; want 4 MH lines and 5 RRP lines", claims)
	}
}
