package fed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/fed/secagg"
)

// secureFed is a federation of IntSum parties under secure aggregation
// over the in-process transport, whose coordinator the test can crash and
// restart.
type secureFed struct {
	t      *testing.T
	setup  fed.Setup
	params fedtest.IntSumParams
	cfg    fed.CoordinatorConfig
	net    *inproc.Network
	dir    string
	wg     sync.WaitGroup

	mu      sync.Mutex
	aggs    []*fedtest.IntSumAggregator
	records []fed.RoundRecord
	kinds   map[string][]secagg.Kind // requests each party received
	replies map[string][][]byte      // replies each party sent, by party and round
}

func newSecureFed(t *testing.T, n, threshold int, p fedtest.IntSumParams, faults inproc.Faults, durable bool) *secureFed {
	t.Helper()
	raw, _ := json.Marshal(p)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	net, err := inproc.New(nil, faults)
	if err != nil {
		t.Fatal(err)
	}
	f := &secureFed{t: t, params: p, net: net, dir: t.TempDir(), kinds: map[string][]secagg.Kind{}, replies: map[string][][]byte{},
		setup: fed.Setup{Run: "secure", Parties: ids, Seed: 5, Params: raw}}
	f.cfg = fed.CoordinatorConfig{Run: "secure", Algorithm: fedtest.IntSumName, Parties: ids, MaxAttempts: 2,
		RoundTimeout: fed.Duration(roundTimeout), SecureAggregation: &fed.SecureAggregation{Threshold: threshold}}
	if durable {
		f.cfg.StateDir = filepath.Join(f.dir, "coordinator")
	}
	return f
}

func (f *secureFed) startCoordinator(crash func(fed.CrashPoint, int) error) <-chan error {
	f.t.Helper()
	a, err := fedtest.IntSum.NewAggregator(f.setup)
	if err != nil {
		f.t.Fatal(err)
	}
	val, _ := fedtest.IntSum.NewValidator(f.setup)
	coord, err := fed.NewCoordinator(f.cfg, a, val, fed.CoordinatorOptions{
		OnRound: func(r fed.RoundRecord) { f.mu.Lock(); f.records = append(f.records, r); f.mu.Unlock() },
		Crash:   crash,
	})
	if err != nil {
		f.t.Fatalf("NewCoordinator: %v", err)
	}
	f.mu.Lock()
	f.aggs = append(f.aggs, a.(*fedtest.IntSumAggregator))
	f.mu.Unlock()
	f.net.SetService(coord)
	ch := make(chan error, 1)
	f.wg.Go(func() { _, err := coord.Run(f.t.Context()); ch <- err })
	return ch
}

// spyConn records the secure aggregation requests a party receives and
// the replies it sends.
type spyConn struct {
	fed.Protocol
	f  *secureFed
	id string
}

func (s spyConn) Next(ctx context.Context, r *fed.TaskRequest) (*fed.Task, error) {
	t, err := s.Protocol.Next(ctx, r)
	if err == nil && len(t.SecAgg) > 0 {
		k, _ := secagg.MessageKind(t.SecAgg)
		s.f.mu.Lock()
		s.f.kinds[s.id] = append(s.f.kinds[s.id], k)
		s.f.mu.Unlock()
	}
	return t, err
}

func (s spyConn) Submit(ctx context.Context, sub *fed.Submission) (*fed.Receipt, error) {
	s.f.mu.Lock()
	key := fmt.Sprintf("%s round %d", s.id, sub.Round)
	s.f.replies[key] = append(s.f.replies[key], sub.Payload)
	s.f.mu.Unlock()
	return s.Protocol.Submit(ctx, sub)
}

func (f *secureFed) startParties() {
	f.t.Helper()
	for i, id := range f.setup.Parties {
		l, err := fedtest.IntSum.NewLearner(f.setup, i, nil)
		if err != nil {
			f.t.Fatal(err)
		}
		cfg := fed.PartyConfig{Run: "secure", ID: id, Algorithm: fedtest.IntSumName, SecureAggregation: &fed.SecureAggregation{Threshold: f.cfg.SecureAggregation.Threshold},
			StateDir: filepath.Join(f.dir, id)}
		p, err := fed.NewParty(cfg, l, nil, spyConn{f.net.Dial(id), f, id}, fed.PartyOptions{})
		if err != nil {
			f.t.Fatalf("NewParty: %v", err)
		}
		f.wg.Go(func() {
			if _, err := p.Run(f.t.Context()); err != nil && !errors.Is(err, inproc.ErrCrashed) && f.t.Context().Err() == nil {
				f.t.Logf("party %s: %v", id, err)
			}
		})
	}
}

