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

// TestComparePCTDSchedule: pctd-ssp-schedule runs with its noise schedule,
// final average and θ prior (recorded in its params), and simulate given the same
// parameters spends exactly the document-level ε compare recorded, under
// secure aggregation with distributed noise.
func TestComparePCTDSchedule(t *testing.T) {
	corpusPath := labelledCorpus(t, 240)
	dir := filepath.Join(t.TempDir(), "cmp")
	args := compareArgs(t, corpusPath, dir, "--doc-epsilon", "3", "--methods", "pctd-ssp-schedule", "--rounds", "pctd-ssp-schedule=4")
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	var line map[string]any
	for _, l := range readLines(t, filepath.Join(dir, compareFile)) {
		if l["role"] == "private" && l["method"] == "pctd-ssp-schedule" {
			line = l
		}
	}
	if line == nil || line["status"] != nil {
		t.Fatalf("compare line of pctd-ssp-schedule: %v", line)
	}
	params, _ := line["params"].(map[string]any)
	if params["schedule_growth"] != 1.3 || params["average_last"] != 4.0 || params["theta_prior"] != 0.25 || params["secure_threshold"] != 3.0 {
		t.Errorf("pctd-ssp-schedule params %v; want schedule_growth 1.3, average_last 4 (the rounds), theta_prior 0.25, secure_threshold 3", params)
	}
	vocabPath := filepath.Join(t.TempDir(), "vocab.txt")
	var words []string
	for _, g := range wordGroups {
		words = append(words, g...)
	}
	if err := os.WriteFile(vocabPath, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	sargs := []string{"simulate", "--corpus", corpusPath, "--tokenizer", "whitespace", "--vocab", vocabPath,
		"--split", "labels:sizes=1,2,3", "--topics", "3", "--seed", "1", "--out", out,
		"--algorithm", "pctd", "--epsilon", fmt.Sprint(line["epsilon_target"].(float64)), "--max-doc-length", "8", "--rounds", "4",
		"--secure-aggregation", "--threshold", "3", "--params", `{"schedule_growth":1.3,"average_last":4,"theta_prior":0.25}`}
	if _, stderr, err := runCmd(t, sargs...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", sargs, err, stderr)
	}
	var sum struct {
		Epsilon []struct{ Epsilon float64 } `json:"epsilon"`
	}
	for _, rl := range readLines(t, filepath.Join(out, "run.jsonl")) {
		if rl["type"] == "summary" {
			b, _ := json.Marshal(rl)
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := line["doc_epsilon"].(float64)
	if len(sum.Epsilon) != 3 {
		t.Fatalf("simulate's summary has %d parties' spend; want 3", len(sum.Epsilon))
	}
	for _, pe := range sum.Epsilon {
		if math.Abs(pe.Epsilon-want) > 1e-9*want {
			t.Errorf("simulate spent ε = %v per document; compare recorded %v", pe.Epsilon, want)
		}
	}
}
