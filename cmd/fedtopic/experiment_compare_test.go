package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
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
	// Every private model gives each party a composed model: its own
	// topics beside the federated ones, at the private line's spend.
	private := map[string]map[string]any{}
	for _, l := range lines {
		if l["role"] == "private" {
			private[fmt.Sprint(l["method"], "@", l["target_epsilon"])] = l
		}
	}
	composed := map[string]int{}
	for _, l := range lines {
		if l["role"] != "composed" {
			continue
		}
		key := fmt.Sprint(l["method"], "@", l["target_epsilon"])
		composed[key]++
		p, ok := private[key]
		if !ok {
			t.Errorf("composed line of %s without its private line", key)
			continue
		}
		if l["doc_epsilon"] != p["doc_epsilon"] {
			t.Errorf("%s composed for %v: ε %v, the private run spent %v", key, l["party"], l["doc_epsilon"], p["doc_epsilon"])
		}
		if pp, _ := l["perplexity"].(float64); !(pp > 0) {
			t.Errorf("%s composed for %v: perplexity %v", key, l["party"], l["perplexity"])
		}
		if k, _ := l["k"].(float64); k != p["k"].(float64)+l["own_k"].(float64) {
			t.Errorf("%s composed for %v: K = %v; want the party's %v plus the federated %v", key, l["party"], l["k"], l["own_k"], p["k"])
		}
	}
	if got := count(lines, "role", "smoothed"); got != 3 {
		t.Errorf("%d smoothed lines; want one per party", got)
	}
	for _, l := range lines {
		if l["role"] == "composed" {
			if sp, _ := l["smoothed_perplexity"].(float64); !(sp > 0) {
				t.Errorf("composed line without the party's smoothed perplexity: %v", l)
			}
		}
	}
	for key := range seen {
		if composed[key] != 3 {
			t.Errorf("%s: %d composed lines; want one per party", key, composed[key])
		}
	}
}