// checkSums checks that every aggregated sum is the exact plaintext sum of
// the updates of the parties it includes.
func (f *secureFed) checkSums(a *fedtest.IntSumAggregator) {
	f.t.Helper()
	for k, r := range a.Rounds {
		want := make([]int64, f.params.Len)
		for _, id := range a.Included[k] {
			for i, x := range fedtest.IntSumVector(f.params, f.setup.Seed, id, r) {
				want[i] += x
			}
		}
		if !slices.Equal(a.Sums[k], want) {
			f.t.Errorf("round %d: unmasked sum %v, plaintext sum of %v is %v", r, a.Sums[k], a.Included[k], want)
		}
	}
}

var intParams = fedtest.IntSumParams{Len: 16, Rounds: 2, Max: 1 << 20}

// TestSecureAggregationDropouts checks, through the engine, that masks cancel:
// n = 5, t = 3, with 0, 1 and 2 parties killed after they sent their
// masked vector (before unmasking) or after they sent their shares
// (before masking), every round's unmasked sum equals the plaintext sum
// of the parties it includes.
func TestSecureAggregationDropouts(t *testing.T) {
	killed := func(delivered bool, ids ...string) []inproc.Crash {
		var cs []inproc.Crash
		for _, id := range ids {
			// Submit 3 carries the masked vector.
			cs = append(cs, inproc.Crash{Party: id, Method: "submit", Call: 3, Delivered: delivered})
		}
		return cs
	}
	all := []string{"p1", "p2", "p3", "p4", "p5"}
	for _, tc := range []struct {
		name    string
		crashes []inproc.Crash
		want    [][]string // included, per round
	}{
		{"no dropout", nil, [][]string{all, all}},
		{"one after masking", killed(true, "p2"), [][]string{all, {"p1", "p3", "p4", "p5"}}},
		{"two after masking", killed(true, "p2", "p5"), [][]string{all, {"p1", "p3", "p4"}}},
		{"one before masking", killed(false, "p4"), [][]string{{"p1", "p2", "p3", "p5"}, {"p1", "p2", "p3", "p5"}}},
		{"two before masking", killed(false, "p1", "p4"), [][]string{{"p2", "p3", "p5"}, {"p2", "p3", "p5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newSecureFed(t, 5, 3, intParams, inproc.Faults{Crashes: tc.crashes}, false)
				done := f.startCoordinator(nil)
				f.startParties()
				err := <-done
				f.wg.Wait()
				if err != nil {
					t.Fatalf("coordinator: %v", err)
				}
				a := f.aggs[0]
				f.checkSums(a)
				if !slices.EqualFunc(a.Included, tc.want, slices.Equal) {
					t.Errorf("included %v; want %v", a.Included, tc.want)
				}
				for _, r := range f.records {
					if r.Secure == nil || r.Secure.Threshold != 3 || r.Secure.Stages != 4 {
						t.Errorf("round %d record: secure %+v; want threshold 3, 4 stages", r.Round, r.Secure)
					}
				}
			})
		})
	}
}

// TestSecureAggregationBelowThreshold checks, through the engine, that with
// fewer than t parties left the attempt aborts, nothing is aggregated, and
// no party receives an unmask request when the loss happens before masking.
func TestSecureAggregationBelowThreshold(t *testing.T) {
	for _, tc := range []struct {
		name      string
		delivered bool // the killed parties' masked vectors arrived
		stages    int  // stages the first attempt completed
	}{
		{"before masking", false, 2},
		{"after masking", true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var crashes []inproc.Crash
				for _, id := range []string{"p1", "p3", "p4"} {
					crashes = append(crashes, inproc.Crash{Party: id, Method: "submit", Call: 3, Delivered: tc.delivered})
				}
				f := newSecureFed(t, 5, 3, intParams, inproc.Faults{Crashes: crashes}, false)
				done := f.startCoordinator(nil)
				f.startParties()
				err := <-done
				f.wg.Wait()
				var re *fed.RoundError
				if !errors.As(err, &re) || !errors.Is(err, fed.ErrQuorum) || re.Round != 1 {
					t.Fatalf("coordinator: %v; want a round 1 error wrapping ErrQuorum", err)
				}
				if a := f.aggs[0]; len(a.Sums) != 0 {
					t.Errorf("aggregated %d sums; want none", len(a.Sums))
				}
				if len(f.records) == 0 || f.records[0].Committed || f.records[0].Err == "" || f.records[0].Secure.Stages != tc.stages {
					t.Fatalf("first record %+v; want an aborted attempt after %d stages", f.records, tc.stages)
				}
				if tc.delivered {
					// p2 and p5 revealed their shares in attempt 1; they
					// take part in no other attempt at round 1.
					if len(f.records) < 2 || !slices.Equal(f.records[1].Refused, []string{"p2", "p5"}) {
						t.Errorf("second attempt refused by %v; want [p2 p5], who revealed in the first", f.records[1:])
					}
				} else {
					for id, ks := range f.kinds {
						if slices.Contains(ks, secagg.KindUnmask) {
							t.Errorf("party %s received an unmask request", id)
						}
					}
				}
			})
		})
	}
}

