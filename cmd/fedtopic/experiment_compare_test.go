package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compareArgs are the settings of the small compare runs of the tests.
func compareArgs(t *testing.T, corpusPath, out string, extra ...string) []string {
	t.Helper()
	return append([]string{"experiment", "compare", "--corpus", corpusPath, "--tokenizer", "whitespace", "--min-df", "1",
		"--topics", "3", "--party-topics", "2,3", "--iterations", "30", "--max-doc-length", "8", "--workers", "1",
		"--rounds", "ftm=2,pctd=2|3,fedlda=2,fednmf=2", "--out", out}, extra...)
}

// TestExperimentCompare runs compare on a small labelled corpus: the three
// parties alone, the pooled model, and every variant at every target, each
// private line spending at most its target and nearly all of it.
func TestExperimentCompare(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cmp")
	args := compareArgs(t, labelledCorpus(t, 300), dir, "--doc-epsilon", "2,inf")
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	lines := readLines(t, filepath.Join(dir, compareFile))
	if got := count(lines, "role", "party"); got != 3 {
		t.Errorf("%d party lines; want 3", got)
	}
	if got := count(lines, "role", "pooled"); got != 1 {
		t.Errorf("%d pooled lines; want 1", got)
	}
	if got := count(lines, "role", "setup"); got != 1 {
		t.Errorf("%d setup lines; want 1", got)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if l["role"] != "private" {
			continue
		}
		key := fmt.Sprint(l["method"], "@", l["target_epsilon"])
		seen[key] = true
		if l["status"] == "unreachable" {
			t.Errorf("%s: unreachable (%v); every variant reaches ε = 2 by its noise", key, l["reason"])
			continue
		}
		for _, f := range []string{"perplexity", "dev_perplexity", "npmi", "diversity", "logistic_macro_f1", "seconds", "bytes_per_party", "rounds"} {
			if _, ok := l[f].(float64); !ok {
				t.Errorf("%s: %s = %v; want a number", key, f, l[f])
			}
		}
		if l["target_epsilon"] == "inf" {
			if _, ok := l["doc_epsilon"]; ok {
				t.Errorf("%s: doc_epsilon %v without noise; want none", key, l["doc_epsilon"])
			}
			continue
		}
		eps, _ := l["doc_epsilon"].(float64)
		if eps > 2 || eps < 2*0.999 {
			t.Errorf("%s: spent ε = %v; want within 0.1%% below the target 2", key, eps)
		}
		if d, _ := l["doc_delta"].(float64); d > 1e-5 {
			t.Errorf("%s: spent δ = %v; want at most 1e-5", key, d)
		}
		if l["doc_epsilon"] != l["planned_epsilon"] {
			t.Errorf("%s: spent ε %v, planned %v; want the ledgers to spend the plan", key, l["doc_epsilon"], l["planned_epsilon"])
		}
	}
	for _, v := range compareVariants() {
		for _, e := range []string{"2", "inf"} {
			if !seen[v.name+"@"+e] {
				t.Errorf("no line for %s at ε = %s", v.name, e)
			}
		}
	}
}

