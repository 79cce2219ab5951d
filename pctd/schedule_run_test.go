package pctd_test

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// TestScheduleCharges: with a noise schedule every party is charged, round
// by round, the event Config.Events lists for that round — the continuous
// Gaussian of the round's σ_t in the clear, the discrete Gaussian of the
// round's total σ_t under secure aggregation with distributed noise — and
// the run composes to the calibrated ε, as the equal split does.
func TestScheduleCharges(t *testing.T) {
	parts, vocab := synthData(t, 4, 60, 240, 8)
	for _, tc := range []struct {
		name      string
		params    string
		threshold int // 0: in the clear
		mech      string
	}{
		{"clear", `{"topics":4,"rounds":4,"max_doc_tokens":20,"epsilon":4,"schedule_growth":2,"average_last":2}`, 0, privacy.MechanismGaussian},
		{"distributed", `{"topics":4,"rounds":4,"max_doc_tokens":20,"epsilon":4,"schedule_growth":2,"average_last":2,"secure_threshold":3}`, 3, privacy.MechanismDiscreteGaussian},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ledgers [][]fedtest.LedgerEntry
			if tc.threshold > 0 {
				ledgers = playSecure(t, tc.params, parts, vocab, tc.threshold, 1).ledgers
			} else {
				ledgers = play(t, fedtest.InProc(inproc.Faults{}), tc.params, parts, vocab, 1).ledgers
			}
			cfg, err := pctd.ParseConfig(json.RawMessage(tc.params))
			if err != nil {
				t.Fatal(err)
			}
			want, err := cfg.Events()
			if err != nil {
				t.Fatal(err)
			}
			if len(want) != 4 || want[0].Mechanism != tc.mech || !(want[0].Sigma > want[3].Sigma) {
				t.Fatalf("Events() = %+v; want 4 %s releases of falling noise", want, tc.mech)
			}
			wantCost, err := accountant.Compose(want, 1e-5)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(wantCost.Epsilon-4) > 1e-6 {
				t.Errorf("the scheduled run is planned at ε = %v; want 4", wantCost.Epsilon)
			}
			for i, entries := range ledgers {
				if len(entries) != 4 {
					t.Fatalf("party %d: %d charges; want 4", i+1, len(entries))
				}
				var all []privacy.Event
				for r, e := range entries {
					if len(e.Events) != 1 || e.Events[0] != want[r] {
						t.Errorf("party %d, round %d: charged %+v; want %+v", i+1, r+1, e.Events, want[r])
					}
					all = append(all, e.Events...)
				}
				got, err := accountant.Compose(all, 1e-5)
				if err != nil || math.Abs(got.Epsilon-wantCost.Epsilon) > 1e-9 {
					t.Errorf("party %d spent ε = %v, %v; want %v", i+1, got.Epsilon, err, wantCost.Epsilon)
				}
			}
		})
	}
}

// TestScheduleSecureRoundSpec: under distributed noise with a schedule the
// engine reads each round's own noise from SumSpecFor, so a party that
// missed rounds adds the share of the round it learns, and LearnSum takes
// a round out of order (a dropout's return).
func TestScheduleSecureRoundSpec(t *testing.T) {
	parts, vocab := synthData(t, 4, 60, 240, 9)
	setup := fedSetup(vocab, `{"topics":4,"rounds":4,"max_doc_tokens":20,"epsilon":4,"schedule_growth":2,"secure_threshold":2}`)
	agg, err := pctd.NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	l, err := pctd.NewLearner(setup, 0, parts[0])
	if err != nil {
		t.Fatal(err)
	}
	var _ fed.RoundSumLearner = l
	init, err := agg.Init()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := pctd.ParseConfig(setup.Params)
	for round := 1; round <= 4; round++ {
		if got, want := l.SumSpecFor(round).Sigma, cfg.NoiseStdAt(round)*(1<<pctd.SecureFracBits); got != want {
			t.Errorf("SumSpecFor(%d): σ %v; want round %d's %v", round, got, round, want)
		}
	}
	if cfg.NoiseStdAt(1) == cfg.NoiseStdAt(3) {
		t.Fatalf("rounds 1 and 3 have the same noise %v: the test cannot tell them apart", cfg.NoiseStdAt(1))
	}
	if _, _, err := l.LearnSum(1, init.Payload); err != nil {
		t.Fatal(err)
	}
	if got, want := l.SumSpec().Sigma, cfg.NoiseStdAt(2)*(1<<pctd.SecureFracBits); got != want {
		t.Errorf("SumSpec after round 1: σ %v; want round 2's %v", got, want)
	}
	// Round 2 missed: round 3 is learned and charged as round 3.
	if _, _, err := l.LearnSum(3, init.Payload); err != nil {
		t.Errorf("LearnSum(3) after round 1: %v; want the round learned", err)
	}
	if got, want := l.SumSpec().Sigma, cfg.NoiseStdAt(4)*(1<<pctd.SecureFracBits); got != want {
		t.Errorf("SumSpec after round 3: σ %v; want round 4's %v", got, want)
	}
}

// fedSetup is a two-party setup over vocab with params.
func fedSetup(vocab []string, params string) fed.Setup {
	ids := make([]string, 2)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	return fed.Setup{Run: "r", Parties: ids, Vocab: vocab, Seed: 1, Params: json.RawMessage(params)}
}