// TestSecureAggregationCoordinatorRestart: the coordinator is killed in
// the middle of the protocol — after the masked vectors were collected
// and checkpointed, or while the reveal replies come in — and a new one
// resumes from its checkpoint, resends the pending requests, and the
// parties answer a resent request with the same bytes.
func TestSecureAggregationCoordinatorRestart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		point fed.CrashPoint
	}{
		{"after masked stage", fed.CrashAfterSecureStage},
		{"mid reveal", fed.CrashMidCollection},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newSecureFed(t, 5, 3, intParams, inproc.Faults{}, true)
				stages, crashed := 0, false
				crash := func(p fed.CrashPoint, round int) error {
					if round != 1 || crashed {
						return nil
					}
					if p == fed.CrashAfterSecureStage {
						stages++
					}
					if p == tc.point && stages == 3 {
						crashed = true
						return errCrash
					}
					return nil
				}
				first := f.startCoordinator(crash)
				f.startParties()
				if err := <-first; !errors.Is(err, errCrash) {
					t.Fatalf("first coordinator: %v; want the injected crash", err)
				}
				f.net.SetService(nil)
				time.Sleep(time.Second)
				second := f.startCoordinator(nil)
				err := <-second
				f.wg.Wait()
				if err != nil {
					t.Fatalf("restarted coordinator: %v", err)
				}
				a := f.aggs[1]
				f.checkSums(a)
				all := []string{"p1", "p2", "p3", "p4", "p5"}
				if !slices.EqualFunc(a.Included, [][]string{all, all}, slices.Equal) {
					t.Errorf("included %v; want every party in both rounds", a.Included)
				}
				var want []int64
				for r := 1; r <= intParams.Rounds; r++ {
					want = sumOf(want, f, all, r)
				}
				if got := a.Total(); !slices.Equal(got, want) {
					t.Errorf("total %v; want %v", got, want)
				}
				// A request sent again got the bytes of the first reply.
				resent := 0
				for key, rs := range f.replies {
					var reveals [][]byte
					for _, b := range rs {
						if k, _ := secagg.MessageKind(b); k == secagg.KindReveal {
							reveals = append(reveals, b)
						}
					}
					for _, b := range reveals[1:] {
						resent++
						if string(b) != string(reveals[0]) {
							t.Errorf("%s: a resent reveal differs from the first", key)
						}
					}
				}
				if tc.point == fed.CrashMidCollection && resent == 0 {
					t.Errorf("no party answered the unmask request twice; the test crashed too early")
				}
			})
		})
	}
}

func sumOf(acc []int64, f *secureFed, ids []string, round int) []int64 {
	if acc == nil {
		acc = make([]int64, f.params.Len)
	}
	for _, id := range ids {
		for i, x := range fedtest.IntSumVector(f.params, f.setup.Seed, id, round) {
			acc[i] += x
		}
	}
	return acc
}

// TestSecureAggregationJoinMismatch: a party whose secure aggregation
// setting differs from the coordinator's is refused at join.
func TestSecureAggregationJoinMismatch(t *testing.T) {
	f := newSecureFed(t, 3, 2, intParams, inproc.Faults{}, false)
	a, _ := fedtest.IntSum.NewAggregator(f.setup)
	val, _ := fedtest.IntSum.NewValidator(f.setup)
	coord, err := fed.NewCoordinator(f.cfg, a, val, fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		threshold int
		ok        bool
	}{{0, false}, {3, false}, {2, true}} {
		_, err := coord.Join(t.Context(), &fed.JoinRequest{Run: "secure", Party: "p1", Algorithm: fedtest.IntSumName, Protocol: fed.ProtocolVersion, SecureThreshold: tc.threshold})
		if got := err == nil; got != tc.ok || (err != nil && !errors.Is(err, fed.ErrAlgorithmMismatch)) {
			t.Errorf("join with threshold %d: %v; want ok = %v (else ErrAlgorithmMismatch)", tc.threshold, err, tc.ok)
		}
	}
	// An algorithm that does not declare its update a sum is refused.
	sum, _ := fedtest.Sum.NewAggregator(f.setup)
	sval, _ := fedtest.Sum.NewValidator(f.setup)
	if _, err := fed.NewCoordinator(f.cfg, sum, sval, fed.CoordinatorOptions{}); err == nil {
		t.Errorf("NewCoordinator with a plain aggregator under secure aggregation: nil error")
	}
}
