package fed_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
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

const roundTimeout = 10 * time.Second

// TestDropoutWithinQuorum checks a dropout the quorum absorbs: with n = 5 and quorum 3,
// two parties die after receiving the round's task; the round completes at
// its deadline with exactly the three replies, and records the two as
// dropped. Later rounds do not wait for them.
func TestDropoutWithinQuorum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 5, MinParties: 3, Rounds: 3, Epsilon: 1, Seed: 11, RoundTimeout: roundTimeout}
		c := newCluster(t, sc, inproc.Faults{Crashes: []inproc.Crash{
			{Party: "p4", Method: "submit", Call: 1}, {Party: "p5", Method: "submit", Call: 1},
		}}, false)
		_, coordDone := c.startCoordinator()
		parties := c.startParties()
		res := <-coordDone
		c.wait()
		if res.err != nil || res.v.Rounds != 3 {
			t.Fatalf("Coordinator.Run = %v, %v; want 3 rounds, nil", res.v, res.err)
		}
		for i, ch := range parties {
			o := <-ch
			if killed := i >= 3; killed != errors.Is(o.err, inproc.ErrCrashed) {
				t.Errorf("party %d: Run error %v; want crashed = %v", i+1, o.err, killed)
			}
		}
		recs := c.committed()
		r1 := recs[0]
		if want := []string{"p1", "p2", "p3"}; !slices.Equal(r1.Replied, want) || !slices.Equal(c.aggs[0].Inputs[0], want) {
			t.Errorf("round 1 replied %v, aggregated %v; want %v", r1.Replied, c.aggs[0].Inputs[0], want)
		}
		if want := []string{"p4", "p5"}; !slices.Equal(r1.Dropped, want) {
			t.Errorf("round 1 dropped %v; want %v", r1.Dropped, want)
		}
		if grace := time.Second; r1.Duration < roundTimeout || r1.Duration > roundTimeout+grace {
			t.Errorf("round 1 took %v; want the deadline %v (+ %v grace)", r1.Duration, roundTimeout, grace)
		}
		for _, r := range recs[1:] {
			if len(r.Replied) != 3 || len(r.Dropped) != 0 || r.Duration >= roundTimeout {
				t.Errorf("round %d: replied %v, dropped %v in %v; want 3 replies without waiting for the dropped", r.Round, r.Replied, r.Dropped, r.Duration)
			}
		}
	})
}

// TestDropoutBelowQuorum checks a dropout below the quorum: three of five
// parties die, so the round is aborted — nothing aggregated, the reason
// recorded — and the coordinator stays up; the parties restart, resend the
// bytes they had cached, and the retried round completes. Every party is
// charged exactly once for the round.
func TestDropoutBelowQuorum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 5, MinParties: 3, Rounds: 2, Epsilon: 1, Seed: 12, RoundTimeout: roundTimeout}
		c := newCluster(t, sc, inproc.Faults{Crashes: []inproc.Crash{
			{Party: "p3", Method: "submit", Call: 1}, {Party: "p4", Method: "submit", Call: 1}, {Party: "p5", Method: "submit", Call: 1},
		}}, true)
		c.cfg.MaxAttempts = 2
		aborted := make(chan fed.RoundRecord, 1)
		resume := make(chan struct{})
		c.onRound = func(r fed.RoundRecord) {
			if !r.Committed {
				aborted <- r
				<-resume // the next attempt opens once the parties are back
			}
		}
		_, coordDone := c.startCoordinator()
		parties := c.startParties()
		rec := <-aborted
		if len(c.aggs[0].Aggregated) != 0 {
			t.Errorf("aggregator called for rounds %v after an aborted round; want none", c.aggs[0].Aggregated)
		}
		if !strings.Contains(rec.Err, "quorum") || !slices.Equal(rec.Replied, []string{"p1", "p2"}) || !slices.Equal(rec.Dropped, []string{"p3", "p4", "p5"}) {
			t.Errorf("aborted record: err %q, replied %v, dropped %v; want a quorum error, p1 p2 replied, p3 p4 p5 dropped", rec.Err, rec.Replied, rec.Dropped)
		}
		for i := 2; i < 5; i++ {
			if o := <-parties[i]; !errors.Is(o.err, inproc.ErrCrashed) {
				t.Fatalf("party %d: %v; want crashed", i+1, o.err)
			}
			parties[i] = c.startParty(i)
		}
		synctest.Wait()
		close(resume)
		res := <-coordDone
		c.wait()
		if res.err != nil || res.v.Rounds != 2 {
			t.Fatalf("Coordinator.Run = %v, %v; want 2 rounds after the retry", res.v, res.err)
		}
		if r := c.committed()[0]; r.Round != 1 || r.Attempt != 2 || len(r.Replied) != 5 {
			t.Errorf("first committed: round %d attempt %d replied %v; want round 1 attempt 2 with all five", r.Round, r.Attempt, r.Replied)
		}
		for i, l := range c.ledgers {
			if got := releases(l); !slices.Equal(got, []string{"round-1", "round-2"}) {
				t.Errorf("party %d ledger: %v; want one charge per round", i+1, got)
			}
		}
		for i := 2; i < 5; i++ {
			if n := c.learners[i][1].Learned; n != 1 {
				t.Errorf("restarted party %d computed %d updates; want 1 (round 1 resent from its cache)", i+1, n)
			}
		}
	})
}

