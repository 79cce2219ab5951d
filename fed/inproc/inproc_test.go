package inproc_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/internal/fedpb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeService answers every call with fixed replies and records traffic.
type fakeService struct {
	peers   []string
	traffic [][3]int // round, up, down
}

func (f *fakeService) Join(ctx context.Context, r *fed.JoinRequest) (*fed.JoinReply, error) {
	p, _ := fed.PeerFromContext(ctx)
	f.peers = append(f.peers, p)
	return &fed.JoinReply{Run: r.Run, Algorithm: r.Algorithm, Parties: 3, Round: 0}, nil
}

func (f *fakeService) Next(ctx context.Context, r *fed.TaskRequest) (*fed.Task, error) {
	return &fed.Task{Run: r.Run, Round: 4, Attempt: 1, Token: bytes.Repeat([]byte{1}, fed.TokenSize), Broadcast: []byte("broadcast")}, nil
}

func (f *fakeService) Submit(ctx context.Context, s *fed.Submission) (*fed.Receipt, error) {
	if len(s.Payload) == 0 {
		return nil, fed.ErrInvalidUpdate
	}
	return &fed.Receipt{Round: s.Round}, nil
}

func (f *fakeService) Traffic(party string, round, up, down int) {
	f.traffic = append(f.traffic, [3]int{round, up, down})
}

// TestBytesAreWireBytes checks that the traffic the transport reports is the
// size of the encoded messages, attributed to the message's round, and that
// the coordinator sees the dialed party as the authenticated peer.
func TestBytesAreWireBytes(t *testing.T) {
	svc := &fakeService{}
	n, err := inproc.New(svc, inproc.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	c := n.Dial("p1")
	ctx := context.Background()
	join := &fed.JoinRequest{Run: "r", Party: "p1", Algorithm: "a", Protocol: 1}
	if _, err := c.Join(ctx, join); err != nil {
		t.Fatal(err)
	}
	task, err := c.Next(ctx, &fed.TaskRequest{Run: "r", Party: "p1"})
	if err != nil || string(task.Broadcast) != "broadcast" {
		t.Fatalf("Next = %+v, %v", task, err)
	}
	sub := &fed.Submission{Run: "r", Party: "p1", Round: 4, Token: task.Token, Payload: make([]byte, 100)}
	if _, err := c.Submit(ctx, sub); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Submit(ctx, &fed.Submission{Run: "r", Party: "p1", Round: 4, Token: task.Token}); !errors.Is(err, fed.ErrInvalidUpdate) {
		t.Errorf("Submit without payload = %v; want the service's ErrInvalidUpdate passed through", err)
	}
	enc := func(b []byte, err error) int {
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	want := [][3]int{
		{0, enc(fedpb.Marshal(fedpb.FromJoinRequest(join))), enc(fedpb.Marshal(fedpb.FromJoinReply(&fed.JoinReply{Run: "r", Algorithm: "a", Parties: 3})))},
		{4, enc(fedpb.Marshal(fedpb.FromTaskRequest(&fed.TaskRequest{Run: "r", Party: "p1"}))), enc(fedpb.Marshal(fedpb.FromTask(task)))},
		{4, enc(fedpb.Marshal(fedpb.FromSubmission(sub))), enc(fedpb.Marshal(fedpb.FromReceipt(&fed.Receipt{Round: 4})))},
		{4, enc(fedpb.Marshal(fedpb.FromSubmission(&fed.Submission{Run: "r", Party: "p1", Round: 4, Token: task.Token}))), 0},
	}
	if len(svc.traffic) != len(want) {
		t.Fatalf("traffic = %v; want %v", svc.traffic, want)
	}
	for i := range want {
		if svc.traffic[i] != want[i] {
			t.Errorf("traffic of call %d = %v; want %v", i, svc.traffic[i], want[i])
		}
	}
	if len(svc.peers) != 1 || svc.peers[0] != "p1" {
		t.Errorf("coordinator saw peers %v; want p1", svc.peers)
	}
}

func TestServiceDown(t *testing.T) {
	n, err := inproc.New(nil, inproc.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	c := n.Dial("p1")
	if _, err := c.Next(context.Background(), &fed.TaskRequest{Run: "r", Party: "p1"}); !errors.Is(err, fed.ErrUnavailable) {
		t.Errorf("Next with no coordinator = %v; want ErrUnavailable", err)
	}
	n.SetService(&fakeService{})
	if _, err := c.Next(context.Background(), &fed.TaskRequest{Run: "r", Party: "p1"}); err != nil {
		t.Errorf("Next after SetService = %v; want success", err)
	}
}

func TestCrashSchedule(t *testing.T) {
	n, err := inproc.New(&fakeService{}, inproc.Faults{Crashes: []inproc.Crash{{Party: "p1", Method: "next", Call: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := &fed.TaskRequest{Run: "r", Party: "p1"}
	c := n.Dial("p1")
	for i, want := range []error{nil, inproc.ErrCrashed, inproc.ErrCrashed} {
		if _, err := c.Next(ctx, req); !errors.Is(err, want) {
			t.Errorf("call %d: Next = %v; want %v", i+1, err, want)
		}
	}
	if _, err := n.Dial("p1").Next(ctx, req); err != nil {
		t.Errorf("Next on a new connection after the crash = %v; want success (the schedule was for dial 0)", err)
	}
}

func TestFaultsValidate(t *testing.T) {
	tests := []struct {
		name   string
		faults inproc.Faults
		want   string
	}{
		{name: "none", faults: inproc.Faults{}},
		{name: "probability above one", faults: inproc.Faults{DropReply: 1.5}, want: "drop_reply = 1.5"},
		{name: "NaN probability", faults: inproc.Faults{DelayProb: math.NaN()}, want: "delay_prob = NaN"},
		{name: "crash call zero", faults: inproc.Faults{Crashes: []inproc.Crash{{Party: "p", Call: 0}}}, want: "call = 0"},
		{name: "unknown method", faults: inproc.Faults{Crashes: []inproc.Crash{{Party: "p", Call: 1, Method: "poll"}}}, want: `unknown method "poll"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.faults.Validate()
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v; want %q", err, tt.want)
			}
		})
	}
}

// TestLossyNetworkSameResult runs a federation where 30% of requests and 30%
// of replies are lost and calls are delayed: parties retry, the coordinator
// discards duplicates, and the final model equals the lossless run's.
func TestLossyNetworkSameResult(t *testing.T) {
	sc := fedtest.Scenario{Parties: 3, Rounds: 4, Epsilon: 1, Seed: 71}
	var clean, lossy []byte
	synctest.Test(t, func(t *testing.T) {
		clean = fedtest.Run(t, fedtest.InProc(inproc.Faults{}), sc).Final
		out := fedtest.Run(t, fedtest.InProc(inproc.Faults{Seed: 5, DropRequest: 0.3, DropReply: 0.3, DelayProb: 0.5, MaxDelay: 200 * time.Millisecond}), sc)
		lossy = out.Final
		for i, l := range out.Ledgers {
			if len(l) != sc.Rounds {
				t.Errorf("party %d charged %d times over a lossy network; want once per round (%d)", i+1, len(l), sc.Rounds)
			}
		}
	})
	if !bytes.Equal(clean, lossy) {
		t.Errorf("final model over the lossy network differs from the clean run (seed %d)", sc.Seed)
	}
}
