package fedpb_test

import (
	"math"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/internal/fedpb"
	"github.com/fedtopic/fedtopic/privacy"
)

// FuzzDecode feeds arbitrary bytes to the decode-and-validate path of every
// message type: it must never panic, and whatever
// decodes must survive a re-encode unchanged in meaning. Submissions that
// decode also go through an algorithm's update validation.
func FuzzDecode(f *testing.F) {
	seeds := []proto.Message{
		fedpb.FromJoinRequest(&fed.JoinRequest{Run: "r", Party: "p1", Algorithm: "a", Protocol: 1}),
		fedpb.FromJoinReply(&fed.JoinReply{Run: "r", Algorithm: "a", Parties: 3, Round: 1}),
		fedpb.FromTaskRequest(&fed.TaskRequest{Run: "r", Party: "p1"}),
		fedpb.FromTask(&fed.Task{Run: "r", Round: 1, Attempt: 1, Token: token, Broadcast: fedtest.EncodeMatrix(1, 2, []float64{1, 2})}),
		fedpb.FromSubmission(&fed.Submission{Run: "r", Party: "p1", Round: 1, Token: token, Payload: fedtest.EncodeMatrix(1, 2, []float64{1, math.NaN()}),
			Spent: []privacy.Event{{Mechanism: "laplace", Epsilon: 1, Count: 1}}}),
		fedpb.FromReceipt(&fed.Receipt{Round: 1}),
	}
	for _, s := range seeds {
		b, err := fedpb.Marshal(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	val := fedtest.SumValidator{Rows: 1, Cols: 2}
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := fedpb.UnmarshalJoinRequest(b); err == nil {
			again(t, fedpb.FromJoinRequest(m), fedpb.UnmarshalJoinRequest)
		}
		if m, err := fedpb.UnmarshalJoinReply(b); err == nil {
			again(t, fedpb.FromJoinReply(m), fedpb.UnmarshalJoinReply)
		}
		if m, err := fedpb.UnmarshalTaskRequest(b); err == nil {
			again(t, fedpb.FromTaskRequest(m), fedpb.UnmarshalTaskRequest)
		}
		if m, err := fedpb.UnmarshalTask(b); err == nil {
			again(t, fedpb.FromTask(m), fedpb.UnmarshalTask)
		}
		if m, err := fedpb.UnmarshalReceipt(b); err == nil {
			again(t, fedpb.FromReceipt(m), fedpb.UnmarshalReceipt)
		}
		if m, err := fedpb.UnmarshalSubmission(b); err == nil {
			again(t, fedpb.FromSubmission(m), fedpb.UnmarshalSubmission)
			if err := val.CheckUpdate(m.Round, m.Payload); err == nil {
				if _, err := fedtest.DecodeMatrix(m.Payload, 1, 2); err != nil {
					t.Fatalf("CheckUpdate accepted a payload DecodeMatrix rejects: %v", err)
				}
			}
		}
	})
}

// again re-encodes a decoded message and decodes it once more: a valid
// message must stay valid.
func again[M any](t *testing.T, w proto.Message, dec func([]byte) (M, error)) {
	t.Helper()
	b, err := fedpb.Marshal(w)
	if err != nil {
		t.Fatalf("re-encode %T: %v", w, err)
	}
	if _, err := dec(b); err != nil {
		t.Fatalf("re-decode %T: %v", w, err)
	}
}
