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

// pctdPrivacyTotals runs `fedtopic privacy pctd` and returns its total ε
// per word occurrence and per document.
func pctdPrivacyTotals(t *testing.T, args ...string) (word, doc float64) {
	t.Helper()
	stdout, stderr, err := runCmd(t, append([]string{"privacy", "pctd", "--json"}, args...)...)
	if err != nil {
		t.Fatalf("privacy pctd %q: %v; stderr:\n%s", args, err, stderr)
	}
	var rep privacyReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Costs {
		if c.Scope != "total" {
			continue
		}
		switch c.Unit {
		case "word occurrence":
			word = c.Epsilon
		case "document":
			doc = c.Epsilon
		}
	}
	return word, doc
}

// TestSimulatePCTD runs fedtopic simulate --algorithm pctd with a shared
// vocabulary (so PC-TD's releases are the whole cost): the SSP variant at
// a target ε per document spends exactly that ε, and the paper's variant
// spends per document and per word occurrence what `fedtopic privacy
// pctd` states for the same σ, iterations and clipped length. Both find
// the three word groups of the test corpus (150 documents: the noise must
// be small to leave them visible).
func TestSimulatePCTD(t *testing.T) {
	tmp := t.TempDir()
	vocabFile := filepath.Join(tmp, "vocab.txt")
	var words []string
	for _, g := range wordGroups {
		words = append(words, g...)
	}
	if err := os.WriteFile(vocabFile, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, unitDoc := pctdPrivacyTotals(t, "--sigma", "0.1", "--iterations", "8", "--max-doc-length", "10", "--delta", "1e-5")
	unitWord, _ := pctdPrivacyTotals(t, "--sigma", "0.1", "--iterations", "8", "--delta", "1e-5")
	_, sspDoc := pctdPrivacyTotals(t, "--variant", "ssp", "--sigma", "0.5", "--iterations", "8", "--max-doc-length", "10", "--delta", "1e-5")
	_, secureDoc := pctdPrivacyTotals(t, "--variant", "ssp", "--sigma", "0.5", "--iterations", "8", "--max-doc-length", "10", "--delta", "1e-5", "--threshold", "3")
	_, schedDoc := pctdPrivacyTotals(t, "--variant", "ssp", "--sigma", "0.5", "--iterations", "8", "--max-doc-length", "10", "--delta", "1e-5", "--schedule-growth", "1.2")
	_, schedSecureDoc := pctdPrivacyTotals(t, "--variant", "ssp", "--sigma", "0.5", "--iterations", "8", "--max-doc-length", "10", "--delta", "1e-5", "--threshold", "3", "--schedule-growth", "1.2")
	tests := []struct {
		name     string
		args     []string
		wantEps  float64 // per document
		wantWord float64 // per word occurrence in the statement; 0: none
	}{
		{name: "SSP at ε = 30", wantEps: 30, args: []string{"--epsilon", "30", "--max-doc-length", "10"}},
		{name: "SSP at a noise multiplier", wantEps: sspDoc, args: []string{"--sigma", "0.5", "--max-doc-length", "10"}},
		{name: "SSP under secure aggregation", wantEps: secureDoc, args: []string{"--sigma", "0.5", "--max-doc-length", "10", "--secure-aggregation", "--threshold", "3"}},
		{name: "SSP with a noise schedule and averaging", wantEps: 30, args: []string{"--epsilon", "30", "--max-doc-length", "10",
			"--params", `{"schedule_growth":1.2,"average_last":3}`}},
		{name: "SSP with a noise schedule under secure aggregation", wantEps: 30, args: []string{"--epsilon", "30", "--max-doc-length", "10",
			"--secure-aggregation", "--threshold", "3", "--params", `{"schedule_growth":1.2,"average_last":3}`}},
		{name: "SSP with a noise schedule at a noise multiplier", wantEps: schedDoc, args: []string{"--sigma", "0.5", "--max-doc-length", "10",
			"--params", `{"schedule_growth":1.2}`}},
		{name: "SSP with a noise schedule at a noise multiplier under secure aggregation", wantEps: schedSecureDoc, args: []string{"--sigma", "0.5", "--max-doc-length", "10",
			"--secure-aggregation", "--threshold", "3", "--params", `{"schedule_growth":1.2}`}},
		{name: "paper's mechanism", wantEps: unitDoc, wantWord: unitWord,
			args: []string{"--variant", "unit", "--sigma", "0.1", "--max-doc-length", "10", "--budget-epsilon", "1e9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"simulate", "--algorithm", "pctd", "--rounds", "8", "--topics", "3", "--seed", "3",
				"--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--vocab", vocabFile, "--out", out}, tt.args...)
			_, stderr, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
			}
			m, err := topic.Load(filepath.Join(out, "model"))
			if err != nil {
				t.Fatal(err)
			}
			if m.Prov.Method != "pctd" || m.Prov.Rounds != 8 {
				t.Errorf("model provenance %+v; want pctd, 8 rounds", m.Prov)
			}
			checkTopicsSeparate(t, m)
			_, sum := simulateRecord(t, out)
			for _, pe := range sum.Epsilon {
				if pe.Unit != "document" || math.Abs(pe.Epsilon-tt.wantEps) > 1e-6*tt.wantEps {
					t.Errorf("%s spent ε = %v per %s; want %v per document", pe.Party, pe.Epsilon, pe.Unit, tt.wantEps)
				}
			}
			costs := sum.Privacy.Costs
			if len(costs) != 1 {
				t.Fatalf("statement costs %+v; want PC-TD's only", costs)
			}
			if c := costs[0]; math.Abs(c.MethodEpsilon-tt.wantWord) > 1e-6*tt.wantWord || (tt.wantWord > 0) != (c.MethodUnit == "word occurrence") {
				t.Errorf("statement cost %+v; want ε = %v per word occurrence recorded beside the document level", c, tt.wantWord)
			}
		})
	}
}