// TestQuorumLostStopsRun: without retries an aborted round ends Run with a
// *RoundError wrapping ErrQuorum, and nothing is aggregated.
func TestQuorumLostStopsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 3, MinParties: 3, Rounds: 2, Seed: 13, RoundTimeout: roundTimeout}
		c := newCluster(t, sc, inproc.Faults{Crashes: []inproc.Crash{{Party: "p2", Method: "submit", Call: 1}}}, false)
		c.cfg.MaxAttempts = 1
		_, coordDone := c.startCoordinator()
		c.startParties()
		res := <-coordDone
		c.wait()
		var re *fed.RoundError
		if !errors.As(res.err, &re) || !errors.Is(res.err, fed.ErrQuorum) || re.Round != 1 {
			t.Fatalf("Coordinator.Run error = %v; want *RoundError for round 1 wrapping ErrQuorum", res.err)
		}
		if len(c.aggs[0].Aggregated) != 0 {
			t.Errorf("aggregated rounds %v; want none", c.aggs[0].Aggregated)
		}
	})
}

// delayConn delays one party's first Submit by a fixed time and keeps its
// outcome.
type delayConn struct {
	fed.Protocol
	delay time.Duration
	mu    sync.Mutex
	n     int
	errs  []error
}

func (d *delayConn) Submit(ctx context.Context, s *fed.Submission) (*fed.Receipt, error) {
	d.mu.Lock()
	d.n++
	first := d.n == 1
	d.mu.Unlock()
	if first {
		time.Sleep(d.delay)
	}
	r, err := d.Protocol.Submit(ctx, s)
	d.mu.Lock()
	d.errs = append(d.errs, err)
	d.mu.Unlock()
	return r, err
}

// TestStragglerExcluded checks late replies: a reply that
// arrives after the deadline is refused as stale and not aggregated.
func TestStragglerExcluded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 3, MinParties: 2, Rounds: 2, Epsilon: 1, Seed: 14, RoundTimeout: roundTimeout}
		c := newCluster(t, sc, inproc.Faults{}, false)
		_, coordDone := c.startCoordinator()
		c.startParty(0)
		c.startParty(1)
		slow := &delayConn{delay: 2 * roundTimeout}
		c.startPartyWith(2, func(l fed.Learner) fed.Learner { return l }, func(p fed.Protocol) fed.Protocol { slow.Protocol = p; return slow })
		res := <-coordDone
		c.wait()
		if res.err != nil {
			t.Fatalf("Coordinator.Run: %v", res.err)
		}
		if got := c.aggs[0].Inputs[0]; !slices.Equal(got, []string{"p1", "p2"}) {
			t.Errorf("round 1 aggregated %v; want p1 p2 only", got)
		}
		if len(slow.errs) == 0 || !errors.Is(slow.errs[0], fed.ErrStaleRound) {
			t.Errorf("late Submit returned %v; want ErrStaleRound", slow.errs)
		}
		if got := c.committed()[0].Dropped; !slices.Equal(got, []string{"p3"}) {
			t.Errorf("round 1 dropped %v; want p3", got)
		}
	})
}

// releases returns the round part of each release a ledger recorded.
func releases(l *fedtest.Ledger) []string {
	var out []string
	for _, e := range l.Entries() {
		out = append(out, e.Release[strings.LastIndex(e.Release, "/")+1:])
	}
	return out
}

// uninterrupted runs sc to the end without faults and returns the final
// broadcast.
func uninterrupted(t *testing.T, sc fedtest.Scenario) []byte {
	t.Helper()
	var final []byte
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, sc, inproc.Faults{}, true)
		_, done := c.startCoordinator()
		c.startParties()
		res := <-done
		c.wait()
		if res.err != nil {
			t.Fatalf("uninterrupted run: %v", res.err)
		}
		final = res.v.Final.Payload
	})
	return final
}