// TestCompose checks a composed model: the party's topics then the
// federated ones, the federated prior scaled, and a federated model
// without a prior (NMF) given 1/K per topic.
func TestCompose(t *testing.T) {
	own := &topic.Model{K: 2, V: 2, Phi: []float64{0.9, 0.1, 0.2, 0.8}, Alpha: []float64{0.3, 0.3}, Beta: 0.01, Vocab: []string{"a", "b"}}
	global := &topic.Model{K: 1, V: 2, Phi: []float64{0.5, 0.5}, Alpha: []float64{0.2}}
	m, err := compose(own, global, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0.9, 0.1, 0.2, 0.8, 0.5, 0.5}; !slices.Equal(m.Phi, want) || m.K != 3 {
		t.Errorf("composed Φ = %v (K = %d); want %v", m.Phi, m.K, want)
	}
	if want := []float64{0.3, 0.3, 0.8}; !slices.Equal(m.Alpha, want) {
		t.Errorf("composed α = %v; want %v", m.Alpha, want)
	}
	global.Alpha = nil
	m, err = compose(own, global, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{0.3, 0.3, 0.5}; !slices.Equal(m.Alpha, want) {
		t.Errorf("composed α with an NMF model = %v; want %v", m.Alpha, want)
	}
	if _, err := compose(own, &topic.Model{K: 1, V: 3, Phi: []float64{0.2, 0.3, 0.5}}, 1); err == nil {
		t.Error("models over different vocabularies composed")
	}
}

// TestExperimentCompareAgreesWithSimulate checks that each variant's
// calibrated setting, given to simulate, spends what compare recorded.
func TestExperimentCompareAgreesWithSimulate(t *testing.T) {
	corpusPath := labelledCorpus(t, 240)
	dir := filepath.Join(t.TempDir(), "cmp")
	args := compareArgs(t, corpusPath, dir, "--doc-epsilon", "3", "--methods", "ftm,pctd-ssp,pctd-ssp-secure,fedlda-krr,fednmf-dp",
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
			return []string{"--algorithm", "ftm", "--epsilon", num(l, "epsilon_per_word"), "--tau", num(l, "tau"), "--max-doc-length", "8", "--rounds", "2", "--debias", "output"}
		}},
		{"pctd-ssp", func(l map[string]any) []string {
			return []string{"--algorithm", "pctd", "--epsilon", num(l, "epsilon_target"), "--max-doc-length", "8", "--rounds", "3"}
		}},
		{"pctd-ssp-secure", func(l map[string]any) []string {
			return []string{"--algorithm", "pctd", "--epsilon", num(l, "epsilon_target"), "--max-doc-length", "8", "--rounds", "3",
				"--secure-aggregation", "--threshold", "3"}
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

// lengthCorpus writes n labelled documents whose lengths cycle through
// 5, 6, …, 24 words (document d has 5 + d mod 20), so that every party's
// documents, a random share of each label, have lengths close to uniform
// on 5..24: the 0.95-quantile in the sense #{x < c} = 0.95·n is c = 24.
func lengthCorpus(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for d := range n {
		g := d % len(wordGroups)
		var words []string
		for i := range 5 + d%20 {
			words = append(words, wordGroups[g][(d+i)%len(wordGroups[g])])
		}
		line, _ := json.Marshal(map[string]string{"id": fmt.Sprint(d), "label": fmt.Sprint("group", g), "text": strings.Join(words, " ")})
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "lengths.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// setupLine returns compare's setup line.
func setupLine(t *testing.T, lines []map[string]any) map[string]any {
	t.Helper()
	for _, l := range lines {
		if l["role"] == "setup" {
			return l
		}
	}
	t.Fatal("no setup line")
	return nil
}

// TestExperimentComparePrivateClip runs compare without --max-doc-length:
// each party's private 0.95-quantile of its training documents' lengths
// must be near 24, and so must the clip, the median of the releases.
//
// Tolerance: 3,600 documents leave each party at least 900 training
// documents (1,200 per label, less 10% test and 10% development), about
// 45 of each length. At ε = 1 over 100 candidates the exponential
// mechanism's release is, with probability 1 − 1e-7 per party, within
// d* + τ ranks of q·n, τ = (2/ε)(ln 100 + ln 10⁷) = 41.5, and d* (the best
// candidate's distance) is at most half a length's count, about 23, plus
// the sampling deviation of the party's counts (a few documents): within
// 65 ranks, under two lengths' worth. The releases and the clip must
// therefore lie in 24 ± 2, and the setup line's length_p95 (the
// non-private pooled 95th percentile) within 2 of the clip.
func TestExperimentComparePrivateClip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cmp")
	args := []string{"experiment", "compare", "--corpus", lengthCorpus(t, 3600), "--tokenizer", "whitespace", "--min-df", "1",
		"--topics", "3", "--party-topics", "3", "--iterations", "5", "--workers", "1", "--methods", "pctd-ssp", "--rounds", "pctd=2",
		"--doc-epsilon", "4", "--clip-epsilon", "1", "--clip-max", "100", "--out", dir}
	_, stderr, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	lines := readLines(t, filepath.Join(dir, compareFile))
	setup := setupLine(t, lines)
	clip, _ := setup["clip"].(float64)
	if clip < 22 || clip > 26 {
		t.Errorf("clip = %v; want 24 ± 2", setup["clip"])
	}
	if p95, _ := setup["length_p95"].(float64); math.Abs(p95-clip) > 2 {
		t.Errorf("clip = %v, pooled 95th percentile %v; want within 2", clip, p95)
	}
	if setup["clip_epsilon"] != 1.0 || setup["clip_quantile"] != 0.95 || setup["clip_max"] != 100.0 || setup["max_doc_length"] != clip {
		t.Errorf("setup: clip_epsilon %v, clip_quantile %v, clip_max %v, max_doc_length %v; want 1, 0.95, 100, the clip %v",
			setup["clip_epsilon"], setup["clip_quantile"], setup["clip_max"], setup["max_doc_length"], clip)
	}
	rel, _ := setup["clip_releases"].(map[string]any)
	if len(rel) != 3 {
		t.Fatalf("clip_releases = %v; want one per party", setup["clip_releases"])
	}
	var each []string
	var sorted []float64
	for _, p := range []string{"p1", "p2", "p3"} {
		l, _ := rel[p].(float64)
		if l < 22 || l > 26 {
			t.Errorf("party %s released %v; want 24 ± 2", p, rel[p])
		}
		each = append(each, fmt.Sprintf("%s %v", p, l))
		sorted = append(sorted, l)
	}
	slices.Sort(sorted)
	if clip != sorted[1] {
		t.Errorf("clip = %v; want the median of the releases %v", clip, sorted)
	}
	if want := fmt.Sprintf("clip length %v tokens, the lower median of the parties' private 0.95-quantiles of their documents' lengths (%s), ε = 1 per document", clip, strings.Join(each, ", ")); !strings.Contains(stderr, want) {
		t.Errorf("stderr does not print %q:\n%s", want, stderr)
	}
}

// methodAlone composes a private line's own cost, from its params and the
// method's cost function, without the clip.
func methodAlone(t *testing.T, l map[string]any, delta float64) float64 {
	t.Helper()
	meth, err := lookupMethod(methods(), l["algorithm"].(string))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(l["params"])
	if err != nil {
		t.Fatal(err)
	}
	parts, err := meth.cost(raw, flagKnobs)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := newPrivacyPlan(delta, parts...)
	if err != nil {
		t.Fatal(err)
	}
	return plan.total.Epsilon
}

// TestExperimentCompareClipSpent checks that every private line's spent ε
// includes the clip's quantile when the clip is private — its method
// alone costs less, by exactly the quantile's ε for a pure-ε method and
// by at most that for a Gaussian one, whose composition may fold it in
// more tightly — and that with --max-doc-length nothing is spent on it.
func TestExperimentCompareClipSpent(t *testing.T) {
	corpusPath := labelledCorpus(t, 240)
	const target, delta, clipEps = 2.0, 1e-5, 0.1 // the default --clip-epsilon at this target
	for _, tc := range []struct {
		name  string
		extra []string
		clip  float64 // the quantile's ε in every line
	}{
		{"private clip", []string{"--clip-max", "40"}, clipEps},
		{"fixed clip", []string{"--max-doc-length", "8"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "cmp")
			args := append([]string{"experiment", "compare", "--corpus", corpusPath, "--tokenizer", "whitespace", "--min-df", "1",
				"--topics", "3", "--party-topics", "3", "--iterations", "10", "--workers", "1", "--methods", "ftm,pctd-ssp,fedlda-krr,fednmf-dp",
				"--rounds", "ftm=2,pctd=2,fedlda=2,fednmf=2", "--doc-epsilon", "2", "--out", dir}, tc.extra...)
			if _, stderr, err := runCmd(t, args...); err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
			}
			lines := readLines(t, filepath.Join(dir, compareFile))
			setup := setupLine(t, lines)
			if tc.clip == 0 {
				if _, ok := setup["clip_epsilon"]; ok || setup["clip"] != 8.0 {
					t.Errorf("setup with --max-doc-length 8: clip %v, clip_epsilon %v; want 8 and none", setup["clip"], setup["clip_epsilon"])
				}
			} else if setup["clip_epsilon"] != tc.clip {
				t.Errorf("setup: clip_epsilon %v; want %v", setup["clip_epsilon"], tc.clip)
			}
			n := 0
			for _, l := range lines {
				if l["role"] != "private" {
					continue
				}
				n++
				if l["status"] != nil {
					t.Errorf("%s: %v (%v); want a run", l["method"], l["status"], l["reason"])
					continue
				}
				spent, _ := l["doc_epsilon"].(float64)
				alone := methodAlone(t, l, delta)
				if spent > target {
					t.Errorf("%s: spent ε = %v; want at most the target %v", l["method"], spent, target)
				}
				if tc.clip == 0 {
					if spent != alone {
						t.Errorf("%s: spent ε = %v, the method alone %v; want equal with a fixed clip", l["method"], spent, alone)
					}
					if strings.Contains(fmt.Sprint(l["cost"]), "clip") {
						t.Errorf("%s: cost %q names the clip; want nothing spent on it", l["method"], l["cost"])
					}
					continue
				}
				if !strings.Contains(fmt.Sprint(l["cost"]), fmt.Sprintf("%v for the clip length", tc.clip)) {
					t.Errorf("%s: cost %q; want the clip's ε %v in it", l["method"], l["cost"], tc.clip)
				}
				if !(spent > alone && spent <= alone+tc.clip*(1+1e-9)) {
					t.Errorf("%s: spent ε = %v, the method alone %v; want more, by at most the clip's %v", l["method"], spent, alone, tc.clip)
				}
				if l["algorithm"] == "ftm" && math.Abs(spent-(alone+tc.clip)) > 1e-9 {
					t.Errorf("ftm: spent ε = %v; want the method's %v + the clip's %v (pure ε adds up)", spent, alone, tc.clip)
				}
				for _, p := range l["spent"].([]any) {
					if pe := p.(map[string]any)["epsilon"].(float64); pe != spent {
						t.Errorf("%s: party %v spent %v; want every party's ledger to hold the clip, %v", l["method"], p.(map[string]any)["party"], pe, spent)
					}
				}
			}
			if n != 4 {
				t.Errorf("%d private lines; want 4", n)
			}
		})
	}
}

// TestExperimentCompareClipFlags refuses bad clip settings, naming the
// flag, and lists a budget the clip's quantile alone uses up as
// unreachable, with the reason.
func TestExperimentCompareClipFlags(t *testing.T) {
	corpusPath := labelledCorpus(t, 120)
	base := func(out string, extra ...string) []string {
		return append([]string{"experiment", "compare", "--corpus", corpusPath, "--tokenizer", "whitespace", "--min-df", "1",
			"--topics", "3", "--party-topics", "3", "--iterations", "5", "--methods", "ftm", "--rounds", "ftm=2", "--out", out}, extra...)
	}
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--clip-epsilon", "0"}, "--clip-epsilon 0"},
		{[]string{"--clip-epsilon", "inf"}, "--clip-epsilon +Inf"},
		{[]string{"--clip-quantile", "1"}, "--clip-quantile 1"},
		{[]string{"--clip-max", "0"}, "--clip-max 0"},
		{[]string{"--max-doc-length", "8", "--clip-epsilon", "1"}, "leave them out with --max-doc-length 8"},
	} {
		args := base(filepath.Join(t.TempDir(), "bad"), tc.flags...)
		if _, _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run(%q) = %v; want an error naming %q", tc.flags, err, tc.want)
		}
	}
	dir := filepath.Join(t.TempDir(), "cmp")
	args := base(dir, "--doc-epsilon", "0.1", "--clip-epsilon", "0.1")
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	var got map[string]any
	for _, l := range readLines(t, filepath.Join(dir, compareFile)) {
		if l["role"] == "private" {
			got = l
		}
	}
	if got["status"] != "unreachable" || !strings.Contains(fmt.Sprint(got["reason"]), "private quantile alone costs ε = 0.1") {
		t.Errorf("ftm at ε = 0.1 with a clip of ε = 0.1: %v; want status unreachable naming the clip", got)
	}
}

