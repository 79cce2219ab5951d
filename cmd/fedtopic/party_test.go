package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeGuideConfig writes the guide's configuration file name into dir,
// with the lines of replace substituted (old line prefix → new line).
func writeGuideConfig(t *testing.T, dir, name string, replace map[string]string) string {
	t.Helper()
	src, ok := guideFiles(t)[name]
	if !ok {
		t.Fatalf("%s has no block # file: %s", deployGuide, name)
	}
	lines := strings.SplitAfter(src, "\n")
	for old, repl := range replace {
		found := false
		for i, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), old) {
				lines[i], found = repl+"\n", true
			}
		}
		if !found && repl != "" {
			lines = append(lines, repl+"\n")
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPartyStartupErrors: a party refuses a configuration that cannot run
// at start-up, naming the file and the field, before it opens (and could
// charge) its ledger or dials the coordinator.
func TestPartyStartupErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		replace map[string]string
		want    []string
	}{
		{"ftm without max_doc_tokens", "ftm-p1.yaml",
			map[string]string{"params:": "params: {topics: [10, 15, 20], rounds: 5, epsilon: 11}", "topics:": "", "rounds:": "", "epsilon:": "", "max_doc_tokens:": "", "secure_noise:": ""},
			[]string{"ftm-p1.yaml: params.max_doc_tokens: required for ftm"}},
		{"ftm with unit word occurrence", "ftm-p1.yaml",
			map[string]string{"params:": "params: {topics: [10, 15, 20], rounds: 5, epsilon: 11, max_doc_tokens: 30, unit: word occurrence}", "topics:": "", "rounds:": "", "epsilon:": "", "max_doc_tokens:": "", "secure_noise:": ""},
			[]string{"ftm-p1.yaml: params.unit:"}},
		{"budget below the plan", "ftm-p1.yaml",
			map[string]string{"budget:": "budget: {epsilon: 10, delta: 1.0e-5}"},
			[]string{"ftm-p1.yaml: ", "ε = 334 per document", "raise budget.epsilon to at least 334", "params.max_doc_tokens"}},
		{"topics for another number of parties", "ftm-p1.yaml",
			map[string]string{"params:": "params: {topics: [10, 15], rounds: 5, epsilon: 11, max_doc_tokens: 30}", "topics:": "", "rounds:": "", "epsilon:": "", "max_doc_tokens:": "", "secure_noise:": ""},
			[]string{"ftm-p1.yaml: params: ftm"}},
		{"unknown parameter", "p1.yaml",
			map[string]string{"params:": "params: {k: 10, rounds: 50, topics: 3}"},
			[]string{"p1.yaml: params: adlda", "topics"}},
		{"unknown algorithm", "p1.yaml",
			map[string]string{"algorithm:": "algorithm: lda"},
			[]string{`p1.yaml: algorithm: "lda" is not an algorithm; choose one of adlda, ftm`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeGlossSlices(t, filepath.Join(dir, "data"), 1, 50)
			path := writeGuideConfig(t, dir, tt.file, tt.replace)
			t.Chdir(dir)
			_, _, err := runCmd(t, "party", "--config", filepath.Base(path))
			for _, want := range tt.want {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("party: %v; want an error containing %q", err, want)
				}
			}
			if _, serr := os.Stat(filepath.Join(dir, "state")); !errors.Is(serr, fs.ErrNotExist) {
				t.Errorf("the refused party created its state directory (and ledger): %v", serr)
			}
		})
	}
}

// TestCoordinatorStartupErrors: the coordinator refuses parameters that
// cannot run at start-up, naming the file and the field, before it
// listens or writes anything.
func TestCoordinatorStartupErrors(t *testing.T) {
	tests := []struct {
		name, file, old, repl, want string
	}{
		{"ftm without max_doc_tokens", "ftm-coordinator.yaml", "max_doc_tokens:", "", "ftm-coordinator.yaml: params.max_doc_tokens: required for ftm"},
		{"topics for another number of parties", "ftm-coordinator.yaml", "topics:", "  topics: [10, 15]", "ftm-coordinator.yaml: params: ftm"},
		{"unknown algorithm", "coordinator.yaml", "algorithm:", "algorithm: lda", `coordinator.yaml: algorithm: "lda" is not an algorithm`},
		{"pctd without max_doc_tokens", "pctd-coordinator.yaml", "params:", "params: {topics: 10, rounds: 20, epsilon: 10, secure_noise: true}", "pctd-coordinator.yaml: params: pctd: max_doc_tokens must be at least 1"},
		{"pctd's paper variant without max_doc_tokens", "pctd-coordinator.yaml", "params:", "params: {topics: 10, variant: unit, sigma: 0.25}", "pctd-coordinator.yaml: params.max_doc_tokens: required for pctd"},
		{"pctd counting words", "pctd-coordinator.yaml", "params:", "params: {topics: 10, variant: unit, sigma: 0.25, max_doc_tokens: 30, unit: word occurrence}", `pctd-coordinator.yaml: params.unit: "word occurrence"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeGuideConfig(t, dir, tt.file, map[string]string{tt.old: tt.repl})
			t.Chdir(dir)
			_, _, err := runCmd(t, "coordinator", "--config", filepath.Base(path))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("coordinator: %v; want an error containing %q", err, tt.want)
			}
			for _, d := range []string{"state", "out", "out-ftm", "out-pctd"} {
				if _, serr := os.Stat(filepath.Join(dir, d)); !errors.Is(serr, fs.ErrNotExist) {
					t.Errorf("the refused coordinator created %s: %v", d, serr)
				}
			}
		})
	}
}

// TestPartyGivesUp: a party whose coordinator never answers says, each
// time, that it retries and how long it keeps trying, and exits with an
// error naming give_up once that time has passed.
func TestPartyGivesUp(t *testing.T) {
	dir := t.TempDir()
	writeGlossSlices(t, filepath.Join(dir, "data"), 1, 50)
	if err := os.WriteFile(filepath.Join(dir, "vocab.txt"), []byte("entity\nobject\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runCmd(t, "certs", "--out", filepath.Join(dir, "certs"), "--parties", "p1"); err != nil {
		t.Fatalf("certs: %v\n%s", err, stderr)
	}
	writeGuideConfig(t, dir, "p1.yaml", map[string]string{
		"coordinator:": "coordinator: " + freeAddr(t), "vocab_round:": "vocab: vocab.txt",
		"give_up:": "give_up: 3s", "retry_max:": "retry_max: 500ms",
	})
	t.Chdir(dir)
	_, stderr, err := runCmd(t, "party", "--config", "p1.yaml")
	if err == nil || !strings.Contains(err.Error(), "gave up") || !strings.Contains(err.Error(), "did not answer for 3s (give_up)") {
		t.Errorf("party: %v; want it to give up after 3s, naming give_up", err)
	}
	if n := strings.Count(stderr, "retrying in "); n < 2 {
		t.Errorf("party's output:\n%s\nwant a line per retry (%d seen)", stderr, n)
	}
	if !strings.Contains(stderr, fmt.Sprintf("giving up in ")) {
		t.Errorf("party's output:\n%s\nwant how long it keeps trying", stderr)
	}
}
