package ftm

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fedtopic/fedtopic/fed"
)

// update returns party p's update with the given rows.
func update(p int, docs int64, rows ...[]float64) fed.Update {
	return fed.Update{Party: p, ID: "p" + string(rune('1'+p)), Payload: encodeUpdate(updateMsg{docs: docs, k: len(rows), v: len(rows[0]), rows: slices.Concat(rows...)})}
}

func TestAggregatorRounds(t *testing.T) {
	s := testSetup(2, 6, `{"topics":[2,2],"rounds":2,"top_l":3,"xi":0.8}`)
	a, err := NewAggregator(s)
	if err != nil {
		t.Fatal(err)
	}
	init, err := a.Init()
	if err != nil || !bytes.Equal(init.Payload, encodeStart()) || init.Done {
		t.Fatalf("Init() = %+v, %v; want the start message", init, err)
	}
	step, err := a.Aggregate(1, []fed.Update{update(0, 10, a1, b1), update(1, 30, a2, b2)})
	if err != nil {
		t.Fatal(err)
	}
	if step.Done {
		t.Fatalf("round 1 of 2 is Done")
	}
	merged := []float64{(10*0.5 + 30*0.45) / 40, (10*0.3 + 30*0.35) / 40, 0.2, 0, 0, 0}
	approx := cmpopts.EquateApprox(0, 1e-6) // float32 on the wire
	var gotGlobal [][]float64
	var gotWeights []float64
	for _, g := range a.Global() {
		gotGlobal = append(gotGlobal, g.Row)
		gotWeights = append(gotWeights, g.Weight)
	}
	if d := cmp.Diff([][]float64{merged, b1, b2}, gotGlobal, approx); d != "" {
		t.Errorf("M* after round 1 (-want +got):\n%s", d)
	}
	if !slices.Equal(gotWeights, []float64{40, 10, 30}) {
		t.Errorf("M* weights = %v; want [40 10 30] (documents of the merged parties)", gotWeights)
	}
	// The merges name the party topics behind each global topic, with each
	// member's similarity to the merged topic.
	var _ fed.Merger = a
	wantMerges := []fed.TopicMerge{
		{Global: 0, Members: []fed.TopicRef{
			{Party: "p1", Topic: 0, Similarity: Similarity(TopL(a1, 3), TopL(merged, 3))},
			{Party: "p2", Topic: 0, Similarity: Similarity(TopL(a2, 3), TopL(merged, 3))},
		}},
		{Global: 1, Members: []fed.TopicRef{{Party: "p1", Topic: 1, Similarity: 1}}},
		{Global: 2, Members: []fed.TopicRef{{Party: "p2", Topic: 1, Similarity: 1}}},
	}
	if d := cmp.Diff(wantMerges, a.Merges(), approx); d != "" {
		t.Errorf("Merges() after round 1 (-want +got):\n%s", d)
	}
	for _, m := range a.Merges()[0].Members {
		if m.Similarity < 0.8 || m.Similarity > 1 {
			t.Errorf("member %+v of the a1–a2 merge: similarity outside [0.8, 1]; the merged row lies between two rows with ρ ≥ 0.8", m)
		}
	}
	for p, want := range [][]float64{slices.Concat(merged, b1), slices.Concat(merged, b2)} {
		m, err := decodeModel(step.PerParty[p], 6, 2)
		if err != nil {
			t.Fatalf("party %d broadcast: %v", p, err)
		}
		if d := cmp.Diff(want, m.rows, approx); d != "" {
			t.Errorf("party %d composed model (-want +got):\n%s", p, d)
		}
	}
	// A checkpoint restores the aggregator: both finish identically.
	cp, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewAggregator(s)
	if err := b.UnmarshalBinary(cp); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	round2 := []fed.Update{update(0, 10, a1, b2), update(1, 30, a3, b1)}
	fa, err := a.Aggregate(2, round2)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := b.Aggregate(2, round2)
	if err != nil {
		t.Fatal(err)
	}
	if !fa.Done || !bytes.Equal(fa.Payload, fb.Payload) {
		t.Errorf("round 2: Done = %v, restored aggregator's final model equal: %v; want true, true", fa.Done, bytes.Equal(fa.Payload, fb.Payload))
	}
	final, err := decodeModel(fa.Payload, 6, 4)
	if err != nil {
		t.Fatal(err)
	}
	if final.k != 3 {
		t.Errorf("final M* has %d topics; want 3 (a1 merged with a3 at ρ ≈ .82; b2 and b1 apart at ρ ≈ .19)", final.k)
	}
	m, err := a.Model()
	if err != nil || m.K != final.k || m.Validate() != nil {
		t.Errorf("Model() = K %d, %v, valid %v; want a valid %d-topic model", m.K, err, m.Validate(), final.k)
	}
	if err := b.UnmarshalBinary(cp[:len(cp)-3]); err == nil {
		t.Errorf("UnmarshalBinary(truncated checkpoint) = nil; want an error")
	}
}

func TestAggregatorRejectsWrongK(t *testing.T) {
	a, err := NewAggregator(testSetup(2, 6, `{"topics":[2,1]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Aggregate(1, []fed.Update{update(1, 5, a1, b1)}); err == nil {
		t.Errorf("Aggregate with 2 topics from a party of K = 1: nil error; want one")
	}
}

func TestAggregatorDroppedParty(t *testing.T) {
	a, err := NewAggregator(testSetup(2, 6, `{"topics":[2,2],"rounds":3,"top_l":3,"xi":0.8}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Aggregate(1, []fed.Update{update(0, 10, a1, b1), update(1, 30, a2, b2)}); err != nil {
		t.Fatal(err)
	}
	// Party 2 misses round 2: M* is built from party 1 alone, and party 2
	// still gets a model composed from its last local one.
	step, err := a.Aggregate(2, []fed.Update{update(0, 10, a1, b1)})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(a.Global()); n != 2 {
		t.Errorf("M* of round 2 has %d topics; want 2 (party 1's only)", n)
	}
	m, err := decodeModel(step.PerParty[1], 6, 2)
	if err != nil {
		t.Fatalf("dropped party's broadcast: %v", err)
	}
	if d := cmp.Diff(slices.Concat(a1, b2), m.rows, cmpopts.EquateApprox(0, 1e-6)); d != "" {
		t.Errorf("dropped party's composed model (-want +got):\n%s", d)
	}
}
