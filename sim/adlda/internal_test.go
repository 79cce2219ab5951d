package adlda

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// smallParties returns three random corpora over v words.
func smallParties(v int) []*corpus.Corpus {
	var out []*corpus.Corpus
	for p := range 3 {
		r := rng.Derive(1, "test", p)
		c := &corpus.Corpus{V: v, DocStart: []int{0}}
		for range 20 + 10*p {
			for range 3 + r.IntN(20) {
				c.Words = append(c.Words, int32(r.IntN(v)))
			}
			c.DocStart = append(c.DocStart, len(c.Words))
		}
		out = append(out, c)
	}
	return out
}

// play drives learners and an aggregator by hand for rounds rounds, calling
// check after each aggregation.
func play(t *testing.T, a *Aggregator, ls []*Learner, rounds int, check func(round int)) []byte {
	t.Helper()
	step, err := a.Init()
	if err != nil {
		t.Fatal(err)
	}
	for r := 1; r <= rounds; r++ {
		var ups []fed.Update
		for i, l := range ls {
			s, err := l.Learn(r, step.Payload)
			if err != nil {
				t.Fatalf("round %d party %d: %v", r, i, err)
			}
			ups = append(ups, fed.Update{Party: i, ID: "p", Payload: s.Payload})
		}
		if step, err = a.Aggregate(r, ups); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		if check != nil {
			check(r)
		}
	}
	return step.Payload
}

func newParties(t *testing.T, p Params, v int, seed uint64) (*Aggregator, []*Learner) {
	t.Helper()
	p = p.withDefaults()
	a := &Aggregator{p: p, v: v, g: make([]int32, p.K*v)}
	var ls []*Learner
	for i, c := range smallParties(v) {
		l, err := NewLearner(p, v, seed, fmt.Sprintf("p%d", i+1), c)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return a, ls
}

// TestGlobalIsSumOfLocals: after every round the coordinator's G equals the
// sum of the parties' current counts — no update lost or counted twice —
// and holds every token exactly once.
func TestGlobalIsSumOfLocals(t *testing.T) {
	a, ls := newParties(t, Params{K: 4, Rounds: 6, BlockSize: 25}, 15, 7)
	tokens := 0
	for _, l := range ls {
		tokens += len(l.z)
	}
	play(t, a, ls, 6, func(r int) {
		sum := make([]int32, len(a.g))
		for _, l := range ls {
			for i, x := range l.counts() {
				sum[i] += x
			}
		}
		if !slices.Equal(sum, a.g) {
			t.Errorf("round %d: G differs from the sum of the parties' counts", r)
		}
		n := 0
		for _, x := range a.g {
			n += int(x)
		}
		if n != tokens {
			t.Errorf("round %d: G holds %d tokens; want %d", r, n, tokens)
		}
	})
}

// TestLearnerRestore: a learner restored from its MarshalBinary state after
// round 3 continues exactly as the original would have.
func TestLearnerRestore(t *testing.T) {
	p := Params{K: 3, Rounds: 6, BlockSize: 40}
	a1, l1 := newParties(t, p, 12, 11)
	want := play(t, a1, l1, 6, nil)

	a2, l2 := newParties(t, p, 12, 11)
	var state [][]byte
	play(t, a2, l2, 3, nil)
	for _, l := range l2 {
		b, err := l.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		state = append(state, b)
	}
	_, fresh := newParties(t, p, 12, 11)
	for i, l := range fresh {
		if err := l.UnmarshalBinary(state[i]); err != nil {
			t.Fatal(err)
		}
	}
	agg, err := a2.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	a3, _ := newParties(t, p, 12, 11)
	if err := a3.UnmarshalBinary(agg); err != nil {
		t.Fatal(err)
	}
	step := fed.Step{Payload: encodeCounts(a3.p.K, a3.v, a3.g)}
	for r := 4; r <= 6; r++ {
		var ups []fed.Update
		for i, l := range fresh {
			s, err := l.Learn(r, step.Payload)
			if err != nil {
				t.Fatal(err)
			}
			ups = append(ups, fed.Update{Party: i, ID: "p", Payload: s.Payload})
		}
		if step, err = a3.Aggregate(r, ups); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(step.Payload, want) {
		t.Error("restored learners and aggregator ended with a different model than the uninterrupted run")
	}
	if err := fresh[0].UnmarshalBinary(state[0][:len(state[0])-1]); err == nil {
		t.Error("UnmarshalBinary of a truncated state succeeded; want an error")
	}
}

func TestEncodingRoundTrip(t *testing.T) {
	m := []int32{0, 5, 0, 0, -3, 1 << 30, 0, -(1 << 31), 7}
	b := encodeCounts(3, 3, m)
	if len(b) > maxEncodedSize(3, 3) {
		t.Errorf("encoding of %d bytes exceeds the bound %d", len(b), maxEncodedSize(3, 3))
	}
	got := make([]int32, 9)
	if err := decodeCounts(b, 3, 3, false, func(i int, x int32) { got[i] = x }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, m) {
		t.Errorf("decode(encode(%v)) = %v", m, got)
	}
	full := make([]int32, 50*40)
	for i := range full {
		full[i] = -1 << 31
	}
	if n, max := len(encodeCounts(50, 40, full)), maxEncodedSize(50, 40); n > max {
		t.Errorf("worst-case encoding of %d bytes exceeds the bound %d", n, max)
	}
}
