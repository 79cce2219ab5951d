package ftm

import (
	"bytes"
	"strings"
	"testing"
)

// TestLearnerRestart checks that a party restored from its state after
// round 1 makes no second release: it charges nothing in round 2 and, with
// secure (unrepeatable) noise, sends exactly the update the party that never
// stopped sends, so the privatized vectors it regenerated are the ones it
// released. A learner that lost its state draws fresh noise instead, which
// the control shows the comparison would catch.
func TestLearnerRestart(t *testing.T) {
	c := randomCorpus(50, 30, 7)
	setup := testSetup(1, 50, `{"epsilon": 5, "topics": [3], "local_iterations": 2, "secure_noise": true}`)
	a, err := NewLearner(setup, 0, c)
	if err != nil {
		t.Fatal(err)
	}
	step1, err := a.Learn(1, encodeStart())
	if err != nil || len(step1.Spent) != 1 {
		t.Fatalf("Learn(1) = spent %v, %v; want one release", step1.Spent, err)
	}
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	model := encodeModel(modelMsg{k: 3, v: 50, weights: []float64{1, 1, 1}, rows: a.local})
	want, err := a.Learn(2, model)
	if err != nil {
		t.Fatal(err)
	}

	b, err := NewLearner(setup, 0, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	if m, err := b.Model(); err != nil || m.K != 3 {
		t.Errorf("restored Model() = %v, %v; want round 1's local model", m, err)
	}
	if plan, err := b.Plan(2); err != nil || len(plan) != 0 {
		t.Errorf("restored Plan(2) = %v, %v; want nothing to charge", plan, err)
	}
	got, err := b.Learn(2, model)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Spent) != 0 {
		t.Errorf("restored Learn(2) spent %v; want no second release", got.Spent)
	}
	if !bytes.Equal(got.Payload, want.Payload) {
		t.Error("restored Learn(2) sent another update than the party that never stopped")
	}

	fresh, err := NewLearner(setup, 0, c)
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := fresh.Learn(2, model)
	if err != nil {
		t.Fatal(err)
	}
	if len(ctl.Spent) != 1 || bytes.Equal(ctl.Payload, want.Payload) {
		t.Errorf("a learner without state: spent %v, same update %v; want a new release with new noise", ctl.Spent, bytes.Equal(ctl.Payload, want.Payload))
	}
}

func TestLearnerStateRejects(t *testing.T) {
	c := randomCorpus(50, 30, 8)
	params := `{"topics": [3], "local_iterations": 1}`
	a, err := NewLearner(testSetup(2, 50, params), 0, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Learn(1, encodeStart()); err != nil {
		t.Fatal(err)
	}
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		setup  string
		party  int
		state  []byte
		errHas string
	}{
		{"another party", params, 1, state, `belongs to party "p1"`},
		{"truncated", params, 0, state[:len(state)-3], "local model of 150 values"},
		{"garbage", params, 0, []byte("fedtopic"), "wrong header"},
		{"other noise", `{"topics": [3], "local_iterations": 1, "secure_noise": true}`, 0, state, "its noise is seeded"},
		{"no noise", `{"topics": [3], "local_iterations": 1, "no_noise": true}`, 0, state, "noise source saved"},
		{"other K", `{"topics": [4], "local_iterations": 1}`, 0, state, "want 4 topics"},
	} {
		l, err := NewLearner(testSetup(2, 50, tc.setup), tc.party, c)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.UnmarshalBinary(tc.state); err == nil || !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: UnmarshalBinary error = %v; want one containing %q", tc.name, err, tc.errHas)
		}
	}
	if err := a.UnmarshalBinary(state); err == nil {
		t.Error("UnmarshalBinary into a learner that has learned: nil error; want one")
	}
}