func TestSimulatePCTDUsageErrors(t *testing.T) {
	base := []string{"simulate", "--corpus", "testdata/three.txt", "--out", filepath.Join(t.TempDir(), "x"), "--tokenizer", "whitespace", "--topics", "3"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "pctd flag for ftm", args: []string{"--algorithm", "ftm", "--relation-tau", "0.2"}, want: "--relation-tau applies to --algorithm pctd only"},
		{name: "sigma and epsilon", args: []string{"--algorithm", "pctd", "--sigma", "1", "--epsilon", "2"}, want: "give one"},
		{name: "bad variant", args: []string{"--algorithm", "pctd", "--variant", "plsa"}, want: "variant"},
		{name: "no length bound", args: []string{"--algorithm", "pctd", "--max-doc-length", "0"}, want: "--max-doc-length 0"},
		{name: "topics per party", args: []string{"--algorithm", "pctd", "--topics", "3,4,5"}, want: "--topics 3,4,5"},
		{name: "budget too small", args: []string{"--algorithm", "pctd", "--budget-epsilon", "5"}, want: "raise --budget-epsilon to at least 14"},
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

// TestPrivacyPCTDSchedule checks fedtopic privacy pctd --schedule-growth:
// the schedule keeps the run's cost (Σ_t 1/z_t² = T/z²) at a noise
// multiplier and at a target ε, and reports a first round cheaper than
// the last.
func TestPrivacyPCTDSchedule(t *testing.T) {
	base := []string{"privacy", "pctd", "--json", "--variant", "ssp", "--iterations", "8", "--max-doc-length", "10", "--delta", "1e-5"}
	report := func(args ...string) privacyReport {
		t.Helper()
		stdout, stderr, err := runCmd(t, append(append([]string(nil), base...), args...)...)
		if err != nil {
			t.Fatalf("privacy pctd %q: %v; stderr:\n%s", args, err, stderr)
		}
		var rep privacyReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	cost := func(rep privacyReport, scope string) float64 {
		t.Helper()
		for _, c := range rep.Costs {
			if c.Scope == scope {
				return c.Epsilon
			}
		}
		t.Fatalf("costs %+v; want a %q line", rep.Costs, scope)
		return 0
	}
	for _, knob := range [][]string{{"--sigma", "0.5"}, {"--target-epsilon", "10"}, {"--sigma", "0.5", "--threshold", "3"}} {
		equal := report(knob...)
		sched := report(append(knob, "--schedule-growth", "1.5")...)
		if got, want := cost(sched, "total"), cost(equal, "total"); math.Abs(got-want) > 1e-9*want {
			t.Errorf("%q: total ε with a schedule %v; want the equal split's %v", knob, got, want)
		}
		if first, last := cost(sched, "first round"), cost(sched, "last round"); !(first < last) {
			t.Errorf("%q: first round ε %v, last %v; want the first cheaper", knob, first, last)
		}
	}
	_, stderr, err := runCmd(t, "privacy", "pctd", "--sigma", "1", "--iterations", "4", "--schedule-growth", "1.5")
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(stderr, "--variant ssp only") {
		t.Errorf("schedule for the unit variant: %v, stderr %q; want a usage error", err, stderr)
	}
}
