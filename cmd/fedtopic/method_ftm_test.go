package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/topic"
)

// TestSimulateFTM runs fedtopic simulate --algorithm ftm: per-party topic
// counts, ε and τ, with the private vocabulary round and for SentenceLDA
// with a shared vocabulary file. Either way the parties' ledgers count per
// document, over --max-doc-length (default 30), and the statement keeps
// the cost per word occurrence beside it.
func TestSimulateFTM(t *testing.T) {
	tmp := t.TempDir()
	vocabFile := filepath.Join(tmp, "vocab.txt")
	words := append(append(append([]string(nil), wordGroups[0]...), wordGroups[1]...), wordGroups[2]...)
	if err := os.WriteFile(vocabFile, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantKs   []int
		wantUnit string
		wantEps  float64
	}{
		{name: "LDA, private vocabulary", wantKs: []int{2, 3, 4}, wantUnit: "document", wantEps: 8 + 10*11,
			args: []string{"--topics", "2,3,4", "--epsilon", "11", "--tau", "0.2", "--max-doc-length", "10",
				"--split", "sizes=1,2,3", "--vocab-epsilon", "8", "--vocab-l0", "4", "--budget-epsilon", "200"}},
		{name: "SentenceLDA, shared vocabulary", wantKs: []int{3, 3, 3}, wantUnit: "document", wantEps: 9 * 30,
			args: []string{"--topics", "3", "--epsilon", "9", "--model", "slda", "--units", "window:3", "--vocab", vocabFile, "--budget-epsilon", "270"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"simulate", "--algorithm", "ftm", "--rounds", "2", "--local-iterations", "5", "--seed", "3",
				"--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--out", out}, tt.args...)
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
			if m.Prov.Method != "ftm" || m.Prov.Rounds != 2 {
				t.Errorf("global model provenance %+v; want ftm, 2 rounds", m.Prov)
			}
			for i, k := range tt.wantKs {
				l, err := topic.Load(filepath.Join(out, "parties", "p"+string(rune('1'+i))+".model"))
				if err != nil {
					t.Fatalf("local model of p%d: %v", i+1, err)
				}
				if l.K != k {
					t.Errorf("p%d local model has %d topics; want %d", i+1, l.K, k)
				}
			}
			_, sum := simulateRecord(t, out)
			if sum.Privacy == nil || len(sum.Epsilon) != len(tt.wantKs) {
				t.Fatalf("summary privacy %+v, ε of %d parties; want a statement and %d parties", sum.Privacy, len(sum.Epsilon), len(tt.wantKs))
			}
			for _, pe := range sum.Epsilon {
				if pe.Unit != tt.wantUnit || pe.Epsilon != tt.wantEps {
					t.Errorf("%s spent ε = %v per %s; want %v per %s", pe.Party, pe.Epsilon, pe.Unit, tt.wantEps, tt.wantUnit)
				}
			}
			// The method's own unit is recorded beside the document level.
			costs := sum.Privacy.Costs
			if len(costs) == 0 || costs[len(costs)-1].MethodUnit != "word occurrence" || costs[len(costs)-1].Unit != "document" {
				t.Errorf("statement costs %+v; want FTM's cost per word occurrence and per document", costs)
			}
		})
	}
}