// TestCoordinatorCrashResume checks crash recovery: the coordinator is
// killed at each of the four boundaries of round 2 and restarted on the same
// state directory. The run completes with exactly T committed rounds, round
// ids strictly increasing and none committed twice, every party charged once
// per round, and the same final model as an uninterrupted run.
func TestCoordinatorCrashResume(t *testing.T) {
	sc := fedtest.Scenario{Parties: 3, Rounds: 4, Epsilon: 0.5, Seed: 21, RoundTimeout: roundTimeout}
	want := uninterrupted(t, sc)
	for _, point := range []fed.CrashPoint{fed.CrashAfterRoundStart, fed.CrashMidCollection, fed.CrashAfterAggregate, fed.CrashAfterPersist} {
		t.Run(point.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, sc, inproc.Faults{}, true)
				crashed := false
				c.crash = func(p fed.CrashPoint, round int) error {
					if p == point && round == 2 && !crashed {
						crashed = true
						return errCrash
					}
					return nil
				}
				_, first := c.startCoordinator()
				c.startParties()
				if res := <-first; !errors.Is(res.err, errCrash) {
					t.Fatalf("first coordinator: %v, %v; want the injected crash", res.v, res.err)
				}
				c.net.SetService(nil)
				time.Sleep(time.Second) // parties find the coordinator gone
				_, second := c.startCoordinator()
				res := <-second
				c.wait()
				if res.err != nil || res.v.Rounds != sc.Rounds {
					t.Fatalf("restarted coordinator: %v, %v; want %d rounds", res.v, res.err, sc.Rounds)
				}
				if !bytes.Equal(res.v.Final.Payload, want) {
					t.Errorf("final model differs from the uninterrupted run (seed %d)", sc.Seed)
				}
				last := 0
				for _, r := range c.allRecords() {
					if r.Committed && !r.Resumed {
						if r.Round <= last {
							t.Errorf("round %d committed after round %d", r.Round, last)
						}
						last = r.Round
					}
				}
				var rounds []int
				for _, r := range c.committed() {
					rounds = append(rounds, r.Round)
				}
				if !slices.Equal(rounds, []int{1, 2, 3, 4}) {
					t.Errorf("committed rounds %v; want 1 2 3 4", rounds)
				}
				for i, l := range c.ledgers {
					if got := releases(l); !slices.Equal(got, []string{"round-1", "round-2", "round-3", "round-4"}) {
						t.Errorf("party %d ledger: %v; want one charge per round", i+1, got)
					}
				}
			})
		})
	}
}

// recordConn keeps every payload a party submits.
type recordConn struct {
	fed.Protocol
	mu       sync.Mutex
	payloads map[int][]byte
}

func (r *recordConn) Submit(ctx context.Context, s *fed.Submission) (*fed.Receipt, error) {
	r.mu.Lock()
	if r.payloads == nil {
		r.payloads = map[int][]byte{}
	}
	if old, ok := r.payloads[s.Round]; ok && !bytes.Equal(old, s.Payload) {
		r.payloads[-s.Round] = s.Payload // a different resend: remembered to fail the test
	} else {
		r.payloads[s.Round] = slices.Clone(s.Payload)
	}
	r.mu.Unlock()
	return r.Protocol.Submit(ctx, s)
}

