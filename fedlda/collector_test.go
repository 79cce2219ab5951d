package fedlda

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
)

// TestCollectorRules checks the collector's two rules on a tuple whose
// −1 finds no count at (k_old, w): clip (the default) clips the −1 at 0
// and applies the +1; drop drops the tuple whole. A first assignment (no
// old topic) and a tuple whose −1 finds its count apply both halves under
// either rule; a dummy does nothing.
func TestCollectorRules(t *testing.T) {
	tuples := []tuple{
		{w: 0, kOld: noTopic, kNew: 0}, // first assignment: n[0,a] = 1
		{w: 0, kOld: 0, kNew: 1},       // moves it: n[0,a] = 0, n[1,a] = 1
		{w: 2, kOld: 0, kNew: 1},       // no count at (0, c)
		{w: 1, kOld: 1, kNew: 0},       // no count at (1, b)
		{w: 1, kOld: noTopic, kNew: noTopic},
	}
	body := make([]byte, 0, len(tuples)*tupleSize)
	for _, tu := range tuples {
		var b [tupleSize]byte
		putTuple(b[:], tu)
		body = append(body, b[:]...)
	}
	// Topic-major K×V: topic 0 then topic 1, words a, b, c.
	for _, tt := range []struct {
		collector string
		want      []uint32
	}{
		{"", []uint32{0, 1, 0, 1, 0, 1}},
		{CollectorClip, []uint32{0, 1, 0, 1, 0, 1}},
		{CollectorDrop, []uint32{0, 0, 0, 1, 0, 0}},
	} {
		params, err := json.Marshal(Config{K: 2, Collector: tt.collector})
		if err != nil {
			t.Fatal(err)
		}
		a, err := NewAggregator(fed.Setup{Run: "r", Parties: []string{"p1"}, Vocab: []string{"a", "b", "c"}, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		a.apply(body)
		if got := a.Counts(); !slices.Equal(got, tt.want) {
			t.Errorf("collector %q: counts after the tuples = %v; want %v", tt.collector, got, tt.want)
		}
	}
	if err := (Config{Collector: "keep"}).Validate(); err == nil {
		t.Error("collector \"keep\" validated")
	}
}

// TestDropRefusedUnderSecureAggregation checks that the drop rule, which
// needs every tuple, refuses a round of summed counts.
func TestDropRefusedUnderSecureAggregation(t *testing.T) {
	params, err := json.Marshal(Config{K: 2, Collector: CollectorDrop})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAggregator(fed.Setup{Run: "r", Parties: []string{"p1"}, Vocab: []string{"a", "b"}, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AggregateSum(1, make([]int64, 4), []int{0}); err == nil {
		t.Error("drop collector aggregated a secure sum")
	}
}
