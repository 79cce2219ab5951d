package fedlda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedtopic/fedtopic/fedlda"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
)

// TestSecureAggregation: under secure aggregation the collector learns
// only the sum of the parties' count changes. Without perturbation no −1
// meets an empty cell, so the model is the plain run's bit for bit; with
// kRR every party is charged what it is charged in the clear.
func TestSecureAggregation(t *testing.T) {
	parts, vocab := synthParties(t, 4, 40, 120, 12, 3)
	run := func(params string, threshold int) *sim.Result {
		t.Helper()
		res, err := sim.Run(context.Background(), sim.Scenario{Algorithm: fedlda.Algorithm, Params: json.RawMessage(params),
			Corpora: parts, Vocab: vocab, Seed: 4, SecureAggregation: threshold > 0, SecureThreshold: threshold,
			Budget: accountant.Budget{Epsilon: 1e6, Delta: 0.5, Unit: "document"}})
		if err != nil {
			t.Fatalf("threshold %d: %v", threshold, err)
		}
		return res
	}
	none := `{"k":4,"rounds":4,"mechanism":"none","max_doc_tokens":12}`
	plain := run(none, 0)
	for _, th := range []int{2, 3} {
		if got := run(none, th); !bytes.Equal(got.Final, plain.Final) {
			t.Errorf("threshold %d: the secure run's counts differ from the plain run's", th)
		}
	}
	krr := `{"k":4,"rounds":3,"mechanism":"krr","epsilon":2,"max_doc_tokens":12}`
	want, got := run(krr, 0), run(krr, 3)
	if d := cmp.Diff(want.Global.Prov.Privacy, got.Global.Prov.Privacy); d != "" || len(want.Global.Prov.Privacy) != len(parts) {
		t.Errorf("privacy spend under secure aggregation differs from the plain run's (-plain +secure):\n%s", d)
	}
}
