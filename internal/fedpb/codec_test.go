package fedpb_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/fedpb"
	"github.com/fedtopic/fedtopic/privacy"
)

var token = bytes.Repeat([]byte{0xab}, fed.TokenSize)

func TestRoundTrip(t *testing.T) {
	opts := cmpopts.EquateEmpty()
	tests := []struct {
		name string
		run  func() (got, want any, err error)
	}{
		{"JoinRequest", func() (any, any, error) {
			m := &fed.JoinRequest{Run: "r", Party: "p1", Algorithm: "adlda", Protocol: 1, SecureThreshold: 2}
			b, err := fedpb.Marshal(fedpb.FromJoinRequest(m))
			if err != nil {
				return nil, m, err
			}
			got, err := fedpb.UnmarshalJoinRequest(b)
			return got, m, err
		}},
		{"JoinReply", func() (any, any, error) {
			m := &fed.JoinReply{Run: "r", Algorithm: "adlda", Parties: 3, Round: 7, SecureThreshold: 2, Index: 2}
			b, err := fedpb.Marshal(fedpb.FromJoinReply(m))
			if err != nil {
				return nil, m, err
			}
			got, err := fedpb.UnmarshalJoinReply(b)
			return got, m, err
		}},
		{"TaskRequest", func() (any, any, error) {
			m := &fed.TaskRequest{Run: "r", Party: "p1"}
			b, err := fedpb.Marshal(fedpb.FromTaskRequest(m))
			if err != nil {
				return nil, m, err
			}
			got, err := fedpb.UnmarshalTaskRequest(b)
			return got, m, err
		}},
		{"Task", func() (any, any, error) {
			m := &fed.Task{Run: "r", Round: 3, Attempt: 2, Token: token, Broadcast: []byte{1, 2, 3}, SecAgg: []byte{4, 5}}
			b, err := fedpb.Marshal(fedpb.FromTask(m))
			if err != nil {
				return nil, m, err
			}
			got, err := fedpb.UnmarshalTask(b)
			return got, m, err
		}},
		{"Submission", func() (any, any, error) {
			m := &fed.Submission{Run: "r", Party: "p1", Round: 3, Token: token, Payload: []byte{9, 8},
				Spent: []privacy.Event{
					{Mechanism: "gaussian", Sigma: 4.5, Sensitivity: 1, Delta: 1e-6, Unit: "word occurrence", Count: 2},
					{Mechanism: "subsampled-gaussian", Sigma: 1.1, Sensitivity: 1, SamplingRate: 0.2, Unit: "document", Count: 10},
					{Mechanism: "rrp", Epsilon: 2, Delta: 1e-3, Categories: 500, Assumption: "Zipf-like topics", Unit: "user", Count: 1},
				}}
			b, err := fedpb.Marshal(fedpb.FromSubmission(m))
			if err != nil {
				return nil, m, err
			}
			got, err := fedpb.UnmarshalSubmission(b)
			return got, m, err
		}},
		{"Receipt", func() (any, any, error) {
			m := &fed.Receipt{Round: 5}
			b, err := fedpb.Marshal(fedpb.FromReceipt(m))
			if err != nil {
				return nil, m, err
			}
			got, err := fedpb.UnmarshalReceipt(b)
			return got, m, err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want, err := tt.run()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got, opts); d != "" {
				t.Errorf("round trip changed the message (-want +got):\n%s", d)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	enc := func(b []byte, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name   string
		decode func([]byte) error
		b      []byte
	}{
		{"garbage", func(b []byte) error { _, err := fedpb.UnmarshalSubmission(b); return err }, []byte{0xff, 0xff, 0xff}},
		{"empty join", func(b []byte) error { _, err := fedpb.UnmarshalJoinRequest(b); return err }, nil},
		{"round above int32", func(b []byte) error { _, err := fedpb.UnmarshalReceipt(b); return err },
			enc(fedpb.Marshal(&fedpb.Receipt{Round: math.MaxUint32}))},
		{"short token", func(b []byte) error { _, err := fedpb.UnmarshalSubmission(b); return err },
			enc(fedpb.Marshal(&fedpb.Submission{Run: "r", Party: "p", Round: 1, Token: []byte{1}}))},
		{"event count overflow", func(b []byte) error { _, err := fedpb.UnmarshalSubmission(b); return err },
			enc(fedpb.Marshal(&fedpb.Submission{Run: "r", Party: "p", Round: 1, Token: token, Spent: []*fedpb.PrivacyEvent{{Mechanism: "laplace", Epsilon: 1, Count: math.MaxUint64}}}))},
		{"negative epsilon", func(b []byte) error { _, err := fedpb.UnmarshalSubmission(b); return err },
			enc(fedpb.Marshal(&fedpb.Submission{Run: "r", Party: "p", Round: 1, Token: token, Spent: []*fedpb.PrivacyEvent{{Mechanism: "laplace", Epsilon: -1, Count: 1}}}))},
		{"unknown mechanism", func(b []byte) error { _, err := fedpb.UnmarshalSubmission(b); return err },
			enc(fedpb.Marshal(&fedpb.Submission{Run: "r", Party: "p", Round: 1, Token: token, Spent: []*fedpb.PrivacyEvent{{Mechanism: "m", Epsilon: 1, Count: 1}}}))},
		{"task without token", func(b []byte) error { _, err := fedpb.UnmarshalTask(b); return err },
			enc(fedpb.Marshal(&fedpb.Task{Run: "r", Round: 2, Attempt: 1}))},
		{"invalid UTF-8 run", func(b []byte) error { _, err := fedpb.UnmarshalTaskRequest(b); return err },
			[]byte{0x0a, 0x02, 0xff, 0xfe, 0x12, 0x01, 'p'}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.decode(tt.b); !errors.Is(err, fed.ErrInvalidMessage) {
				t.Errorf("decode(%x) = %v; want ErrInvalidMessage", tt.b, err)
			}
		})
	}
}

// TestGeneratedFresh checks that the committed generated code belongs to
// the committed fed.proto (checksums recorded by gen.sh) and was made by the
// plugin versions pinned in go.mod.
func TestGeneratedFresh(t *testing.T) {
	sums, err := os.ReadFile("gen.sum")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		want, file, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("gen.sum: bad line %q", line)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != want {
			t.Errorf("%s changed since gen.sh last ran: run internal/fedpb/gen.sh (needs protoc) and commit its output", file)
		}
	}
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	versions := map[string]string{}
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[1], "v") {
			versions[f[0]] = f[1]
		}
	}
	for _, g := range []struct{ file, plugin, module string }{
		{"fed.pb.go", "protoc-gen-go", "google.golang.org/protobuf"},
		{"fed_grpc.pb.go", "protoc-gen-go-grpc", "google.golang.org/grpc/cmd/protoc-gen-go-grpc"},
	} {
		b, err := os.ReadFile(g.file)
		if err != nil {
			t.Fatal(err)
		}
		v := versions[g.module]
		if v == "" || !strings.Contains(string(b), "// - "+g.plugin+" "+v+"\n") && !strings.Contains(string(b), "// \t"+g.plugin+" "+v+"\n") {
			t.Errorf("%s was not generated by %s %s, the version go.mod pins: run internal/fedpb/gen.sh", g.file, g.plugin, v)
		}
	}
}