// TestExperimentCompareAgreesWithSimulate checks that each variant's
// calibrated setting, given to simulate, spends what compare recorded.
func TestExperimentCompareAgreesWithSimulate(t *testing.T) {
	corpusPath := labelledCorpus(t, 240)
	dir := filepath.Join(t.TempDir(), "cmp")
	args := compareArgs(t, corpusPath, dir, "--doc-epsilon", "3", "--methods", "ftm,pctd-ssp,fedlda-krr,fednmf-dp",
		"--rounds", "ftm=2,pctd=3,fedlda=2,fednmf=2")
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	vocabPath := filepath.Join(t.TempDir(), "vocab.txt")
	var words []string
	for _, g := range wordGroups {
		words = append(words, g...)
	}
	if err := os.WriteFile(vocabPath, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	byMethod := map[string]map[string]any{}
	for _, l := range readLines(t, filepath.Join(dir, compareFile)) {
		if l["role"] == "private" {
			byMethod[l["method"].(string)] = l
		}
	}
	num := func(l map[string]any, key string) string {
		return fmt.Sprint(l[key].(float64))
	}
	tests := []struct {
		variant string
		flags   func(l map[string]any) []string
	}{
		{"ftm", func(l map[string]any) []string {
			return []string{"--algorithm", "ftm", "--epsilon", num(l, "epsilon_per_word"), "--max-doc-length", "8", "--rounds", "2", "--debias", "output"}
		}},
		{"pctd-ssp", func(l map[string]any) []string {
			return []string{"--algorithm", "pctd", "--epsilon", num(l, "epsilon_target"), "--max-doc-length", "8", "--rounds", "3"}
		}},
		{"fedlda-krr", func(l map[string]any) []string {
			return []string{"--algorithm", "fedlda", "--epsilon", num(l, "epsilon_per_tuple"), "--max-doc-length", "8", "--rounds", "2"}
		}},
		{"fednmf-dp", func(l map[string]any) []string {
			return []string{"--algorithm", "fednmf", "--clip", "1", "--noise-multiplier", num(l, "noise_multiplier"), "--client-fraction", "1", "--rounds", "2"}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.variant, func(t *testing.T) {
			l, ok := byMethod[tt.variant]
			if !ok || l["status"] != nil {
				t.Fatalf("compare line of %s: %v", tt.variant, l)
			}
			out := filepath.Join(t.TempDir(), "run")
			sargs := append([]string{"simulate", "--corpus", corpusPath, "--tokenizer", "whitespace", "--vocab", vocabPath,
				"--split", "labels:sizes=1,2,3", "--topics", "3", "--seed", "1", "--out", out}, tt.flags(l)...)
			if _, stderr, err := runCmd(t, sargs...); err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", sargs, err, stderr)
			}
			var sum struct {
				Type    string `json:"type"`
				Epsilon []struct {
					Epsilon, Delta float64
				} `json:"epsilon"`
			}
			for _, rl := range readLines(t, filepath.Join(out, "run.jsonl")) {
				if rl["type"] == "summary" {
					b, _ := json.Marshal(rl)
					if err := json.Unmarshal(b, &sum); err != nil {
						t.Fatal(err)
					}
				}
			}
			if len(sum.Epsilon) != 3 {
				t.Fatalf("simulate's summary has %d parties' spend; want 3", len(sum.Epsilon))
			}
			want := l["doc_epsilon"].(float64)
			for _, pe := range sum.Epsilon {
				if math.Abs(pe.Epsilon-want) > 1e-9*want {
					t.Errorf("simulate spent ε = %v per document; compare recorded %v", pe.Epsilon, want)
				}
			}
		})
	}
}

// TestExperimentCompareUnreachable lists a budget no setting meets, with
// the reason, and refuses bad flags.
func TestExperimentCompareUnreachable(t *testing.T) {
	corpusPath := labelledCorpus(t, 120)
	dir := filepath.Join(t.TempDir(), "cmp")
	// FTM's ε per word occurrence is searched down to 1e-4: 8 words of
	// 1e-4 cost 8e-4 per document, more than 1e-4.
	args := compareArgs(t, corpusPath, dir, "--doc-epsilon", "0.0001", "--methods", "ftm")
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	var got map[string]any
	for _, l := range readLines(t, filepath.Join(dir, compareFile)) {
		if l["role"] == "private" {
			got = l
		}
	}
	if got["status"] != "unreachable" || !strings.Contains(fmt.Sprint(got["reason"]), "costs more than") {
		t.Errorf("ftm at ε = 0.0001: %v; want status unreachable with the reason", got)
	}
	for _, bad := range [][]string{{"--doc-epsilon", "0"}, {"--doc-epsilon", "x"}, {"--methods", "lda"}, {"--rounds", "pctd=0"}, {"--max-doc-length", "0"}} {
		args := compareArgs(t, corpusPath, filepath.Join(t.TempDir(), "bad"), bad...)
		if _, _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), bad[0]) {
			t.Errorf("run(%q) = %v; want an error naming %s", bad, err, bad[0])
		}
	}
}
