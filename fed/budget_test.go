package fed_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

// noPlan hides a learner's Plan method, so the party learns the cost of a
// round only from the Step.
type noPlan struct{ fed.Learner }

// TestBudgetRefusal is RELIABILITY.md L-1 through the engine: with ε = 1 per
// round and a budget of 2.5, every party refuses round 3, says so to the
// coordinator and stops with ErrBudgetExhausted naming the requested and
// remaining ε; nothing of round 3 is released, the ledgers never exceed the
// budget, and the coordinator ends the run at once because the quorum can
// no longer be met. A learner that can plan its spend is refused before it
// draws any noise.
func TestBudgetRefusal(t *testing.T) {
	for _, planned := range []bool{true, false} {
		name := map[bool]string{true: "planner", false: "no planner"}[planned]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sc := fedtest.Scenario{Parties: 3, MinParties: 1, Rounds: 4, Epsilon: 1, Budget: 2.5, Seed: 61, RoundTimeout: roundTimeout}
				c := newCluster(t, sc, inproc.Faults{}, false)
				_, coordDone := c.startCoordinator()
				var parties []<-chan outcome[*fed.PartyResult]
				for i := range 3 {
					wrap := func(l fed.Learner) fed.Learner { return l }
					if !planned {
						wrap = func(l fed.Learner) fed.Learner { return noPlan{l} }
					}
					parties = append(parties, c.startPartyWith(i, wrap, func(p fed.Protocol) fed.Protocol { return p }))
				}
				res := <-coordDone
				c.wait()
				if !errors.Is(res.err, fed.ErrQuorum) || !errors.Is(res.err, fed.ErrBudgetExhausted) {
					t.Errorf("Coordinator.Run error = %v; want ErrQuorum because budgets are exhausted", res.err)
				}
				for i, ch := range parties {
					o := <-ch
					if !errors.Is(o.err, fed.ErrBudgetExhausted) || !strings.Contains(o.err.Error(), "requested ε = 1") || !strings.Contains(o.err.Error(), "remaining ε = 0.5") {
						t.Errorf("party %d: Run error %v; want ErrBudgetExhausted naming requested 1 and remaining 0.5", i+1, o.err)
					}
					if got := c.ledgers[i].Spent(); got != 2 {
						t.Errorf("party %d spent ε = %v; want 2", i+1, got)
					}
					wantLearned := 2
					if !planned {
						wantLearned = 3 // computed, refused by Charge, never sent
					}
					if got := c.learners[i][0].Learned; got != wantLearned {
						t.Errorf("party %d computed %d updates; want %d", i+1, got, wantLearned)
					}
				}
				recs := c.allRecords()
				last := recs[len(recs)-1]
				if last.Round != 3 || last.Committed || !slices.Equal(last.Refused, []string{"p1", "p2", "p3"}) || len(last.Replied) != 0 {
					t.Errorf("last record: round %d committed %v refused %v replied %v; want round 3 refused by all, nothing released", last.Round, last.Committed, last.Refused, last.Replied)
				}
				if last.Duration >= roundTimeout {
					t.Errorf("round 3 took %v; want the coordinator not to wait for the deadline", last.Duration)
				}
				if got := c.aggs[0].Aggregated; !slices.Equal(got, []int{1, 2}) {
					t.Errorf("aggregated rounds %v; want 1 2", got)
				}
			})
		})
	}
}
