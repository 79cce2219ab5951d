package fedgrpc_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTransportsAgree checks that the transport changes nothing: the same seeded scenario run
// in process and over gRPC with mutual TLS on loopback gives bit-identical
// aggregates, identical ledger entries, and the same bytes per party and
// round (both count encoded message sizes).
func TestTransportsAgree(t *testing.T) {
	sc := fedtest.Scenario{Parties: 3, Rounds: 4, Epsilon: 0.7, Vocab: 50, Seed: 81}
	want := fedtest.Run(t, fedtest.InProc(inproc.Faults{}), sc)
	got := fedtest.Run(t, fedtest.Loopback(), sc)
	if !bytes.Equal(got.Final, want.Final) {
		t.Errorf("gRPC final model differs from the in-process one (seed %d)", sc.Seed)
	}
	if d := cmp.Diff(want.Ledgers, got.Ledgers); d != "" {
		t.Errorf("ledger entries differ (-inproc +grpc):\n%s", d)
	}
	if len(got.Records) != len(want.Records) {
		t.Fatalf("gRPC run has %d round records; want %d", len(got.Records), len(want.Records))
	}
	for i := range want.Records {
		w, g := want.Records[i], got.Records[i]
		if !slices.Equal(g.Replied, w.Replied) || !slices.Equal(g.Traffic, w.Traffic) {
			t.Errorf("round %d: gRPC replied %v traffic %v; in process %v %v", w.Round, g.Replied, g.Traffic, w.Replied, w.Traffic)
		}
	}
}