// TestFTMTau checks compare's threshold rule for FTM: FTM's default τ where
// it leaves no more noise entries per token than the cap, τ raised where it
// leaves more, and the mechanism's own survival probability within the cap
// either way.
func TestFTMTau(t *testing.T) {
	tests := []struct {
		name     string
		eps      float64
		v        int
		maxNoise float64
		raised   bool
	}{
		{"papers' ε: default kept", 11, 12000, 1000, false},
		{"ε 2: default leaves 2,200", 2, 12000, 1000, true},
		{"ε 0.66 (10 per document)", 0.66, 12000, 1000, true},
		{"ε 0.06 (1 per document)", 0.06, 12000, 1000, true},
		{"ε 0.06, a cap above V", 0.06, 12000, 20000, false},
		{"ε 0.06, cap 1", 0.06, 12000, 1, true},
		{"small vocabulary", 0.3, 50, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			th, err := ftmTau(tt.eps, tt.v, tt.maxNoise)
			if err != nil {
				t.Fatalf("ftmTau(%v, %d, %v) = %v", tt.eps, tt.v, tt.maxNoise, err)
			}
			if def := ftm.AutoTau(tt.eps, tt.v); th.defaultTau != def {
				t.Errorf("default τ = %v; want ftm.AutoTau's %v", th.defaultTau, def)
			}
			if th.tau < th.defaultTau {
				t.Errorf("τ = %v, below FTM's default %v", th.tau, th.defaultTau)
			}
			if got := th.tau > th.defaultTau; got != tt.raised {
				t.Errorf("τ = %v against the default %v: raised = %v; want %v", th.tau, th.defaultTau, got, tt.raised)
			}
			// The mechanism FTM builds at this τ keeps at most the cap.
			m, err := privacy.NewThresholdedLaplace(privacy.ThresholdedLaplaceConfig{Epsilon: tt.eps, Threshold: th.tau, Vocab: tt.v})
			if err != nil {
				t.Fatal(err)
			}
			noise := m.SurvivalProb() * float64(tt.v-1)
			if math.Abs(noise-th.noise) > 1e-9*noise {
				t.Errorf("noise entries = %v; the mechanism's q·(V−1) is %v", th.noise, noise)
			}
			if tt.raised {
				if noise > tt.maxNoise {
					t.Errorf("noise entries per token at τ = %v: %v; want at most %v", th.tau, noise, tt.maxNoise)
				}
				// Not raised further than needed: one grid step less breaks the cap.
				lower, err := privacy.NewThresholdedLaplace(privacy.ThresholdedLaplaceConfig{Epsilon: tt.eps, Threshold: th.tau - m.Granularity(), Vocab: tt.v})
				if err != nil {
					t.Fatal(err)
				}
				if n := lower.SurvivalProb() * float64(tt.v-1); n <= tt.maxNoise && th.tau-m.Granularity() >= th.defaultTau {
					t.Errorf("τ − one grid step = %v keeps %v ≤ %v noise entries: τ = %v was raised too far", th.tau-m.Granularity(), n, tt.maxNoise, th.tau)
				}
			}
		})
	}
	for _, bad := range []struct {
		eps      float64
		v        int
		maxNoise float64
	}{{0, 100, 10}, {1, 1, 10}, {1, 100, 0.5}, {math.Inf(1), 100, 10}, {1, 100, math.NaN()}} {
		if _, err := ftmTau(bad.eps, bad.v, bad.maxNoise); err == nil {
			t.Errorf("ftmTau(%v, %d, %v) = nil error; want one", bad.eps, bad.v, bad.maxNoise)
		}
	}
}

