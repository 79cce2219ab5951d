package fedgrpc_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/certs"
	"github.com/fedtopic/fedtopic/fed/fedgrpc"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/internal/fedpb"
)

// counting wraps the coordinator and counts the calls that reach it.
type counting struct {
	fed.Service
	calls atomic.Int64
}

func (c *counting) Join(ctx context.Context, r *fed.JoinRequest) (*fed.JoinReply, error) {
	c.calls.Add(1)
	return c.Service.Join(ctx, r)
}

func (c *counting) Next(ctx context.Context, r *fed.TaskRequest) (*fed.Task, error) {
	c.calls.Add(1)
	return c.Service.Next(ctx, r)
}

func (c *counting) Submit(ctx context.Context, r *fed.Submission) (*fed.Receipt, error) {
	c.calls.Add(1)
	return c.Service.Submit(ctx, r)
}

// federation is a running coordinator (Sum, parties p1 and p2) behind a
// gRPC server on loopback.
type federation struct {
	sc   fedtest.Scenario
	val  fed.Validator
	pki  *fedtest.PKI
	addr string
	svc  *counting
	now  time.Time
}

func startFederation(t *testing.T, vocab int) *federation {
	t.Helper()
	sc := fedtest.Scenario{Parties: 2, Rows: 2, Vocab: vocab, Rounds: 1, RoundTimeout: time.Minute}
	now := time.Now()
	pki, err := fedtest.NewPKI(now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	val := sc.Validator(t)
	cfg := sc.CoordinatorConfig()
	cfg.JoinTimeout = fed.Duration(time.Millisecond) // open round 1 at once; the tests play the parties
	coord, err := fed.NewCoordinator(cfg, sc.Aggregator(t), val, fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc := &counting{Service: coord}
	stls, err := fedgrpc.ServerTLS(pki.CA.PEM, pki.Coordinator.Cert, pki.Coordinator.Key)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := fedgrpc.NewServer(svc, fedgrpc.ServerConfig{TLS: stls, Parties: sc.IDs(), MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { srv.Serve(lis) })
	wg.Go(func() { coord.Run(ctx) })
	t.Cleanup(func() { cancel(); srv.Stop(); wg.Wait() })
	return &federation{sc: sc, val: val, pki: pki, addr: lis.Addr().String(), svc: svc, now: now}
}

// client dials the federation with the given TLS configuration.
func (f *federation) client(t *testing.T, tc *tls.Config, opts ...grpc.DialOption) *fedgrpc.Client {
	t.Helper()
	c, err := fedgrpc.Dial(f.addr, fedgrpc.ClientConfig{TLS: tc, MaxUpdateSize: f.val.MaxUpdateSize(), MaxBroadcastSize: f.val.MaxBroadcastSize()}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// partyTLS returns a client TLS configuration for a certificate of name
// issued by pki (or the federation's own when pki is nil).
func (f *federation) partyTLS(t *testing.T, pki *fedtest.PKI, name string, nb, na time.Time) *tls.Config {
	t.Helper()
	if pki == nil {
		pki = f.pki
	}
	kp, err := pki.Issue(name, certs.Party, nb, na)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := fedgrpc.ClientTLS(f.pki.CA.PEM, kp.Cert, kp.Key, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// rpcs calls each RPC method as party (claiming claim) and returns its error.
func rpcs(ctx context.Context, c fed.Protocol, claim string, token []byte, payload []byte) map[string]func() error {
	return map[string]func() error{
		"Join": func() error {
			_, err := c.Join(ctx, &fed.JoinRequest{Run: fedtest.RunID, Party: claim, Algorithm: fedtest.SumName, Protocol: fed.ProtocolVersion})
			return err
		},
		"Next": func() error { _, err := c.Next(ctx, &fed.TaskRequest{Run: fedtest.RunID, Party: claim}); return err },
		"Submit": func() error {
			_, err := c.Submit(ctx, &fed.Submission{Run: fedtest.RunID, Party: claim, Round: 1, Token: token, Payload: payload})
			return err
		},
	}
}

// TestAuthentication checks mutual TLS and identity by certificate: a table over
// every RPC and every way a peer can fail to be who it must be. Refused
// peers never reach the coordinator; transport-level refusals show on the
// first call (not on Dial) as Unavailable.
func TestAuthentication(t *testing.T) {
	f := startFederation(t, 100)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nb, na := f.now.Add(-time.Hour), f.now.Add(time.Hour)
	good := f.client(t, f.partyTLS(t, nil, "p1", nb, na))
	task, err := good.Next(ctx, &fed.TaskRequest{Run: fedtest.RunID, Party: "p1"})
	if err != nil || task.Round != 1 {
		t.Fatalf("Next(p1) = %+v, %v; want round 1", task, err)
	}
	payload := fedtest.EncodeMatrix(f.sc.Rows, f.sc.Vocab, make([]float64, f.sc.Rows*f.sc.Vocab))

	other, err := fedtest.NewPKI(nb, na)
	if err != nil {
		t.Fatal(err)
	}
	selfSigned := func() *tls.Config {
		ca, err := certs.NewCA("p1", nb, na) // a CA certificate named p1, presented as its own client certificate
		if err != nil {
			t.Fatal(err)
		}
		cert, key, err := ca.Issue("p1", certs.Party, nil, nb, na)
		if err != nil {
			t.Fatal(err)
		}
		tc, err := fedgrpc.ClientTLS(f.pki.CA.PEM, cert, key, "127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		tc.Certificates[0].Certificate = append(tc.Certificates[0].Certificate, ca.Cert.Raw)
		return tc
	}
	noCert := f.partyTLS(t, nil, "p1", nb, na)
	noCert.Certificates = nil
	noCert.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &tls.Certificate{}, nil }
	wrongServerName := f.partyTLS(t, nil, "p1", nb, na)
	wrongServerName.ServerName = "elsewhere.example"
	wrongCA := f.partyTLS(t, nil, "p1", nb, na)
	wrongCA.RootCAs = x509.NewCertPool()
	wrongCA.RootCAs.AddCert(other.CA.Cert)

	tests := []struct {
		name    string
		tls     *tls.Config
		opts    []grpc.DialOption
		claim   string
		token   []byte                // default: the open round's
		want    map[string]codes.Code // per method; missing = OK
		reaches bool                  // the call reaches the coordinator
	}{
		{name: "plaintext", tls: f.partyTLS(t, nil, "p1", nb, na), opts: []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, claim: "p1", want: all(codes.Unavailable)},
		{name: "no client certificate", tls: noCert, claim: "p1", want: all(codes.Unavailable)},
		{name: "self-signed", tls: selfSigned(), claim: "p1", want: all(codes.Unavailable)},
		{name: "other CA", tls: f.partyTLS(t, other, "p1", nb, na), claim: "p1", want: all(codes.Unavailable)},
		{name: "expired", tls: f.partyTLS(t, nil, "p1", f.now.Add(-3*time.Hour), f.now.Add(-2*time.Hour)), claim: "p1", want: all(codes.Unavailable)},
		{name: "not yet valid", tls: f.partyTLS(t, nil, "p1", f.now.Add(2*time.Hour), f.now.Add(3*time.Hour)), claim: "p1", want: all(codes.Unavailable)},
		{name: "coordinator certificate as client", tls: coordinatorAsClient(t, f), claim: "p1", want: all(codes.Unavailable)},
		{name: "wrong server name", tls: wrongServerName, claim: "p1", want: all(codes.Unavailable)},
		{name: "coordinator from another CA", tls: wrongCA, claim: "p1", want: all(codes.Unavailable)},
		{name: "not in the allow-list", tls: f.partyTLS(t, nil, "p9", nb, na), claim: "p9", want: all(codes.PermissionDenied)},
		{name: "claims another party", tls: f.partyTLS(t, nil, "p2", nb, na), claim: "p1", want: all(codes.PermissionDenied), reaches: true},
		{name: "token of another attempt", tls: f.partyTLS(t, nil, "p2", nb, na), claim: "p2", token: bytes.Repeat([]byte{7}, fed.TokenSize), want: map[string]codes.Code{"Submit": codes.FailedPrecondition}, reaches: true},
	}
	for _, tt := range tests {
		for _, method := range []string{"Join", "Next", "Submit"} {
			t.Run(tt.name+"/"+method, func(t *testing.T) {
				c := f.client(t, tt.tls, tt.opts...)
				before := f.svc.calls.Load()
				token := task.Token
				if tt.token != nil {
					token = tt.token
				}
				err := rpcs(ctx, c, tt.claim, token, payload)[method]()
				if got, want := status.Code(err), tt.want[method]; got != want {
					t.Errorf("%s: %v (code %v); want %v", method, err, got, want)
				}
				if tt.want[method] == codes.Unavailable && !errors.Is(err, fed.ErrUnavailable) {
					t.Errorf("%s: %v; want it to wrap fed.ErrUnavailable", method, err)
				}
				reached := f.svc.calls.Load() != before
				if wantReach := tt.reaches || tt.want[method] == codes.OK; reached != wantReach {
					t.Errorf("%s reached the coordinator = %v; want %v", method, reached, wantReach)
				}
			})
		}
	}
	if _, err := good.Submit(ctx, &fed.Submission{Run: fedtest.RunID, Party: "p1", Round: 1, Token: task.Token, Payload: payload}); err != nil {
		t.Errorf("valid Submit(p1): %v", err)
	}
	if err := good.Healthy(ctx); err != nil {
		t.Errorf("Healthy: %v", err)
	}
}

func all(c codes.Code) map[string]codes.Code {
	return map[string]codes.Code{"Join": c, "Next": c, "Submit": c}
}

// coordinatorAsClient presents the coordinator's own (server-only)
// certificate as a client certificate.
func coordinatorAsClient(t *testing.T, f *federation) *tls.Config {
	t.Helper()
	tc, err := fedgrpc.ClientTLS(f.pki.CA.PEM, f.pki.Coordinator.Cert, f.pki.Coordinator.Key, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return tc
}

// TestMessageSize checks the size limits: the server's receive limit is the
// algorithm's largest update plus MessageOverhead; a message one byte over
// it is refused with ResourceExhausted before the coordinator sees it,
// heap memory does not grow by the message's size, and another party's
// valid request succeeds within a second afterwards.
func TestMessageSize(t *testing.T) {
	f := startFederation(t, 1<<19) // 8 MiB updates: far above the heap's noise of about 1 MiB
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nb, na := f.now.Add(-time.Hour), f.now.Add(time.Hour)
	big := grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(math.MaxInt32))
	p1 := f.client(t, f.partyTLS(t, nil, "p1", nb, na), big)
	task, err := p1.Next(ctx, &fed.TaskRequest{Run: fedtest.RunID, Party: "p1"})
	if err != nil {
		t.Fatal(err)
	}
	limit := f.val.MaxUpdateSize() + fedgrpc.MessageOverhead
	sized := func(n int) *fed.Submission {
		s := &fed.Submission{Run: fedtest.RunID, Party: "p1", Round: 1, Token: task.Token}
		for s.Payload = make([]byte, n); proto.Size(fedpb.FromSubmission(s)) > n; {
			s.Payload = s.Payload[:len(s.Payload)-1]
		}
		return s
	}
	over := sized(limit + 1)
	if got := proto.Size(fedpb.FromSubmission(over)); got != limit+1 {
		t.Fatalf("test message is %d bytes; want %d", got, limit+1)
	}
	calls := f.svc.calls.Load()
	_, err = p1.Submit(ctx, over)
	if status.Code(err) != codes.ResourceExhausted || !errors.Is(err, fed.ErrTooLarge) {
		t.Errorf("Submit of %d bytes (limit %d) = %v; want ResourceExhausted, fed.ErrTooLarge", limit+1, limit, err)
	}
	// Twenty more refused messages must not keep their bytes: the heap
	// grows by less than one message's limit in all.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // a second cycle empties the sync.Pool victim caches too
	runtime.ReadMemStats(&before)
	for range 20 {
		p1.Submit(ctx, over)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("heap growth over 20 refused %d-byte messages: %d bytes", limit+1, grew)
	if grew > int64(limit) {
		t.Errorf("heap grew by %d bytes over 20 refused messages; want less than the %d-byte limit", grew, limit)
	}
	if f.svc.calls.Load() != calls {
		t.Error("an oversized message reached the coordinator")
	}
	p2 := f.client(t, f.partyTLS(t, nil, "p2", nb, na))
	start := time.Now()
	if _, err := p2.Join(ctx, &fed.JoinRequest{Run: fedtest.RunID, Party: "p2", Algorithm: fedtest.SumName, Protocol: fed.ProtocolVersion}); err != nil {
		t.Errorf("Join(p2) after the oversized message: %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Errorf("Join(p2) took %v; want < 1s", el)
	}
	atLimit := sized(limit)
	calls = f.svc.calls.Load()
	_, err = p1.Submit(ctx, atLimit)
	if f.svc.calls.Load() == calls || !errors.Is(err, fed.ErrTooLarge) {
		t.Errorf("Submit of exactly %d bytes: reached coordinator %v, error %v; want it to reach the coordinator, which refuses the oversized payload", limit, f.svc.calls.Load() != calls, err)
	}
}
