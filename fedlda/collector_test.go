package fedlda

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
)

// TestCollectorDropsTupleWithoutOldCount checks the collector's rule: a
// tuple whose −1 finds no count at (k_old, w) is dropped whole, its +1
// included; a first assignment (no old topic) and a tuple whose −1 finds
// its count apply both halves; a dummy does nothing.
func TestCollectorDropsTupleWithoutOldCount(t *testing.T) {
	params, err := json.Marshal(Config{K: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAggregator(fed.Setup{Run: "r", Parties: []string{"p1"}, Vocab: []string{"a", "b", "c"}, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	body := make([]byte, 0, 5*tupleSize)
	for _, tu := range []tuple{
		{w: 0, kOld: noTopic, kNew: 0}, // first assignment: n[0,a] = 1
		{w: 0, kOld: 0, kNew: 1},       // moves it: n[0,a] = 0, n[1,a] = 1
		{w: 2, kOld: 0, kNew: 1},       // no count at (0, c): dropped whole
		{w: 1, kOld: 1, kNew: 0},       // no count at (1, b): dropped whole
		{w: 1, kOld: noTopic, kNew: noTopic},
	} {
		var b [tupleSize]byte
		putTuple(b[:], tu)
		body = append(body, b[:]...)
	}
	a.apply(body)
	// Topic-major K×V: topic 0 then topic 1, words a, b, c.
	if got, want := a.Counts(), []uint32{0, 0, 0, 1, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("counts after the tuples = %v; want %v", got, want)
	}
}
