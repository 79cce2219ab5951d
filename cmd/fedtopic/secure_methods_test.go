package main

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/topic"
)

// TestSecureMethodsDeclareSums: the methods simulate lets run under
// secure aggregation are exactly those whose halves declare their update a
// vector of sums.
func TestSecureMethodsDeclareSums(t *testing.T) {
	vocab := make([]string, 20)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%d", w)
	}
	for _, m := range methods() {
		s := fed.Setup{Run: "r", Parties: []string{"p1", "p2", "p3"}, Vocab: vocab, Seed: 1, Params: []byte(`{}`)}
		if m.alg.Name == "pctd" {
			s.Params = []byte(`{"max_doc_tokens": 30}`)
		}
		agg, err := m.alg.NewAggregator(s)
		if err != nil {
			t.Fatalf("%s: aggregator at its defaults: %v", m.alg.Name, err)
		}
		_, sums := agg.(fed.SumAggregator)
		if listed := slices.Contains(secureMethodNames(), m.alg.Name); listed != sums {
			t.Errorf("%s: listed for secure aggregation %v, aggregator declares a sum %v", m.alg.Name, listed, sums)
		}
	}
}

// TestSimulateRefusesSecureAggregation: --secure-aggregation with a method
// that cannot run under it, with PC-TD's unit variant, or with FedNMF
// sampling one party a round without noise (the coordinator would learn
// its update), is refused before anything is read, with words that say
// why.
func TestSimulateRefusesSecureAggregation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--algorithm", "ftm"}, "--secure-aggregation: ftm does not declare its update a vector of sums"},
		{[]string{"--algorithm", "fednmf", "--client-fraction", "0.2"}, "--secure-aggregation: --client-fraction 0.2 samples one of the 3 parties"},
		{[]string{"--algorithm", "pctd", "--variant", "unit"}, "the unit variant cannot run under secure aggregation"},
	} {
		args := append([]string{"simulate", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--parties", "3", "--topics", "3",
			"--secure-aggregation", "--out", filepath.Join(t.TempDir(), "run")}, tc.args...)
		_, _, err := runCmd(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v; want an error containing %q", tc.args, err, tc.want)
		}
	}
}

// TestSimulateFedNMFSecure runs fedtopic simulate --algorithm fednmf
// --secure-aggregation --threshold 2 end to end over three parties. Without
// noise the model is the plain run's bit for bit (FedAdam, the MI critic,
// two parties sampled a round). With DP-FedAvg the noise is distributed:
// every party's recorded ε per document is what `fedtopic privacy fednmf
// --threshold 2` reports for the same flags and the accountant's for the
// configuration's events — a discrete Gaussian of noise multiplier z per
// round, charged for 2 survivors without amplification by sampling — the
// run summary states the distributed noise, and the privacy statement says
// who sees what.
func TestSimulateFedNMFSecure(t *testing.T) {
	vocabFile := fednmfVocab(t)
	base := []string{"simulate", "--algorithm", "fednmf", "--topics", "3", "--parties", "3", "--seed", "3", "--corpus", "testdata/three.txt",
		"--tokenizer", "whitespace", "--vocab", vocabFile}
	model := func(args ...string) *topic.Model {
		t.Helper()
		out := filepath.Join(t.TempDir(), "run")
		all := append(append(slices.Clone(base), "--out", out), args...)
		if _, stderr, err := runCmd(t, all...); err != nil {
			t.Fatalf("run(%q) = %v; stderr:\n%s", all, err, stderr)
		}
		m, err := topic.Load(filepath.Join(out, "model"))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	plainArgs := []string{"--rounds", "20", "--client-fraction", "0.67", "--local-epochs", "2", "--lr", "0.3", "--server-opt", "fedadam", "--mi-lambda", "0.1", "--batch", "8"}
	plain := model(plainArgs...)
	secure := model(append(slices.Clone(plainArgs), "--secure-aggregation", "--threshold", "2")...)
	if !slices.Equal(secure.Phi, plain.Phi) {
		t.Errorf("the secure run's topics differ from the plain run's")
	}
	if got := groupsFound(secure); got < 3 {
		t.Errorf("secure run: %d of the 3 word groups lead a topic; want 3", got)
	}

	out := filepath.Join(t.TempDir(), "dp")
	args := append(slices.Clone(base), "--out", out, "--rounds", "5", "--client-fraction", "0.5", "--clip", "0.5", "--noise-multiplier", "1.3",
		"--budget-delta", "1e-5", "--secure-aggregation", "--threshold", "2")
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	cfg := fednmf.Config{K: 3, Rounds: 5, ClientFraction: 0.5, Clip: 0.5, NoiseMultiplier: 1.3, SecureThreshold: 2}
	want, err := accountant.Compose(cfg.Events(), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	rep := reportOf(t, "fednmf", "--rounds", "5", "--sampling-fraction", "0.5", "--clip", "0.5", "--noise-multiplier", "1.3", "--delta", "1e-5", "--threshold", "2")
	stated := costFor(t, rep, "total", "document", false)
	if math.Abs(stated.Epsilon-want.Epsilon) > 1e-9*want.Epsilon {
		t.Errorf("privacy fednmf --threshold 2: ε = %v per document; want the accountant's %v", stated.Epsilon, want.Epsilon)
	}
	_, sum := simulateRecord(t, out)
	if len(sum.Epsilon) != 3 {
		t.Fatalf("summary has ε of %d parties; want 3", len(sum.Epsilon))
	}
	for _, pe := range sum.Epsilon {
		if pe.Unit != "document" || math.Abs(pe.Epsilon-stated.Epsilon) > 1e-9*stated.Epsilon {
			t.Errorf("%s spent ε = %v per %s; want %v per document, as privacy fednmf --threshold 2 reports", pe.Party, pe.Epsilon, pe.Unit, stated.Epsilon)
		}
	}
	if sa := sum.SecureAggregation; sa == nil || sa.Threshold != 2 || sa.Sigma != cfg.Events()[0].Sigma {
		t.Errorf("summary's secure aggregation %+v; want threshold 2 and σ = %v on the grid", sa, cfg.Events()[0].Sigma)
	}
	if sum.Privacy == nil || !strings.Contains(strings.Join(sum.Privacy.Notes, " "), "exactly 2 survivors") {
		t.Errorf("statement %+v; want it to say each party is charged for exactly 2 survivors", sum.Privacy)
	}
}

// TestSimulateHelpListsSecureMethods: simulate's --secure-aggregation help
// names every method that can run under it.
func TestSimulateHelpListsSecureMethods(t *testing.T) {
	stdout, _, err := runCmd(t, "simulate", "--help")
	if err != nil {
		t.Fatalf("simulate --help = %v", err)
	}
	var line string
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--secure-aggregation ") {
			line = l
		}
	}
	if line == "" {
		t.Fatalf("simulate --help has no --secure-aggregation line:\n%s", stdout)
	}
	for _, m := range secureMethodNames() {
		if !strings.Contains(line, m) {
			t.Errorf("--secure-aggregation help %q does not name %s", line, m)
		}
	}
}
