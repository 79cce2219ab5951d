package vocabround_test

import (
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/sim/vocabround"
)

func TestDecode(t *testing.T) {
	p := vocabround.Params{MaxWords: 3, MaxWordLen: 5}
	tests := []struct {
		name string
		in   string
		want string // error substring; "" = ok
	}{
		{name: "empty", in: ""},
		{name: "sorted", in: "a\nb\nc"},
		{name: "too many", in: "a\nb\nc\nd", want: "4 words > 3"},
		{name: "unsorted", in: "b\na", want: "out of order"},
		{name: "repeated", in: "a\na", want: "out of order"},
		{name: "empty word", in: "a\n\nb", want: "empty"},
		{name: "long", in: "abcdef", want: "6 bytes"},
		{name: "invalid UTF-8", in: "a\n\xff", want: "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := vocabround.Decode([]byte(tt.in), p)
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Decode(%q) = %v; want %q", tt.in, err, tt.want)
			}
		})
	}
}

// TestLearnerPlansAndReleases: the plan is the partition selection's Event
// and equals what Learn spends; the release is sorted and valid.
func TestLearnerPlansAndReleases(t *testing.T) {
	p := vocabround.Params{Selection: privacy.PartitionSelectionConfig{Epsilon: 2, Delta: 1e-5, MaxWordsPerDoc: 5}}
	var docs [][]string
	for range 300 {
		docs = append(docs, []string{"zeta", "alpha", "alpha", "mid\nline"})
	}
	l, err := vocabround.NewLearner(p, docs, rng.Derive(1, "test"))
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := l.Plan(1)
	step, err := l.Learn(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || len(step.Spent) != 1 || plan[0] != step.Spent[0] {
		t.Errorf("plan %+v, spent %+v; want one identical event", plan, step.Spent)
	}
	if got := string(step.Payload); got != "alpha\nzeta" {
		t.Errorf("release %q; want \"alpha\\nzeta\" (a word with a newline is never a candidate)", got)
	}
	agg, err := vocabround.Algorithm.NewAggregator(fed.Setup{Params: []byte(`{"selection": {"epsilon": 2, "delta": 1e-5}}`)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := agg.Aggregate(1, []fed.Update{{ID: "p1", Payload: []byte("b\nc")}, {ID: "p2", Payload: []byte("a\nc")}})
	if err != nil || string(out.Payload) != "a\nb\nc" || !out.Done {
		t.Errorf("Aggregate = %q, done %v, %v; want the sorted union, done", out.Payload, out.Done, err)
	}
}