// TestExperimentCompareFTMTau runs compare's FTM with a cap on the noise
// entries per token that binds and with one that does not: the line
// records the τ the run used (its params' tau), FTM's default beside it and
// the expected noise entries, which stay within the cap; with the cap
// binding τ is above the default, without it τ is the default. The spend
// does not depend on τ. A cap below one entry is refused.
func TestExperimentCompareFTMTau(t *testing.T) {
	corpusPath := labelledCorpus(t, 120)
	lineAt := func(maxNoise string) map[string]any {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "cmp")
		args := compareArgs(t, corpusPath, dir, "--doc-epsilon", "2", "--methods", "ftm", "--ftm-max-noise", maxNoise)
		if _, stderr, err := runCmd(t, args...); err != nil {
			t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
		}
		for _, l := range readLines(t, filepath.Join(dir, compareFile)) {
			if l["role"] == "private" {
				return l
			}
		}
		t.Fatal("no private line")
		return nil
	}
	var spent []float64
	for _, tt := range []struct {
		maxNoise string
		cap      float64
		raised   bool
	}{{"2", 2, true}, {"1000", 1000, false}} {
		l := lineAt(tt.maxNoise)
		tau, ok1 := l["tau"].(float64)
		def, ok2 := l["tau_default"].(float64)
		noise, ok3 := l["noise_entries_per_token"].(float64)
		params, _ := l["params"].(map[string]any)
		if !ok1 || !ok2 || !ok3 || params == nil {
			t.Fatalf("--ftm-max-noise %s: line %v; want tau, tau_default, noise_entries_per_token and params", tt.maxNoise, l)
		}
		if params["tau"] != tau {
			t.Errorf("--ftm-max-noise %s: params' tau = %v; the line's tau = %v", tt.maxNoise, params["tau"], tau)
		}
		if noise > tt.cap || noise <= 0 {
			t.Errorf("--ftm-max-noise %s: %v noise entries per token; want in (0, %v]", tt.maxNoise, noise, tt.cap)
		}
		if got := tau > def; got != tt.raised || tau < def {
			t.Errorf("--ftm-max-noise %s: τ = %v against FTM's default %v; want raised = %v", tt.maxNoise, tau, def, tt.raised)
		}
		spent = append(spent, l["doc_epsilon"].(float64))
	}
	if spent[0] != spent[1] {
		t.Errorf("spent ε per document %v with the cap binding, %v without; want the same: τ costs nothing", spent[0], spent[1])
	}
	args := compareArgs(t, corpusPath, filepath.Join(t.TempDir(), "bad"), "--ftm-max-noise", "0.5")
	if _, _, err := runCmd(t, args...); err == nil || !strings.Contains(err.Error(), "--ftm-max-noise") {
		t.Errorf("run(%q) = %v; want an error naming --ftm-max-noise", args, err)
	}
}
