package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// TestAttacksBelowClaim is P-1/P-2 in cheap form for the methods whose
// release takes milliseconds: each method's word-presence bound, at
// alpha = 1e-5, must not exceed its claimed ε — for a method that keeps
// its claim this fails with probability at most 1e-5 whatever the seed
// (exact Clopper–Pearson bounds on trials apart from those that chose the
// test) — and without noise the same game must have power: TPR ≥ 0.98
// and ε_lb ≥ 2.5. A perfect separation gives ε_lb = ln((1 − u)/u),
// u = 1 − (α/2)^(1/n), 3.47 at n = 400 and this α; measured at seed 3:
// 3.47 (FTM's mechanism), 3.46 (PC-TD, whose random initial topics leave
// a trace of the planted word's β in a few noiseless releases without it),
// and 3.44 (FedLDA, whose users send a sample of their tuples, which
// misses the planted word in 1.75% of the iterations). FedNMF's game is
// left out: its statistic (the planted word's row of W) has power at some
// seeds only, because the coordinator's random initial W moves it more
// than one client's update does. FTM's full learner takes about 60 ms a release and is
// played by the command only; its mechanism is played here.
func TestAttacksBelowClaim(t *testing.T) {
	const trials = 400
	methods := []string{"ftm-mechanism", "pctd-unit", "pctd-ssp", "fedlda-krr", "fedlda-tkrr", "fedlda-rrp"}
	var out, log bytes.Buffer
	if err := runAttacks(context.Background(), &out, &log, attackOptions{trials: trials, alpha: 1e-5, seed: 3, methods: methods}); err != nil {
		t.Fatalf("runAttacks: %v", err)
	}
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var line map[string]any
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if _, ok := line["plot"]; ok {
			continue
		}
		m, lb := line["method"].(string), line["epsilon_lb"].(float64)
		seen[m]++
		switch line["noise"] {
		case "on":
			if claimed := line["claimed_epsilon"].(float64); lb > claimed {
				t.Errorf("%s: ε lower bound %v; want ≤ claimed %v", m, lb, claimed)
			}
		case "off":
			if tpr, fpr := line["tpr"].(float64), line["fpr"].(float64); tpr < 0.98 || lb < 2.5 {
				t.Errorf("%s without noise: TPR %v (FPR %v), ε lower bound %v; want TPR ≥ 0.98, ε_lb ≥ 2.5 (the attack lost its power)", m, tpr, fpr, lb)
			}
		}
	}
	for _, m := range methods {
		if seen[m] != 2 {
			t.Errorf("%s: %d lines; want 2 (noise on and off)", m, seen[m])
		}
	}
}
