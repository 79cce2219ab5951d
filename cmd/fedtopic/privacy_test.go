package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// runPrivacy runs `fedtopic privacy args…` through run.
func runPrivacy(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	err = run(context.Background(), append([]string{"privacy"}, args...), &out, &errb)
	return out.String(), errb.String(), err
}

// reportOf runs the command with --json and decodes the report.
func reportOf(t *testing.T, args ...string) privacyReport {
	t.Helper()
	out, stderr, err := runPrivacy(t, append(args, "--json")...)
	if err != nil {
		t.Fatalf("privacy %q = %v; stderr:\n%s", args, err, stderr)
	}
	var rep privacyReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("privacy %q --json: %v\n%s", args, err, out)
	}
	return rep
}

// costFor returns the report line with scope and unit (and no sampling).
func costFor(t *testing.T, rep privacyReport, scope, unit string, sampled bool) privacyCost {
	t.Helper()
	for _, c := range rep.Costs {
		if c.Scope == scope && c.Unit == unit && (c.Sampling != "") == sampled {
			return c
		}
	}
	t.Fatalf("report has no %s cost per %s (sampled %v): %+v", scope, unit, sampled, rep.Costs)
	return privacyCost{}
}

// lineWith returns the first line of out containing every one of subs.
func lineWith(out string, subs ...string) string {
	for _, l := range strings.Split(out, "\n") {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			return l
		}
	}
	return ""
}

func TestPrivacyPCTDAsWritten(t *testing.T) {
	// Issue 3: prints ε = 2.594 (exact GDP; accept ±0.001).
	out, stderr, err := runPrivacy(t, "pctd", "--sigma", "5", "--iterations", "10", "--delta", "1e-5")
	if err != nil {
		t.Fatalf("privacy pctd = %v; stderr:\n%s", err, stderr)
	}
	if l := lineWith(out, "total", "per word occurrence", "ε = 2.594", "δ = 1e-05", "μ-GDP"); l == "" {
		t.Errorf("privacy pctd output has no total line with ε = 2.594, δ = 1e-05 by μ-GDP:\n%s", out)
	}
	rep := reportOf(t, "pctd", "--sigma", "5", "--iterations", "10", "--delta", "1e-5")
	tot := costFor(t, rep, "total", "word occurrence", false)
	if math.Abs(tot.Epsilon-2.594) > 0.001 || tot.Delta != 1e-5 || tot.Accountant != "gdp" || math.Abs(tot.Mu-math.Sqrt(10)/5) > 1e-12 {
		t.Errorf("privacy pctd --json total = %+v; want ε = 2.594 ± 0.001, δ = 1e-5, gdp, μ = √10/5", tot)
	}
	round := costFor(t, rep, "round", "word occurrence", false)
	if want, _ := accountant.GaussianEpsilon(1e-5, 0.2); math.Abs(round.Epsilon-want) > 1e-12 {
		t.Errorf("privacy pctd --json per round = %v; want %v", round.Epsilon, want)
	}
}

// TestPrivacyPCTDPerDocument checks the document-level lines of pctd: a
// document of L words has L2 sensitivity at most L per iteration
// (PC-TD: sensitivity 1 per word occurrence), so by group
// privacy a round is (L/σ)-GDP and T rounds are (L·√T/σ)-GDP, converted
// with the analytic Gaussian formula — in the text and in --json.
func TestPrivacyPCTDPerDocument(t *testing.T) {
	args := []string{"pctd", "--sigma", "5", "--iterations", "10", "--delta", "1e-5", "--max-doc-length", "200"}
	rep := reportOf(t, args...)
	for _, tc := range []struct {
		scope string
		mu    float64
	}{
		{"round", 200.0 / 5},
		{"total", 200 * math.Sqrt(10) / 5},
	} {
		c := costFor(t, rep, tc.scope, "document", false)
		want, err := accountant.GaussianEpsilon(1e-5, tc.mu)
		if err != nil {
			t.Fatalf("GaussianEpsilon(1e-5, %v) error: %v", tc.mu, err)
		}
		if math.Abs(c.Mu-tc.mu) > 1e-9*tc.mu || math.Abs(c.Epsilon-want) > 1e-9*want || c.Delta != 1e-5 || c.Accountant != "gdp" {
			t.Errorf("privacy %q --json %s per document = %+v; want μ = %v, ε = %v, δ = 1e-5, gdp", args, tc.scope, c, tc.mu, want)
		}
		if got := rep.Parameters["max_doc_length"]; got != float64(200) {
			t.Errorf("privacy %q --json parameters max_doc_length = %v; want 200", args, got)
		}
	}
	out, stderr, err := runPrivacy(t, args...)
	if err != nil {
		t.Fatalf("privacy %q = %v; stderr:\n%s", args, err, stderr)
	}
	if lineWith(out, "each round, per document:", "μ = 40)") == "" || lineWith(out, "total, per document:", "ε = 8538,", "δ = 1e-05", "μ = 126.5)") == "" {
		t.Errorf("privacy %q output lacks the per-document lines (μ = 40 per round; ε = 8538, μ = 126.5 in total):\n%s", args, out)
	}
	// Without --max-doc-length there is no document line.
	for _, c := range reportOf(t, "pctd", "--sigma", "5", "--iterations", "10", "--delta", "1e-5").Costs {
		if c.Unit == "document" {
			t.Errorf("privacy pctd without --max-doc-length has a document line: %+v", c)
		}
	}
}

