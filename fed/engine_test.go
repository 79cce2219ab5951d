package fed_test

import (
	"bytes"
	"testing"

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
