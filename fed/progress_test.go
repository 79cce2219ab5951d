package fed_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

// TestRunStoppedTellsParties: when a round misses its quorum for good, the
// coordinator tells the parties still there that the run is over, with the
// reason party by party, and they stop at once with ErrRunStopped instead
// of retrying a coordinator that is gone until they give up.
func TestRunStoppedTellsParties(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 3, MinParties: 3, Rounds: 2, Seed: 13, RoundTimeout: roundTimeout}
		c := newCluster(t, sc, inproc.Faults{Crashes: []inproc.Crash{{Party: "p2", Method: "submit", Call: 1}}}, false)
		c.cfg.MaxAttempts = 1
		start := time.Now()
		_, coordDone := c.startCoordinator()
		parties := c.startParties()
		res := <-coordDone
		if !errors.Is(res.err, fed.ErrQuorum) || !strings.Contains(res.err.Error(), "p2 sent nothing by the deadline") {
			t.Errorf("Coordinator.Run error = %v; want ErrQuorum naming p2 as silent", res.err)
		}
		for i, ch := range parties {
			o := <-ch
			if i == 1 {
				continue // crashed
			}
			if !errors.Is(o.err, fed.ErrRunStopped) || !strings.Contains(o.err.Error(), "p2 sent nothing by the deadline") {
				t.Errorf("p%d: Run error %v; want ErrRunStopped with the coordinator's reason", i+1, o.err)
			}
		}
		c.wait()
		if took, bound := time.Since(start), roundTimeout+fed.DefaultPollTimeout; took > bound {
			t.Errorf("the parties stopped %v after the start; want at most the deadline and one poll, %v", took, bound)
		}
	})
}

// TestQuorumErrorNamesRefusals: a round that fails because parties refused
// it says which parties refused and why (the coordinator ends it as soon as
// the quorum is out of reach, whoever has not answered yet).
func TestQuorumErrorNamesRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 3, MinParties: 2, Rounds: 4, Epsilon: 1, Budget: 1.5, Seed: 62, RoundTimeout: roundTimeout}
		c := newCluster(t, sc, inproc.Faults{}, false)
		_, coordDone := c.startCoordinator()
		c.startParties()
		res := <-coordDone
		c.wait()
		if res.err == nil || strings.Count(res.err.Error(), " refused: ") < 2 || !strings.Contains(res.err.Error(), "remaining ε = 0.5") {
			t.Errorf("Coordinator.Run error = %v; want at least two parties named as refusing, with their remaining ε", res.err)
		}
	})
}

// TestCoordinatorReportsJoins: while the coordinator waits for the parties
// to join it reports who is missing each time that changes, and again every
// ProgressEvery; a round waiting for a reply reports who it waits for.
func TestCoordinatorReportsJoins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 3, MinParties: 2, Rounds: 2, Seed: 15, RoundTimeout: roundTimeout}
		c := newCluster(t, sc, inproc.Faults{Crashes: []inproc.Crash{{Party: "p3", Method: "submit", Call: 1}}}, false)
		var mu sync.Mutex
		var got []fed.Waiting
		c.onWait = func(w fed.Waiting) {
			mu.Lock()
			got = append(got, w)
			mu.Unlock()
		}
		c.every = 4 * time.Second
		_, coordDone := c.startCoordinator()
		time.Sleep(time.Second)
		c.startParty(0)
		time.Sleep(5 * time.Second) // one progress tick with p2 and p3 missing
		c.startParty(1)
		time.Sleep(time.Second)
		c.startParty(2)
		if res := <-coordDone; res.err != nil {
			t.Fatalf("Coordinator.Run: %v", res.err)
		}
		c.wait()
		mu.Lock()
		defer mu.Unlock()
		var joins [][]string
		var rounds []fed.Waiting
		for _, w := range got {
			if w.Round == 0 {
				joins = append(joins, w.Missing)
			} else {
				rounds = append(rounds, w)
			}
		}
		want := [][]string{{"p1", "p2", "p3"}, {"p2", "p3"}, {"p2", "p3"}, {"p3"}, nil}
		if !slices.EqualFunc(joins, want, slices.Equal) {
			t.Errorf("missing parties reported while joining: %v; want %v", joins, want)
		}
		// p3 crashed before its first reply: round 1 waits for it until the
		// deadline, and says so every 4 s.
		if len(rounds) < 2 || rounds[0].Round != 1 || !slices.Equal(rounds[0].Missing, []string{"p3"}) || !slices.Equal(rounds[0].Present, []string{"p1", "p2"}) {
			t.Errorf("reports while round 1 waited: %+v; want at least two naming p3 as missing, p1 and p2 as replied", rounds)
		}
		for _, w := range rounds {
			if w.Left > roundTimeout || w.Waited+w.Left != roundTimeout {
				t.Errorf("report %+v: waited + left ≠ the deadline %v", w, roundTimeout)
			}
		}
	})
}

// TestPartyReportsWaits: a party reports that it joined, that it waits for
// a round when the coordinator has no work for it, and each retry with its
// pause and how long it will keep trying.
func TestPartyReportsWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 2, Rounds: 1, Seed: 16, RoundTimeout: roundTimeout}
		c := newCluster(t, sc, inproc.Faults{}, false)
		c.cfg.JoinTimeout = fed.Duration(2 * time.Minute)
		var mu sync.Mutex
		got := map[string][]fed.PartyWait{}
		c.partyWait = func(id string, w fed.PartyWait) {
			mu.Lock()
			got[id] = append(got[id], w)
			mu.Unlock()
		}
		// p1 starts before the coordinator serves: its join is retried.
		p1 := c.startParty(0)
		time.Sleep(time.Second)
		_, coordDone := c.startCoordinator()
		// p2 joins late: p1 polls idle meanwhile.
		time.Sleep(fed.DefaultPollTimeout + time.Second)
		c.startParty(1)
		if res := <-coordDone; res.err != nil {
			t.Fatalf("Coordinator.Run: %v", res.err)
		}
		if o := <-p1; o.err != nil {
			t.Fatalf("p1: %v", o.err)
		}
		c.wait()
		mu.Lock()
		defer mu.Unlock()
		var kinds []fed.WaitKind
		for _, w := range got["p1"] {
			if len(kinds) == 0 || kinds[len(kinds)-1] != w.Kind {
				kinds = append(kinds, w.Kind)
			}
		}
		if want := []fed.WaitKind{fed.WaitRetry, fed.WaitJoined, fed.WaitIdle}; !slices.Equal(kinds, want) {
			t.Errorf("p1's waits: %v; want retries, joined, idle (%v)", kinds, want)
		}
		for _, w := range got["p1"] {
			switch w.Kind {
			case fed.WaitRetry:
				if w.Retry <= 0 || w.GiveUp <= 0 || w.GiveUp > fed.DefaultGiveUp || w.Err == nil || !errors.Is(w.Err, fed.ErrUnavailable) {
					t.Errorf("retry report %+v; want a pause, time left and the error", w)
				}
			case fed.WaitJoined:
				if w.Parties != 2 || w.Round != 1 {
					t.Errorf("joined report %+v; want 2 parties, waiting for round 1", w)
				}
			case fed.WaitIdle:
				if w.Round != 1 || w.Waited <= 0 {
					t.Errorf("idle report %+v; want round 1 and the time waited", w)
				}
			}
		}
	})
}