func TestPrivacyFTMAsWritten(t *testing.T) {
	// Issue 3: prints 11 per word occurrence and 2200 per document.
	out, stderr, err := runPrivacy(t, "ftm", "--epsilon", "11", "--max-doc-length", "200")
	if err != nil {
		t.Fatalf("privacy ftm = %v; stderr:\n%s", err, stderr)
	}
	if lineWith(out, "per word occurrence", "ε = 11,") == "" || lineWith(out, "per document", "ε = 2200,") == "" {
		t.Errorf("privacy ftm output lacks ε = 11 per word occurrence and ε = 2200 per document:\n%s", out)
	}
	rep := reportOf(t, "ftm", "--epsilon", "11", "--max-doc-length", "200")
	if c := costFor(t, rep, "total", "word occurrence", false); c.Epsilon != 11 || c.Delta != 0 {
		t.Errorf("privacy ftm --json per word occurrence = %+v; want ε = 11, δ = 0", c)
	}
	if c := costFor(t, rep, "total", "document", false); c.Epsilon != 2200 || c.Delta != 0 {
		t.Errorf("privacy ftm --json per document = %+v; want ε = 2200, δ = 0", c)
	}
	if c := costFor(t, rep, "round", "word occurrence", false); c.Epsilon != 0 {
		t.Errorf("privacy ftm --json per round = %+v; want 0 (post-processing)", c)
	}
}

func TestPrivacyCalibration(t *testing.T) {
	// pctd: the σ for a target ε gives back that ε.
	rep := reportOf(t, "pctd", "--target-epsilon", "2.5943833805", "--iterations", "10", "--delta", "1e-5")
	if rep.Calibration == nil || math.Abs(rep.Calibration.Value-5) > 1e-6 {
		t.Errorf("pctd --target-epsilon 2.594…: calibration = %+v; want σ = 5", rep.Calibration)
	}
	if c := costFor(t, rep, "total", "word occurrence", false); math.Abs(c.Epsilon-2.5943833805) > 1e-6 {
		t.Errorf("pctd at the calibrated σ: ε = %v; want the target", c.Epsilon)
	}
	// Per document: σ scales with the document length.
	doc := reportOf(t, "pctd", "--target-epsilon", "3", "--iterations", "10", "--delta", "1e-5", "--max-doc-length", "20")
	if c := costFor(t, doc, "total", "document", false); math.Abs(c.Epsilon-3) > 1e-6 {
		t.Errorf("pctd per-document calibration: ε per document = %v; want 3", c.Epsilon)
	}
	// ftm: per document target → per word occurrence ε.
	ftm := reportOf(t, "ftm", "--target-epsilon", "100", "--max-doc-length", "200")
	if ftm.Calibration == nil || ftm.Calibration.Value != 0.5 {
		t.Errorf("ftm --target-epsilon 100 --max-doc-length 200: %+v; want ε = 0.5 per word occurrence", ftm.Calibration)
	}
	// fedlda: per user target → per tuple ε.
	lda := reportOf(t, "fedlda", "--target-epsilon", "10", "--max-doc-length", "100", "--iterations", "20", "--sample-ratio", "0.5")
	if lda.Calibration == nil || math.Abs(lda.Calibration.Value-0.01) > 1e-15 {
		t.Errorf("fedlda calibration = %+v; want ε per tuple = 10/(20·50)", lda.Calibration)
	}
	if c := costFor(t, lda, "total", "user", false); math.Abs(c.Epsilon-10) > 1e-9 {
		t.Errorf("fedlda at the calibrated ε: total %v; want 10", c.Epsilon)
	}
	// fednmf: both multipliers meet the target.
	nmf := reportOf(t, "fednmf", "--target-epsilon", "5", "--rounds", "50", "--sampling-fraction", "0.2")
	cal := nmf.Calibration
	if cal == nil || !(cal.WithSampling < cal.Value) {
		t.Fatalf("fednmf calibration = %+v; want a smaller multiplier with sampling credited", cal)
	}
	if c := costFor(t, nmf, "total", "client", true); c.Epsilon > 5 || c.Epsilon < 4.99 {
		t.Errorf("fednmf at the sampled multiplier: ε = %v; want just below 5", c.Epsilon)
	}
}