func TestSimulateFTMUsageErrors(t *testing.T) {
	base := []string{"simulate", "--corpus", "testdata/three.txt", "--out", "x", "--tokenizer", "whitespace"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "ftm flag for adlda", args: []string{"--algorithm", "adlda", "--topics", "3", "--tau", "0.1"}, want: "--tau applies to --algorithm ftm only"},
		{name: "topic list for adlda", args: []string{"--algorithm", "adlda", "--topics", "3,4,5"}, want: "adlda takes one number of topics"},
		{name: "bad topic list", args: []string{"--algorithm", "ftm", "--topics", "3,x"}, want: "--topics 3,x"},
		{name: "no length bound", args: []string{"--algorithm", "ftm", "--topics", "3", "--max-doc-length", "0"}, want: "--max-doc-length 0"},
		{name: "negative epsilon", args: []string{"--algorithm", "pctd", "--topics", "3", "--epsilon", "-1"}, want: "--epsilon -1: want a finite number > 0"},
		{name: "bad tau", args: []string{"--algorithm", "ftm", "--topics", "3", "--tau", "high"}, want: `--tau "high"`},
		{name: "bad model", args: []string{"--algorithm", "ftm", "--topics", "3", "--model", "plsa", "--max-doc-length", "9"}, want: "model"},
		{name: "topics for the wrong number of parties", args: []string{"--algorithm", "ftm", "--topics", "3,4", "--max-doc-length", "9", "--split", "sizes=1,2,3"}, want: "--topics 3,4: 2 values for 3 parties"},
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

// TestFTMNoiseNote checks the pre-flight note on FTM's noise entries per
// token: none at the papers' ε or with a τ that keeps few, and one with the
// expected entries and a --tau that keeps the default cap where τ leaves
// more.
func TestFTMNoiseNote(t *testing.T) {
	tau := func(x float64) *float64 { return &x }
	tests := []struct {
		name string
		cfg  ftm.Config
		v    int
		want []string // substrings of the note; nil: no note
	}{
		{name: "papers' ε, auto τ", cfg: ftm.Config{Epsilon: 11}, v: 12000},
		{name: "default ε", cfg: ftm.Config{}, v: 12000},
		{name: "papers' ε and τ 0.2: 660 entries", cfg: ftm.Config{Epsilon: 11, Tau: tau(0.2)}, v: 12000},
		{name: "no noise", cfg: ftm.Config{Epsilon: 0.05, NoNoise: true}, v: 12000},
		{name: "ε 0.05, auto τ", cfg: ftm.Config{Epsilon: 0.05}, v: 12000,
			want: []string{"ε = 0.05 per word occurrence", "τ = 0.2 (auto)", "about 5850 noise entries of the 12000 words", "--tau 36.9 keeps about 967", "costs no privacy"}},
		{name: "ε 0.05, τ given", cfg: ftm.Config{Epsilon: 0.05, Tau: tau(1)}, v: 12000,
			want: []string{"τ = 1 (given)", "about 5564 noise entries", "--tau 36.9"}},
		{name: "ε 0.05, τ given too low for a larger vocabulary", cfg: ftm.Config{Epsilon: 0.05, Tau: tau(30)}, v: 100000,
			want: []string{"τ = 30 (given)", "about 10878 noise entries of the 100000 words", "--tau 78.3"}},
		{name: "ε 0.05, τ given that keeps the cap", cfg: ftm.Config{Epsilon: 0.05, Tau: tau(37)}, v: 12000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ftmNoiseNote(tt.cfg, tt.v)
			if err != nil {
				t.Fatalf("ftmNoiseNote = %v", err)
			}
			if tt.want == nil {
				if got != "" {
					t.Errorf("note = %q; want none", got)
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("note = %q; want it to contain %q", got, w)
				}
			}
		})
	}
}

// TestSimulateFTMNoiseNote checks that simulate prints FTM's note before
// the run when τ leaves a token more noise entries than the cap (a
// 3,000-word shared vocabulary at ε = 0.05 per word: about 1,460), and
// none at the papers' ε.
func TestSimulateFTMNoiseNote(t *testing.T) {
	tmp := t.TempDir()
	words := append(append(append([]string(nil), wordGroups[0]...), wordGroups[1]...), wordGroups[2]...)
	for i := len(words); i < 3000; i++ {
		words = append(words, fmt.Sprintf("filler%d", i))
	}
	vocabFile := writeFile(t, tmp, "vocab.txt", strings.Join(words, "\n")+"\n")
	for _, tt := range []struct {
		eps  string
		note bool
	}{{"0.05", true}, {"11", false}} {
		t.Run("ε="+tt.eps, func(t *testing.T) {
			args := []string{"simulate", "--algorithm", "ftm", "--rounds", "1", "--local-iterations", "1", "--seed", "3", "--topics", "2",
				"--epsilon", tt.eps, "--max-doc-length", "10", "--budget-epsilon", "200", "--vocab", vocabFile,
				"--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--out", filepath.Join(t.TempDir(), "run")}
			_, stderr, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
			}
			got := strings.Contains(stderr, "noise entries of the 3000 words") && strings.Contains(stderr, "--tau ")
			if got != tt.note {
				t.Errorf("noise note printed = %v, want %v; stderr:\n%s", got, tt.note, stderr)
			}
		})
	}
}