// TestPartyCrashResend checks that a restarted party never pays twice: a party is killed
// after charging its ledger and caching its round-2 update, before (or
// after) the update reaches the coordinator. After restart the ledger
// shows the charge, the party rejoins, resends the identical bytes without
// computing them again, and the run ends with the uninterrupted run's model.
func TestPartyCrashResend(t *testing.T) {
	sc := fedtest.Scenario{Parties: 3, Rounds: 3, Epsilon: 0.5, Seed: 31, RoundTimeout: roundTimeout}
	want := uninterrupted(t, sc)
	for _, delivered := range []bool{false, true} {
		name := map[bool]string{false: "before delivery", true: "after delivery"}[delivered]
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, sc, inproc.Faults{Crashes: []inproc.Crash{{Party: "p2", Method: "submit", Call: 2, Delivered: delivered}}}, true)
				_, done := c.startCoordinator()
				c.startParty(0)
				c.startParty(2)
				var before, after recordConn
				id := func(l fed.Learner) fed.Learner { return l }
				killed := c.startPartyWith(1, id, func(p fed.Protocol) fed.Protocol { before.Protocol = p; return &before })
				if o := <-killed; !errors.Is(o.err, inproc.ErrCrashed) {
					t.Fatalf("party p2: %v; want crashed", o.err)
				}
				ledger, err := fedtest.OpenLedger(1e300, filepath.Join(c.dir, "p2.ledger"))
				if err != nil {
					t.Fatal(err)
				}
				if got := releases(ledger); !slices.Equal(got, []string{"round-1", "round-2"}) {
					t.Errorf("ledger after the kill: %v; want the round-2 charge recorded", got)
				}
				c.startPartyWith(1, id, func(p fed.Protocol) fed.Protocol { after.Protocol = p; return &after })
				res := <-done
				c.wait()
				if res.err != nil {
					t.Fatalf("Coordinator.Run: %v", res.err)
				}
				if !bytes.Equal(res.v.Final.Payload, want) {
					t.Errorf("final model differs from the uninterrupted run (seed %d)", sc.Seed)
				}
				if got := releases(c.ledgers[1]); !slices.Equal(got, []string{"round-1", "round-2", "round-3"}) {
					t.Errorf("p2 ledger: %v; want one charge per round", got)
				}
				if n := c.learners[1][1].Learned; n != 1 {
					t.Errorf("restarted p2 computed %d updates; want 1 (round 3 only)", n)
				}
				if _, bad := after.payloads[-2]; bad {
					t.Error("restarted p2 sent different bytes for round 2")
				}
				if p, ok := after.payloads[2]; !delivered && (!ok || !bytes.Equal(p, before.payloads[2])) {
					t.Errorf("restarted p2 resent round 2: %v; want the identical cached bytes", ok)
				}
				if got := c.aggs[0].Inputs[1]; !slices.Equal(got, []string{"p1", "p2", "p3"}) {
					t.Errorf("round 2 aggregated %v; want every party, p2's update among them", got)
				}
			})
		})
	}
}

// TestCorruptCheckpoint checks bad checkpoints: a truncated, bit-flipped or
// foreign checkpoint stops a restarting coordinator at once with an error
// naming the file, never a hang or a silent restart from scratch.
func TestCorruptCheckpoint(t *testing.T) {
	sc := fedtest.Scenario{Parties: 2, Rounds: 2, Seed: 41}
	dir := t.TempDir()
	var good []byte
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, sc, inproc.Faults{}, true)
		c.cfg.StateDir = dir
		_, done := c.startCoordinator()
		c.startParties()
		if res := <-done; res.err != nil {
			t.Fatal(res.err)
		}
		c.wait()
	})
	path := filepath.Join(dir, "checkpoint")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte { b := slices.Clone(good); b[i] ^= 0x10; return b }
	tests := []struct {
		name string
		data []byte
		cfg  func(*fed.CoordinatorConfig)
	}{
		{name: "empty", data: nil},
		{name: "truncated", data: good[:len(good)/2]},
		{name: "last byte cut", data: good[:len(good)-1]},
		{name: "bit flip in header", data: flip(9)},
		{name: "bit flip in state", data: flip(len(good) / 2)},
		{name: "bit flip in checksum", data: flip(len(good) - 1)},
		{name: "other run", data: good, cfg: func(c *fed.CoordinatorConfig) { c.Run = "another-run" }},
		{name: "other parties", data: good, cfg: func(c *fed.CoordinatorConfig) { c.Parties = []string{"p1", "p9"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "checkpoint"), tt.data, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := sc.CoordinatorConfig()
			cfg.StateDir = d
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			start := time.Now()
			_, err := fed.NewCoordinator(cfg, sc.Aggregator(t), sc.Validator(t), fed.CoordinatorOptions{})
			if !errors.Is(err, fed.ErrCheckpoint) || !strings.Contains(err.Error(), filepath.Join(d, "checkpoint")) {
				t.Errorf("NewCoordinator on a %s checkpoint = %v; want ErrCheckpoint naming the file", tt.name, err)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("NewCoordinator took %v to fail; want < 5s", el)
			}
		})
	}
	cfg := sc.CoordinatorConfig()
	cfg.StateDir = dir
	c, err := fed.NewCoordinator(cfg, sc.Aggregator(t), sc.Validator(t), fed.CoordinatorOptions{})
	if err != nil || c.Committed() != 2 {
		t.Errorf("NewCoordinator on the good checkpoint: committed %v, %v; want 2, nil", c, err)
	}
}