func TestPrivacyFedLDA(t *testing.T) {
	rep := reportOf(t, "fedlda", "--epsilon", "0.5", "--max-doc-length", "150", "--iterations", "50")
	if rep.Parameters["tuples_per_iteration"] != float64(105) {
		t.Errorf("l = %v; want ⌈0.7·150⌉ = 105", rep.Parameters["tuples_per_iteration"])
	}
	tuple := costFor(t, rep, "tuple", "user", false)
	round := costFor(t, rep, "round", "user", false)
	total := costFor(t, rep, "total", "user", false)
	if tuple.Epsilon != 0.5 || tuple.Delta != 0.1 || round.Epsilon != 52.5 || total.Epsilon != 2625 {
		t.Errorf("fedlda costs tuple %+v, round %+v, total %+v; want ε 0.5 (δ 0.1), 52.5, 2625", tuple, round, total)
	}
	if len(rep.Assumptions) != 1 || !strings.Contains(rep.Assumptions[0], "Zipf") {
		t.Errorf("fedlda RRP report assumptions = %q; want the Zipf assumption", rep.Assumptions)
	}
	out, _, err := runPrivacy(t, "fedlda", "--epsilon", "0.5", "--max-doc-length", "150", "--iterations", "50")
	if err != nil || !strings.Contains(out, "assumption: ") || !strings.Contains(out, "no guarantee") {
		t.Errorf("fedlda text output does not state the assumption and the δ ≥ 1 warning:\n%s", out)
	}
	krr := reportOf(t, "fedlda", "--mechanism", "krr", "--epsilon", "8", "--vocab", "3309", "--max-doc-length", "150", "--iterations", "2")
	if c := costFor(t, krr, "total", "user", false); c.Epsilon != 8*105*2 || c.Delta != 0 || len(krr.Assumptions) != 0 {
		t.Errorf("fedlda krr total = %+v, assumptions %q; want ε = 1680, δ = 0, none", c, krr.Assumptions)
	}
}

func TestPrivacyFedNMF(t *testing.T) {
	rep := reportOf(t, "fednmf", "--noise-multiplier", "1.1", "--rounds", "100", "--sampling-fraction", "0.2")
	plain := costFor(t, rep, "total", "client", false)
	want, _ := accountant.GaussianEpsilon(1e-5, 10/1.1)
	if math.Abs(plain.Epsilon-want) > 1e-12 || plain.Accountant != "gdp" {
		t.Errorf("fednmf without sampling = %+v; want exact GDP ε = %v", plain, want)
	}
	sampled := costFor(t, rep, "total", "client", true)
	if !(sampled.Epsilon < plain.Epsilon) || sampled.Accountant != "rdp" {
		t.Errorf("fednmf with sampling = %+v; want an RDP bound below %v", sampled, plain.Epsilon)
	}
}

