package secagg

import (
	"errors"
	"fmt"
	"testing"
)

// coordinatorKinds and partyKinds are the messages each side sends.
var (
	coordinatorKinds = []Kind{KindSetup, KindKeys, KindForward, KindUnmask}
	partyKinds       = []Kind{KindAdvertise, KindShares, KindMasked, KindReveal}
)

// recorded is an honest run of n = 3, t = 2 with every message and a
// snapshot of party 0 and of the coordinator before each stage.
type recorded struct {
	params  Params
	inputs  [][]int64
	msg     map[Kind][]byte // party 0's copy of each message, either direction
	reply   map[Kind][]byte // party 0's reply to each coordinator message
	replies map[Kind][][]byte
	party   [][]byte // party 0's state after handling 0 … 4 messages
	server  [][]byte // the coordinator's state before Start, after Start and after each Collect
}

func record(t *testing.T, seed uint64) *recorded {
	t.Helper()
	p := testParams(3, 2, 4)
	rec := &recorded{params: p, inputs: randomInputs(p, seed), msg: map[Kind][]byte{}, reply: map[Kind][]byte{}, replies: map[Kind][][]byte{}}
	in := newInstance(t, p, rec.inputs, seed)
	snap := func() {
		ps, err := in.parties[0].MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		rec.party = append(rec.party, ps)
	}
	ssnap := func() {
		ss, err := in.server.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		rec.server = append(rec.server, ss)
	}
	snap()
	ssnap()
	out, err := in.server.Start()
	if err != nil {
		t.Fatal(err)
	}
	ssnap()
	for !out.Done {
		k, _ := MessageKind(out.For(0))
		rec.msg[k] = out.For(0)
		replies := make([][]byte, p.Parties)
		for _, i := range out.To {
			if replies[i], err = in.parties[i].Handle(out.For(i), rec.inputs[i]); err != nil {
				t.Fatalf("party %d: Handle(%s) = %v", i, k, err)
			}
		}
		rec.reply[k] = replies[0]
		rk, _ := MessageKind(replies[0])
		rec.msg[rk] = replies[0]
		rec.replies[rk] = replies
		snap()
		if out, err = in.server.Collect(replies); err != nil {
			t.Fatal(err)
		}
		ssnap()
	}
	return rec
}

// TestPartyStages checks a party against every message of every stage: from each of its five states, every
// message of the protocol — the four it can receive, the four it sends
// (which it must never accept), and the coordinator messages of another
// run in the same session — either makes it proceed (the next message in
// order, or an exact repeat of the last one, which gets the same reply) or
// is rejected with an error that leaves its state unchanged. Nothing
// panics.
func TestPartyStages(t *testing.T) {
	rec, other := record(t, 1), record(t, 2)
	for state := range rec.party {
		for _, src := range []struct {
			name string
			rec  *recorded
		}{{"same run", rec}, {"other run", other}} {
			for _, k := range append(append([]Kind{}, coordinatorKinds...), partyKinds...) {
				t.Run(fmt.Sprintf("state %d/%s/%s", state, src.name, k), func(t *testing.T) {
					pa, err := NewParty(rec.params, 0, partySource(99, 0))
					if err != nil {
						t.Fatal(err)
					}
					if err := pa.UnmarshalBinary(rec.party[state]); err != nil {
						t.Fatalf("UnmarshalBinary = %v", err)
					}
					got, err := pa.Handle(src.rec.msg[k], rec.inputs[0])
					after, _ := pa.MarshalBinary()
					// A message identical to this run's counts as this run's: setup
					// and an unmask request with no dropouts are the same bytes in
					// every run of these parameters.
					sameRun := string(src.rec.msg[k]) == string(rec.msg[k])
					// Setup and keys draw randomness: a restored party reading a
					// fresh stream proceeds with replies of its own.
					random := k == KindSetup || k == KindKeys
					switch {
					case sameRun && state < len(coordinatorKinds) && k == coordinatorKinds[state]:
						// The next message in order proceeds, and its repeat gets the
						// same reply.
						if err != nil {
							t.Fatalf("Handle(next %s) = %v; want it to proceed", k, err)
						}
						if again, err := pa.Handle(src.rec.msg[k], nil); err != nil || string(again) != string(got) {
							t.Errorf("Handle(repeated %s) = %d bytes, %v; want the first reply again", k, len(again), err)
						}
						if !random && (string(got) != string(rec.reply[k]) || string(after) != string(rec.party[state+1])) {
							t.Errorf("Handle(next %s): reply or state differs from the recorded run", k)
						}
					case sameRun && state > 0 && k == coordinatorKinds[state-1]:
						// A repeat of the last message gets the same reply again.
						if err != nil || string(got) != string(rec.reply[k]) {
							t.Errorf("Handle(repeated %s) = %d bytes, %v; want the first reply again", k, len(got), err)
						}
						if string(after) != string(rec.party[state]) {
							t.Errorf("a repeat changed the state")
						}
					case !sameRun && state == 1 && k == KindKeys:
						// Another run's key list lacks this party's keys.
						if !errors.Is(err, ErrRefused) {
							t.Errorf("Handle(other run's keys) = %v; want ErrRefused", err)
						}
						if string(after) != string(rec.party[state]) {
							t.Errorf("a refused message changed the state")
						}
					default:
						if err == nil {
							t.Fatalf("Handle(%s) in state %d = %d bytes, nil; want an error", k, state, len(got))
						}
						if !errors.Is(err, ErrStage) && !errors.Is(err, ErrRefused) {
							t.Errorf("Handle(%s) in state %d = %v; want ErrStage or ErrRefused", k, state, err)
						}
						if string(after) != string(rec.party[state]) {
							t.Errorf("a rejected message changed the state")
						}
					}
				})
			}
		}
	}
}

