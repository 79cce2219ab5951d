package secagg

import (
	"crypto/rand"
	"errors"
	"slices"
	"testing"
)

// TestRestartAndResend restarts every party and the coordinator from
// their saved states after every stage, and has the coordinator resend
// each stage's messages (Pending) to every party twice: the parties
// answer resends with the bytes they sent first, and the sum is right.
// Restored parties read crypto/rand, so nothing depends on replaying a
// random stream.
func TestRestartAndResend(t *testing.T) {
	p := testParams(5, 3, 64)
	inputs := randomInputs(p, 4)
	in := newInstance(t, p, inputs, 8)
	out, err := in.server.Start()
	if err != nil {
		t.Fatal(err)
	}
	drop := map[Kind]int{KindForward: 3} // party 3 drops before masking
	gone := map[int]bool{}
	for !out.Done {
		k, _ := MessageKind(out.For(out.To[0]))
		if d, ok := drop[k]; ok {
			gone[d] = true
		}
		replies := make([][]byte, p.Parties)
		for _, i := range out.To {
			if gone[i] {
				continue
			}
			if replies[i], err = in.parties[i].Handle(out.For(i), inputs[i]); err != nil {
				t.Fatalf("party %d: Handle(%s) = %v", i, k, err)
			}
			// Restart the party from its saved state, then resend.
			st, err := in.parties[i].MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := NewParty(p, i, rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			if err := fresh.UnmarshalBinary(st); err != nil {
				t.Fatalf("party %d: UnmarshalBinary = %v", i, err)
			}
			in.parties[i] = fresh
			again, err := fresh.Handle(out.For(i), nil)
			if err != nil || !slices.Equal(again, replies[i]) {
				t.Errorf("party %d: resent %s answered with %d other bytes, %v; want the first reply", i, k, len(again), err)
			}
		}
		if out, err = in.server.Collect(replies); err != nil {
			t.Fatalf("Collect after %s = %v", k, err)
		}
		// Restart the coordinator; its pending messages are the same.
		st, err := in.server.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		s, _ := NewServer(p)
		if err := s.UnmarshalBinary(st); err != nil {
			t.Fatalf("coordinator: UnmarshalBinary after %s = %v", k, err)
		}
		pending := s.Pending()
		if !slices.Equal(pending.To, out.To) || !slices.Equal(pending.Payload, out.Payload) || len(pending.PerParty) != len(out.PerParty) {
			t.Fatalf("restored coordinator's pending messages differ after %s", k)
		}
		for i := range out.PerParty {
			if !slices.Equal(pending.PerParty[i], out.PerParty[i]) {
				t.Fatalf("restored coordinator's message to party %d differs after %s", i, k)
			}
		}
		in.server = s
		out = pending
	}
	want := plainSum(inputs, []int{0, 1, 2, 4})
	if !slices.Equal(out.Sum, want) || !slices.Equal(out.Included, []int{0, 1, 2, 4}) {
		t.Errorf("sum after restarts = %v… of %v, want %v… of [0 1 2 4]", out.Sum[:3], out.Included, want[:3])
	}
}

// TestStateRejectsCorruption checks that a truncated or foreign saved
// state is refused, not half loaded.
func TestStateRejectsCorruption(t *testing.T) {
	rec := record(t, 3)
	for i, st := range rec.party {
		pa, _ := NewParty(rec.params, 0, rand.Reader)
		if err := pa.UnmarshalBinary(st[:len(st)-1]); err == nil {
			t.Errorf("party state %d truncated: UnmarshalBinary = nil error", i)
		}
		other, _ := NewParty(rec.params, 1, rand.Reader)
		if err := other.UnmarshalBinary(st); err == nil {
			t.Errorf("party 0's state %d loaded into party 1", i)
		}
	}
	for i, st := range rec.server {
		s, _ := NewServer(rec.params)
		if err := s.UnmarshalBinary(st[:len(st)-1]); err == nil {
			t.Errorf("coordinator state %d truncated: UnmarshalBinary = nil error", i)
		}
	}
}

// TestImpersonationRefused checks that the coordinator refuses a reply
// that names a sender other than the party it came from, and counts that
// party as dropped.
func TestImpersonationRefused(t *testing.T) {
	p := testParams(3, 2, 4)
	in := newInstance(t, p, randomInputs(p, 1), 1)
	out, _ := in.server.Start()
	replies := make([][]byte, 3)
	for _, i := range out.To {
		replies[i], _ = in.parties[i].Handle(out.For(i), nil)
	}
	replies[2] = replies[1] // party 2's channel carries party 1's keys
	got, err := in.server.Collect(replies)
	if err != nil {
		t.Fatalf("Collect = %v", err)
	}
	if len(got.Rejected) != 1 || got.Rejected[0].Party != 2 || !errors.Is(got.Rejected[0].Err, ErrRefused) {
		t.Errorf("Collect rejected %v; want party 2 with ErrRefused", got.Rejected)
	}
	if !slices.Equal(got.To, []int{0, 1}) {
		t.Errorf("next stage addresses %v, want [0 1]", got.To)
	}
}
