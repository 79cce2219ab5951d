package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
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
// that cannot run under it, or with PC-TD's unit variant, is refused
// before anything is read, with words that say why.
func TestSimulateRefusesSecureAggregation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--algorithm", "ftm"}, "--secure-aggregation: ftm does not declare its update a vector of sums"},
		{[]string{"--algorithm", "fednmf"}, "--secure-aggregation: fednmf does not declare its update a vector of sums"},
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
