package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runRecordTwoRounds is a run record of two parties and two rounds, in the
// format sim writes.
const runRecordTwoRounds = `{"type": "round", "round": 1, "attempt": 1, "committed": true, "replied": ["p1", "p2"], "bytes": [{"party": "p1", "up": 4100, "down": 9000}, {"party": "p2", "up": 5200, "down": 9000}], "epsilon": [{"party": "p1", "epsilon": 0, "delta": 0, "accountant": "pure", "releases": 0}, {"party": "p2", "epsilon": 0, "delta": 0, "accountant": "pure", "releases": 0}], "duration_s": 0.02, "metrics": {"perplexity": 20.5, "log_likelihood": -2200}}
{"type": "round", "round": 2, "attempt": 1, "committed": true, "replied": ["p1", "p2"], "bytes": [{"party": "p1", "up": 3900, "down": 9000}, {"party": "p2", "up": 5000, "down": 9000}], "epsilon": [{"party": "p1", "epsilon": 0, "delta": 0, "accountant": "pure", "releases": 0}, {"party": "p2", "epsilon": 0, "delta": 0, "accountant": "pure", "releases": 0}], "duration_s": 0.02, "metrics": {"perplexity": 14.2, "log_likelihood": -1900}}
{"type": "summary", "run": "sim", "algorithm": "adlda", "parties": ["p1", "p2"], "seed": 5, "rounds": 2, "bytes": [{"party": "p1", "up": 8000, "down": 18000}, {"party": "p2", "up": 10200, "down": 18000}], "epsilon": [{"party": "p1", "epsilon": 0, "delta": 0, "accountant": "pure", "releases": 0}, {"party": "p2", "epsilon": 0, "delta": 0, "accountant": "pure", "releases": 0}], "duration_s": 0.05, "metrics": {"perplexity": 14.2, "log_likelihood": -1900}}
`

// runDir writes a run directory with the record above and a model trained
// on testdata/three.txt as its global model.
func runDir(t *testing.T) string {
	t.Helper()
	model := trainThree(t)
	dir := filepath.Join(t.TempDir(), "run")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "run.jsonl"), []byte(runRecordTwoRounds), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReport(t *testing.T) {
	dir := runDir(t)
	out := filepath.Join(t.TempDir(), "report.html")
	_, stderr, err := runCmd(t, "report", dir, "--out", out, "--title", "Two parties", "--top-words", "4")
	if err != nil {
		t.Fatalf("report: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, out) {
		t.Errorf("report's stderr %q does not say where the report is", stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<title>Two parties</title>",
		`<section id="convergence">`, `<section id="communication">`, `<section id="topics">`,
		"no differential privacy", `class="plot"`,
	} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report has no %q", want)
		}
	}
	// Each topic of the trained model is one word group: its top words show.
	for _, g := range wordGroups {
		found := false
		for _, w := range g {
			found = found || strings.Contains(string(page), w)
		}
		if !found {
			t.Errorf("report shows no word of the group %v", g)
		}
	}
	stdout, _, err := runCmd(t, "report", dir, "--out", "-", "--title", "Two parties", "--top-words", "4")
	if err != nil || stdout != string(page) {
		t.Errorf("report --out - wrote %d bytes, %v; want the file's %d bytes", len(stdout), err, len(page))
	}
}

func TestReportBadInput(t *testing.T) {
	dir := runDir(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{name: "no run directory", args: []string{"report", "--out", "r.html"}, wantCode: exitUsage, want: "at least one run directory"},
		{name: "no --out", args: []string{"report", dir}, wantCode: exitUsage, want: "--out is required"},
		{name: "bad --top-words", args: []string{"report", dir, "--out", "-", "--top-words", "99"}, wantCode: exitUsage, want: "top_words = 99"},
		{name: "missing directory", args: []string{"report", filepath.Join(dir, "nope"), "--out", "-"}, wantCode: exitFailure, want: "no such file"},
		{name: "not a run", args: []string{"report", t.TempDir(), "--out", "-"}, wantCode: exitFailure, want: "has no run.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, tt.args...)
			if code := exitCode(err); code != tt.wantCode || !strings.Contains(stderr, tt.want) {
				t.Errorf("run(%q): exit %d, stderr %q; want exit %d and %q", tt.args, code, stderr, tt.wantCode, tt.want)
			}
		})
	}
}

func TestExportLDAvisAndTheta(t *testing.T) {
	model := trainThree(t)
	dir := t.TempDir()
	ldavis := filepath.Join(dir, "ldavis.json")
	args := []string{"export", "--model", model, "--format", "ldavis", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--seed", "3", "--out", ldavis}
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q): %v\n%s", args, err, stderr)
	}
	b, err := os.ReadFile(ldavis)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		TopicTermDists [][]float64 `json:"topic_term_dists"`
		DocTopicDists  [][]float64 `json:"doc_topic_dists"`
		DocLengths     []int       `json:"doc_lengths"`
		Vocab          []string    `json:"vocab"`
		TermFrequency  []int       `json:"term_frequency"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatalf("ldavis export is not JSON: %v", err)
	}
	if len(in.TopicTermDists) != 3 || len(in.DocTopicDists) != 150 || len(in.DocLengths) != 150 || len(in.Vocab) != 24 || len(in.TermFrequency) != 24 {
		t.Fatalf("ldavis export: %d topics, %d θ rows, %d lengths, %d words, %d frequencies; want 3, 150, 150, 24, 24",
			len(in.TopicTermDists), len(in.DocTopicDists), len(in.DocLengths), len(in.Vocab), len(in.TermFrequency))
	}
	tokens, freq := 0, 0
	for _, n := range in.DocLengths {
		tokens += n
	}
	for _, n := range in.TermFrequency {
		freq += n
	}
	if tokens != freq || tokens == 0 {
		t.Errorf("doc_lengths add to %d, term_frequency to %d; want the same positive token count", tokens, freq)
	}
	for d, row := range in.DocTopicDists {
		s := 0.0
		for _, x := range row {
			s += x
		}
		if math.Abs(s-1) > 1e-9 {
			t.Errorf("θ of document %d sums to %v, want 1", d, s)
		}
	}

	stdout, _, err := runCmd(t, "export", "--model", model, "--format", "theta-csv", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--seed", "3", "--out", "-")
	if err != nil {
		t.Fatalf("export --format theta-csv: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 151 || lines[0] != "doc,topic_0,topic_1,topic_2" {
		t.Errorf("theta-csv: %d lines starting %q; want a header doc,topic_0,topic_1,topic_2 and 150 rows", len(lines), lines[0])
	}

	_, stderr, err := runCmd(t, "export", "--model", model, "--format", "ldavis", "--out", "-")
	if exitCode(err) != exitUsage || !strings.Contains(stderr, "needs --corpus") {
		t.Errorf("export --format ldavis without --corpus: exit %d, %q; want a usage error naming --corpus", exitCode(err), stderr)
	}
}
