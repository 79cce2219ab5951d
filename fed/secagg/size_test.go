package secagg

import (
	"math/rand/v2"
	"testing"
)

// TestMaxMessageSize runs instances and checks that no message, request
// or reply, is larger than the bound.
func TestMaxMessageSize(t *testing.T) {
	for _, tc := range []struct{ n, t, l int }{{3, 2, 1}, {5, 3, 7}, {7, 4, 300}} {
		p := Params{Session: make([]byte, MaxSession), Parties: tc.n, Threshold: tc.t, Bits: 32, FracBits: 0, Clip: 1000, Len: tc.l}
		bound := MaxMessageSize(tc.n, tc.l, 32)
		check := func(what string, b []byte) {
			if len(b) > bound {
				t.Errorf("n=%d l=%d: %s of %d bytes, bound %d", tc.n, tc.l, what, len(b), bound)
			}
		}
		parties := make([]*Party, tc.n)
		for i := range parties {
			parties[i], _ = NewParty(p, i, rand.NewChaCha8([32]byte{byte(i)}))
		}
		srv, err := NewServer(p)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := srv.Start()
		for !out.Done {
			replies := make([][]byte, tc.n)
			for _, i := range out.To {
				check("request", out.For(i))
				if replies[i], err = parties[i].Handle(out.For(i), make([]int64, tc.l)); err != nil {
					t.Fatal(err)
				}
				check("reply", replies[i])
			}
			if out, err = srv.Collect(replies); err != nil {
				t.Fatal(err)
			}
		}
	}
}