// TestServerStages checks the coordinator against every message of every stage: from each of its states,
// the replies of every kind (and the coordinator's own messages sent
// back) either make it proceed — only the replies the stage waits for —
// or are all refused, which leaves it below the threshold: it aborts and
// unmasks nothing. Start works only once.
func TestServerStages(t *testing.T) {
	rec := record(t, 1)
	stageReply := []Kind{0, KindAdvertise, KindShares, KindMasked, KindReveal, 0}
	for state := range rec.server {
		for _, k := range append(append([]Kind{}, coordinatorKinds...), partyKinds...) {
			t.Run(fmt.Sprintf("state %d/%s", state, k), func(t *testing.T) {
				s, err := NewServer(rec.params)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.UnmarshalBinary(rec.server[state]); err != nil {
					t.Fatalf("UnmarshalBinary = %v", err)
				}
				replies := rec.replies[k]
				if replies == nil { // a coordinator message, echoed by every party
					replies = [][]byte{rec.msg[k], rec.msg[k], rec.msg[k]}
				}
				out, err := s.Collect(replies)
				after, _ := s.MarshalBinary()
				switch {
				case k == stageReply[state]:
					if err != nil || len(out.Rejected) != 0 {
						t.Fatalf("Collect(%s) in state %d = %v, rejected %v; want it to proceed", k, state, err, out.Rejected)
					}
					if string(after) != string(rec.server[state+1]) {
						t.Errorf("state after %s differs from the recorded one", k)
					}
				case stageReply[state] == 0:
					if !errors.Is(err, ErrStage) {
						t.Errorf("Collect(%s) in state %d = %v; want ErrStage", k, state, err)
					}
					if string(after) != string(rec.server[state]) {
						t.Errorf("a rejected call changed the state")
					}
				default:
					if !errors.Is(err, ErrBelowThreshold) || out.Done || len(out.Rejected) != 3 {
						t.Errorf("Collect(%s) in state %d = %v, done %v, %d rejected; want all 3 rejected and ErrBelowThreshold", k, state, err, out.Done, len(out.Rejected))
					}
					for _, r := range out.Rejected {
						if !errors.Is(r.Err, ErrStage) && !errors.Is(r.Err, ErrRefused) {
							t.Errorf("party %d's %s reply rejected with %v; want ErrStage", r.Party, k, r.Err)
						}
					}
				}
			})
		}
	}
	s, _ := NewServer(rec.params)
	if _, err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(); !errors.Is(err, ErrStage) {
		t.Errorf("second Start = %v; want ErrStage", err)
	}
}
