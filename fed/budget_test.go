package fed_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// noPlan hides a learner's Plan method, so the party learns the cost of a
// round only from the Step.
type noPlan struct{ fed.Learner }

// TestBudgetRefusal checks, through the engine, that a budget is enforced: with ε = 1 per
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

// TestAccountantLedger runs the budget refusal with the privacy package's
// durable ledger: pure-ε Laplace releases add up, round 3 does not fit a
// budget of ε = 2.5, and the refusal names what was asked and what is left.
func TestAccountantLedger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 2, MinParties: 1, Rounds: 4, Epsilon: 1, Seed: 62, RoundTimeout: roundTimeout}
		n, err := inproc.New(nil, inproc.Faults{})
		if err != nil {
			t.Fatal(err)
		}
		coord, err := fed.NewCoordinator(sc.CoordinatorConfig(), sc.Aggregator(t), sc.Validator(t), fed.CoordinatorOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n.SetService(coord)
		dir := t.TempDir()
		errs := make([]error, 2)
		ledgers := make([]*accountant.Ledger, 2)
		var wg sync.WaitGroup
		for i, id := range sc.IDs() {
			ledgers[i], err = accountant.OpenLedger(filepath.Join(dir, id+".ledger"), accountant.Budget{Epsilon: 2.5})
			if err != nil {
				t.Fatal(err)
			}
			defer ledgers[i].Close()
			p, err := fed.NewParty(sc.PartyConfig(i), sc.Learner(t, i), ledgers[i], n.Dial(id), fed.PartyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			wg.Go(func() { _, errs[i] = p.Run(t.Context()) })
		}
		_, cerr := coord.Run(t.Context())
		wg.Wait()
		if !errors.Is(cerr, fed.ErrBudgetExhausted) {
			t.Errorf("Coordinator.Run = %v; want the run stopped for exhausted budgets", cerr)
		}
		for i, err := range errs {
			var be *accountant.BudgetError
			if !errors.Is(err, fed.ErrBudgetExhausted) || !errors.As(err, &be) || be.RequestedEpsilon != 1 || be.RemainingEpsilon != 0.5 {
				t.Errorf("party %d: %v; want a refusal asking ε = 1 with 0.5 remaining", i+1, err)
			}
			if got := ledgers[i].Spent().Epsilon; got != 2 {
				t.Errorf("party %d ledger total ε = %v; want 2", i+1, got)
			}
		}
	})
}
