package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/topic"
)

// TestSimulateFedLDA runs fedtopic simulate --algorithm fedlda with a
// shared vocabulary: every party's ledger is charged T·l·ε per document
// (one user holds one document), the same total `fedtopic privacy fedlda`
// reports, and the statement gives the cost per tuple, per iteration and
// over the run.
func TestSimulateFedLDA(t *testing.T) {
	vocabFile := filepath.Join(t.TempDir(), "vocab.txt")
	words := append(append(append([]string(nil), wordGroups[0]...), wordGroups[1]...), wordGroups[2]...)
	if err := os.WriteFile(vocabFile, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		privacy []string // the same configuration for fedtopic privacy fedlda; nil: no cost
		wantEps float64
		wantDel float64
	}{
		{name: "krr, gibbs", args: []string{"--mechanism", "krr", "--epsilon", "2", "--max-doc-length", "10"},
			privacy: []string{"--mechanism", "krr", "--epsilon", "2", "--max-doc-length", "10", "--vocab", "24"}, wantEps: 3 * 7 * 2},
		{name: "tkrr, mh, r = 0.5", args: []string{"--mechanism", "tkrr", "--epsilon", "1.5", "--max-doc-length", "8", "--sample-ratio", "0.5", "--sampler", "mh"},
			privacy: []string{"--mechanism", "tkrr", "--epsilon", "1.5", "--max-doc-length", "8", "--sample-ratio", "0.5", "--vocab", "24"}, wantEps: 3 * 4 * 1.5},
		{name: "rrp with a small truncation", args: []string{"--mechanism", "rrp", "--epsilon", "4", "--max-doc-length", "10", "--truncation", "1e-7", "--budget-delta", "1e-5"},
			privacy: []string{"--mechanism", "rrp", "--epsilon", "4", "--max-doc-length", "10", "--truncation", "1e-7"}, wantEps: 3 * 7 * 4, wantDel: 3 * 7 * 2e-7},
		{name: "no perturbation", args: []string{"--mechanism", "none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"simulate", "--algorithm", "fedlda", "--rounds", "3", "--topics", "3", "--seed", "3",
				"--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--vocab", vocabFile, "--out", out}, tt.args...)
			_, stderr, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
			}
			m, err := topic.Load(filepath.Join(out, "model"))
			if err != nil {
				t.Fatalf("global model: %v", err)
			}
			if m.Prov.Method != "fedlda" || m.Prov.Rounds != 3 || m.K != 3 {
				t.Errorf("global model: %d topics, provenance %+v; want fedlda, 3 topics, 3 rounds", m.K, m.Prov)
			}
			_, sum := simulateRecord(t, out)
			if tt.privacy == nil {
				for _, pe := range sum.Epsilon {
					if pe.Epsilon != 0 {
						t.Errorf("%s spent ε = %v with no perturbation; want 0", pe.Party, pe.Epsilon)
					}
				}
				return
			}
			rep := reportOf(t, append([]string{"fedlda", "--iterations", "3"}, tt.privacy...)...)
			total := rep.Costs[len(rep.Costs)-1]
			if total.Scope != "total" || math.Abs(total.Epsilon-tt.wantEps) > 1e-9 {
				t.Fatalf("privacy fedlda total %+v; want ε = %v", total, tt.wantEps)
			}
			if len(sum.Epsilon) != 3 {
				t.Fatalf("summary ε of %d parties; want 3", len(sum.Epsilon))
			}
			for _, pe := range sum.Epsilon {
				if pe.Unit != "document" || math.Abs(pe.Epsilon-total.Epsilon) > 1e-9 || math.Abs(pe.Delta-total.Delta) > 1e-15 {
					t.Errorf("%s spent ε = %v, δ = %v per %s; privacy fedlda says ε = %v, δ = %v per user (= document)", pe.Party, pe.Epsilon, pe.Delta, pe.Unit, total.Epsilon, total.Delta)
				}
				if math.Abs(pe.Delta-tt.wantDel) > 1e-15 {
					t.Errorf("%s spent δ = %v; want %v", pe.Party, pe.Delta, tt.wantDel)
				}
			}
			notes := strings.Join(sum.Privacy.Notes, "\n")
			if !strings.Contains(notes, "per tuple") || !strings.Contains(notes, "per iteration") || !strings.Contains(notes, "over the run") {
				t.Errorf("statement notes do not give the cost per tuple, per iteration and over the run:\n%s", notes)
			}
			if tt.wantDel > 0 && !strings.Contains(notes, "Zipf") {
				t.Errorf("RRP statement does not say the guarantee is conditional:\n%s", notes)
			}
		})
	}
}

// TestSimulateFedLDARefuses checks the settings simulate refuses before
// any work: RRP whose total δ reaches 1 (no guarantee by basic
// composition), and a padding length below 1.
func TestSimulateFedLDARefuses(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "rrp at the default truncation", args: []string{"--mechanism", "rrp"}, want: "no guarantee"},
		{name: "zero padding length", args: []string{"--max-doc-length", "0"}, want: "--max-doc-length"},
		{name: "bad sampler", args: []string{"--sampler", "metropolis"}, want: "sampler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"simulate", "--algorithm", "fedlda", "--topics", "3", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace",
				"--out", filepath.Join(t.TempDir(), "run")}, tt.args...)
			_, stderr, err := runCmd(t, args...)
			if err == nil || !strings.Contains(err.Error()+stderr, tt.want) {
				t.Errorf("run(%q) = %v; want an error about %q (stderr %s)", args, err, tt.want, stderr)
			}
		})
	}
}
