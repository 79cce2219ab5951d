package ftm

import (
	"context"
	"testing"

	"github.com/fedtopic/fedtopic/privacy"
)

func TestLearnerPrivacyEvents(t *testing.T) {
	c := randomCorpus(50, 30, 3)
	tests := []struct {
		name     string
		params   string
		wantMech string
		wantEps  float64
		wantUnit string
	}{
		{name: "word occurrence", params: `{"epsilon": 9, "topics": [3], "local_iterations": 2}`,
			wantMech: privacy.MechanismThresholdedLaplace, wantEps: 9, wantUnit: UnitWord},
		// Group privacy over a document of at most 12 tokens: 12·9.
		{name: "document", params: `{"epsilon": 9, "topics": [3], "local_iterations": 2, "unit": "document", "max_doc_tokens": 12}`,
			wantMech: privacy.MechanismApproxDP, wantEps: 108, wantUnit: UnitDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := NewLearner(testSetup(1, 50, tt.params), 0, c)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := l.Plan(1)
			if err != nil || len(plan) != 1 {
				t.Fatalf("Plan(1) = %v, %v; want one event", plan, err)
			}
			step, err := l.Learn(1, encodeStart())
			if err != nil {
				t.Fatal(err)
			}
			if len(step.Spent) != 1 || step.Spent[0] != plan[0] {
				t.Fatalf("Learn(1) spent %v; want the planned %v", step.Spent, plan)
			}
			e := step.Spent[0]
			if e.Mechanism != tt.wantMech || e.Epsilon != tt.wantEps || e.Unit != tt.wantUnit || e.Count != 1 {
				t.Errorf("round 1 event = %+v; want %s ε = %v per %s, count 1", e, tt.wantMech, tt.wantEps, tt.wantUnit)
			}
			if plan, _ := l.Plan(2); len(plan) != 0 {
				t.Errorf("Plan(2) after privatizing = %v; want nothing: later rounds only post-process", plan)
			}
			step, err = l.Learn(2, encodeStart())
			if err != nil || len(step.Spent) != 0 {
				t.Errorf("Learn(2) = spent %v, %v; want no new release", step.Spent, err)
			}
		})
	}
}

func TestLearnerRejectsBroadcast(t *testing.T) {
	c := randomCorpus(50, 10, 4)
	l, err := NewLearner(testSetup(1, 50, `{"topics": [3], "local_iterations": 1}`), 0, c)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float64, 50)
	row[0] = 1
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"garbage", []byte("hello")},
		{"an update", encodeUpdate(updateMsg{docs: 1, k: 1, v: 50, rows: row})},
		{"a model of the wrong K", encodeModel(modelMsg{k: 1, v: 50, weights: []float64{1}, rows: row})},
	} {
		if _, err := l.Learn(1, tc.b); err == nil {
			t.Errorf("Learn(1, %s) = nil error; want one", tc.name)
		}
	}
	if m := l.Memory(); m.Items != 0 {
		t.Errorf("a rejected broadcast privatized the data: Memory() = %+v", m)
	}
}

func TestLearnerNoNoise(t *testing.T) {
	c := randomCorpus(50, 30, 5)
	l, err := NewLearner(testSetup(1, 50, `{"no_noise": true, "topics": [3], "local_iterations": 3}`), 0, c)
	if err != nil {
		t.Fatal(err)
	}
	step, err := l.Learn(1, encodeStart())
	if err != nil {
		t.Fatal(err)
	}
	if len(step.Spent) != 0 {
		t.Errorf("no_noise run spent %v; want nothing", step.Spent)
	}
	if m := l.Memory(); m.Items != c.NumTokens() || m.Entries != int64(c.NumTokens()) || m.NoiseBytes != 0 {
		t.Errorf("Memory() = %+v; want one entry per token and no encoded noise", m)
	}
	m, err := l.Model()
	if err != nil || m.Validate() != nil || m.K != 3 {
		t.Errorf("Model() = %v, %v; want a valid 3-topic model", m, err)
	}
}

// TestLearnerChargesAfterFailedRound checks that a round that privatized
// but failed does not lose the charge: the next successful round carries
// the privatization's event.
func TestLearnerChargesAfterFailedRound(t *testing.T) {
	c := randomCorpus(50, 30, 6)
	l, err := NewLearner(testSetup(1, 50, `{"topics": [3], "local_iterations": 2}`), 0, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.privatize(context.Background()); err != nil { // as a round that failed after privatizing
		t.Fatal(err)
	}
	step, err := l.Learn(1, encodeStart())
	if err != nil {
		t.Fatal(err)
	}
	if len(step.Spent) != 1 {
		t.Errorf("first successful round spent %v; want the privatization's event", step.Spent)
	}
}