// TestPrivacyFedNMFSecure: with --threshold t the report is the
// accountant's composition of fednmf.Config.Events() — a discrete Gaussian
// charged for t survivors every round, per document — with no credit for
// sampling (the fraction does not change ε) and notes that say so; the
// calibration reaches its target on the same events.
func TestPrivacyFedNMFSecure(t *testing.T) {
	for _, tc := range []struct {
		z, clip, q float64
		rounds, t  int
	}{
		{1.3, 0.5, 0.5, 5, 2},
		{1.1, 1, 0.2, 100, 6},
	} {
		args := []string{"fednmf", "--noise-multiplier", fmt.Sprint(tc.z), "--clip", fmt.Sprint(tc.clip), "--rounds", fmt.Sprint(tc.rounds),
			"--sampling-fraction", fmt.Sprint(tc.q), "--threshold", fmt.Sprint(tc.t)}
		rep := reportOf(t, args...)
		cfg := fednmf.Config{Rounds: tc.rounds, ClientFraction: tc.q, Clip: tc.clip, NoiseMultiplier: tc.z, SecureThreshold: tc.t}
		want, err := accountant.Compose(cfg.Events(), 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		got := costFor(t, rep, "total", "document", false)
		if got.Epsilon != want.Epsilon || got.Delta != 1e-5 || got.Accountant != want.Accountant {
			t.Errorf("%q: total %+v; want the accountant's %+v for Config.Events()", args, got, want)
		}
		if rep.Mechanism != privacy.MechanismDiscreteGaussian || rep.Parameters["threshold"] != float64(tc.t) {
			t.Errorf("%q: mechanism %q, parameters %v; want %q and threshold %d", args, rep.Mechanism, rep.Parameters, privacy.MechanismDiscreteGaussian, tc.t)
		}
		for _, c := range rep.Costs {
			if c.Sampling != "" {
				t.Errorf("%q: cost %+v credits sampling; want none", args, c)
			}
		}
		notes := strings.Join(rep.Notes, " ")
		for _, w := range []string{"discrete Gaussian", fmt.Sprintf("exactly %d survived", tc.t), "no credit for sampling"} {
			if !strings.Contains(notes, w) {
				t.Errorf("%q: notes %q do not say %q", args, rep.Notes, w)
			}
		}
		all := reportOf(t, append(args, "--sampling-fraction", "1")...)
		if c := costFor(t, all, "total", "document", false); c.Epsilon != got.Epsilon {
			t.Errorf("%q: ε = %v at q = 1, %v at q = %v; want the same (no credit for sampling)", args, c.Epsilon, got.Epsilon, tc.q)
		}
	}
	cal := reportOf(t, "fednmf", "--target-epsilon", "5", "--rounds", "100", "--threshold", "3")
	if c := cal.Calibration; c == nil || c.Unit != "document" || c.Parameter != "noise multiplier" {
		t.Fatalf("calibration = %+v; want a noise multiplier per document", cal.Calibration)
	}
	if c := costFor(t, cal, "total", "document", false); c.Epsilon > 5 || c.Epsilon < 5*(1-1e-3) {
		t.Errorf("at the calibrated multiplier %v: ε = %v; want just below 5", cal.Calibration.Value, c.Epsilon)
	}
}

func TestPrivacyUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"no method", nil},
		{"unknown method", []string{"lda"}},
		{"pctd without sigma", []string{"pctd", "--iterations", "3"}},
		{"pctd negative sigma", []string{"pctd", "--sigma", "-1", "--iterations", "3"}},
		{"pctd NaN sigma", []string{"pctd", "--sigma", "NaN", "--iterations", "3"}},
		{"pctd zero iterations", []string{"pctd", "--sigma", "1", "--iterations", "0"}},
		{"pctd delta 1", []string{"pctd", "--sigma", "1", "--iterations", "3", "--delta", "1"}},
		{"pctd delta 0", []string{"pctd", "--sigma", "1", "--iterations", "3", "--delta", "0"}},
		{"ftm without epsilon", []string{"ftm"}},
		{"ftm infinite epsilon", []string{"ftm", "--epsilon", "+Inf"}},
		{"ftm negative threshold", []string{"ftm", "--epsilon", "1", "--threshold", "-1"}},
		{"ftm negative length", []string{"ftm", "--epsilon", "1", "--max-doc-length", "-3"}},
		{"ftm bad flag value", []string{"ftm", "--epsilon", "eleven"}},
		{"fedlda without length", []string{"fedlda", "--epsilon", "1", "--iterations", "3"}},
		{"fedlda bad mechanism", []string{"fedlda", "--epsilon", "1", "--iterations", "3", "--max-doc-length", "10", "--mechanism", "hm"}},
		{"fedlda krr without vocab", []string{"fedlda", "--mechanism", "krr", "--epsilon", "1", "--iterations", "3", "--max-doc-length", "10"}},
		{"fedlda bad truncation", []string{"fedlda", "--epsilon", "1", "--iterations", "3", "--max-doc-length", "10", "--truncation", "0.7"}},
		{"fedlda bad ratio", []string{"fedlda", "--epsilon", "1", "--iterations", "3", "--max-doc-length", "10", "--sample-ratio", "1.5"}},
		{"fednmf zero rounds", []string{"fednmf", "--noise-multiplier", "1", "--rounds", "0"}},
		{"fednmf bad fraction", []string{"fednmf", "--noise-multiplier", "1", "--rounds", "3", "--sampling-fraction", "0"}},
		{"fednmf negative target", []string{"fednmf", "--target-epsilon", "-2", "--rounds", "3"}},
		{"fednmf negative threshold", []string{"fednmf", "--noise-multiplier", "1", "--rounds", "3", "--threshold", "-1"}},
		{"fednmf threshold past the engine", []string{"fednmf", "--noise-multiplier", "1", "--rounds", "3", "--threshold", fmt.Sprint(fed.MaxSecAggParties + 1)}},
		{"fednmf threshold without room for the noise", []string{"fednmf", "--noise-multiplier", "1e-3", "--clip", "1e-15", "--rounds", "3", "--threshold", "2"}},
		{"fednmf threshold not a number", []string{"fednmf", "--noise-multiplier", "1", "--rounds", "3", "--threshold", "two"}},
		{"extra argument", []string{"pctd", "x", "--sigma", "1", "--iterations", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runPrivacy(t, tt.args...)
			var ue usageError
			if !errors.As(err, &ue) || exitCode(err) != exitUsage {
				t.Errorf("privacy %q = %v (exit %d); want a usage error (exit 2)", tt.args, err, exitCode(err))
			}
			if !strings.Contains(stderr, "fedtopic: ") {
				t.Errorf("privacy %q: stderr %q does not report the error", tt.args, stderr)
			}
		})
	}
}
