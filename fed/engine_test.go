package fed_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

func TestRunCompletes(t *testing.T) {
	sc := fedtest.Scenario{Parties: 3, Rounds: 4, Epsilon: 0.5, Seed: 7}
	out := fedtest.Run(t, fedtest.InProc(inproc.Faults{}), sc)
	if out.Result.Rounds != 4 {
		t.Errorf("Result.Rounds = %d; want 4", out.Result.Rounds)
	}
	if len(out.Records) != 4 {
		t.Fatalf("got %d round records; want 4", len(out.Records))
	}
	for i, r := range out.Records {
		if r.Round != i+1 || !r.Committed || len(r.Replied) != 3 {
			t.Errorf("record %d = round %d committed %v replied %v; want round %d committed by 3", i, r.Round, r.Committed, r.Replied, i+1)
		}
		for _, tr := range r.Traffic {
			if tr.Up == 0 || tr.Down == 0 {
				t.Errorf("round %d: traffic of %s = %+v; want bytes both ways", r.Round, tr.Party, tr)
			}
		}
	}
	for i, p := range out.Parties {
		if !bytes.Equal(p.Final, out.Final) {
			t.Errorf("party %d final broadcast differs from the coordinator's", i)
		}
	}
	for i, l := range out.Ledgers {
		if len(l) != 4 {
			t.Errorf("party %d ledger has %d entries; want 4", i, len(l))
		}
	}
	again := fedtest.Run(t, fedtest.InProc(inproc.Faults{}), sc)
	if !bytes.Equal(again.Final, out.Final) {
		t.Errorf("second run with seed %d gave a different final broadcast", sc.Seed)
	}
}

// lateMeter is the in-process transport with a service whose byte reports
// arrive late, as they do when the coordinator's round loop runs before the
// goroutine that served the round's last reply gets to report its bytes.
type lateMeter struct{ delay time.Duration }

func (lateMeter) String() string { return "inproc with late byte reports" }

func (tr lateMeter) Connect(svc fed.Service, parties []string, val fed.Validator) (func(string) (fed.Protocol, error), func(), error) {
	return fedtest.InProc(inproc.Faults{}).Connect(lateService{svc, tr.delay}, parties, val)
}

type lateService struct {
	fed.Service
	delay time.Duration
}

func (s lateService) Traffic(party string, round, up, down int) {
	time.Sleep(s.delay)
	s.Service.Traffic(party, round, up, down)
}

// TestTrafficCountsTheClosingReply checks that a round's byte counts
// include the reply that completed the round even when the transport
// reports its bytes after the coordinator saw the reply: the counts must
// equal those of a run whose reports come at once.
func TestTrafficCountsTheClosingReply(t *testing.T) {
	sc := fedtest.Scenario{Parties: 3, Rounds: 3, Epsilon: 0.5, Seed: 11}
	want := fedtest.Run(t, fedtest.InProc(inproc.Faults{}), sc)
	got := fedtest.Run(t, lateMeter{20 * time.Millisecond}, sc)
	if len(got.Records) != len(want.Records) {
		t.Fatalf("late reports: %d round records; want %d", len(got.Records), len(want.Records))
	}
	for i := range want.Records {
		if g, w := got.Records[i].Traffic, want.Records[i].Traffic; !slices.Equal(g, w) {
			t.Errorf("round %d: byte counts with late reports %+v; want %+v", want.Records[i].Round, g, w)
		}
	}
}
