package main

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/topic"
)

// fednmfVocab writes the test corpus's 24 words as a shared vocabulary,
// so that a run makes no vocabulary round.
func fednmfVocab(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vocab.txt")
	var words []string
	for _, g := range wordGroups {
		words = append(words, g...)
	}
	if err := os.WriteFile(path, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSimulateFedNMF runs fedtopic simulate --algorithm fednmf with and
// without the MI term and with every server optimizer, and checks that the
// global model separates the corpus's three word groups.
func TestSimulateFedNMF(t *testing.T) {
	vocabFile := fednmfVocab(t)
	tests := []struct {
		name string
		args []string
	}{
		{name: "fedavg", args: []string{"--server-opt", "fedavg"}},
		{name: "fedadam with MI", args: []string{"--server-opt", "fedadam", "--mi-lambda", "0.1", "--batch", "8", "--lr", "0.1"}},
		{name: "fedyogi, counts", args: []string{"--server-opt", "fedyogi", "--features", "counts", "--lr", "0.05"}},
		{name: "fedadagrad", args: []string{"--server-opt", "fedadagrad"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"simulate", "--algorithm", "fednmf", "--topics", "3", "--rounds", "60", "--parties", "3",
				"--client-fraction", "0.67", "--local-epochs", "3", "--lr", "0.5", "--seed", "3", "--corpus", "testdata/three.txt",
				"--tokenizer", "whitespace", "--vocab", vocabFile, "--out", out}, tt.args...)
			stdout, stderr, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
			}
			if !strings.Contains(stdout, "wrote "+out) {
				t.Errorf("stdout %q; want it to say what was written", stdout)
			}
			m, err := topic.Load(filepath.Join(out, "model"))
			if err != nil {
				t.Fatalf("global model: %v", err)
			}
			if m.Prov.Method != "fednmf" || m.K != 3 {
				t.Errorf("global model: method %q, K = %d; want fednmf, 3", m.Prov.Method, m.K)
			}
			if got := groupsFound(m); got < 3 {
				for k := range m.K {
					t.Logf("topic %d: %v", k, m.TopWords(k, 4))
				}
				t.Errorf("%d of the 3 word groups lead a topic; want 3", got)
			}
		})
	}
}

// groupsFound counts the word groups that hold the top 3 words of some
// topic of m.
func groupsFound(m *topic.Model) int {
	group := map[string]int{}
	for g, ws := range wordGroups {
		for _, w := range ws {
			group[w] = g
		}
	}
	found := map[int]bool{}
	for k := range m.K {
		top := m.TopWords(k, 3)
		g := group[top[0].Word]
		if group[top[1].Word] == g && group[top[2].Word] == g {
			found[g] = true
		}
	}
	return len(found)
}

// TestSimulateFedNMFPrivacyAgrees runs DP-FedAvg and checks that every
// party's recorded ε per document is what `fedtopic privacy fednmf`
// reports per client for the same noise multiplier, rounds, sampling
// fraction and δ — the unit of DP-FedAvg is a client, which implies the
// same ε per document.
func TestSimulateFedNMFPrivacyAgrees(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"simulate", "--algorithm", "fednmf", "--topics", "3", "--rounds", "5", "--parties", "3",
		"--client-fraction", "0.5", "--clip", "0.5", "--noise-multiplier", "1.3", "--seed", "3", "--corpus", "testdata/three.txt",
		"--tokenizer", "whitespace", "--vocab", fednmfVocab(t), "--budget-delta", "1e-5", "--out", out}
	stdout, stderr, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	pout, perr, err := runCmd(t, "privacy", "fednmf", "--noise-multiplier", "1.3", "--clip", "0.5", "--rounds", "5",
		"--sampling-fraction", "0.5", "--delta", "1e-5", "--json")
	if err != nil {
		t.Fatalf("privacy fednmf: %v; stderr:\n%s", err, perr)
	}
	var rep privacyReport
	if err := json.Unmarshal([]byte(pout), &rep); err != nil {
		t.Fatal(err)
	}
	want := math.NaN()
	for _, c := range rep.Costs {
		if c.Scope == "total" && c.Sampling != "" {
			want = c.Epsilon
		}
	}
	_, sum := simulateRecord(t, out)
	if len(sum.Epsilon) != 3 {
		t.Fatalf("summary has ε of %d parties; want 3 (stdout %q)", len(sum.Epsilon), stdout)
	}
	for _, pe := range sum.Epsilon {
		if pe.Unit != "document" || math.Abs(pe.Epsilon-want) > 1e-9*want {
			t.Errorf("%s spent ε = %v per %s; privacy fednmf says %v per client", pe.Party, pe.Epsilon, pe.Unit, want)
		}
	}
	if sum.Privacy == nil || !strings.Contains(strings.Join(sum.Privacy.Notes, " "), "addition") {
		t.Errorf("statement %+v; want it to label DP-FedAvg as an addition", sum.Privacy)
	}
}

// TestSimulateFedNMFNotPrivate checks that a run without DP says it is
// not private.
func TestSimulateFedNMFNotPrivate(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"simulate", "--algorithm", "fednmf", "--topics", "3", "--rounds", "2", "--seed", "1", "--corpus", "testdata/three.txt",
		"--tokenizer", "whitespace", "--vocab", fednmfVocab(t), "--out", out}
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	_, sum := simulateRecord(t, out)
	if sum.Privacy == nil || !strings.Contains(strings.Join(sum.Privacy.Notes, " "), "no privacy guarantee") {
		t.Errorf("statement %+v; want it to say FedNMF without DP has no privacy guarantee", sum.Privacy)
	}
}

func TestSimulateFedNMFUsageErrors(t *testing.T) {
	base := []string{"simulate", "--corpus", "testdata/three.txt", "--out", "x", "--tokenizer", "whitespace"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "fednmf flag for ftm", args: []string{"--algorithm", "ftm", "--topics", "3", "--mi-lambda", "0.1"}, want: "--mi-lambda applies to --algorithm fednmf only"},
		{name: "topic list", args: []string{"--algorithm", "fednmf", "--topics", "3,4,5"}, want: "one number of topics"},
		{name: "unknown optimizer", args: []string{"--algorithm", "fednmf", "--topics", "3", "--server-opt", "sgd"}, want: "server_opt"},
		{name: "clip without noise", args: []string{"--algorithm", "fednmf", "--topics", "3", "--clip", "1"}, want: "needs both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, append(base, tt.args...)...)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(stderr, tt.want) {
				t.Errorf("simulate %q: %v, stderr %q; want a usage error mentioning %q", tt.args, err, stderr, tt.want)
			}
		})
	}
}
