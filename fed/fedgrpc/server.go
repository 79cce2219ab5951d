package fedgrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/fedpb"
)

// MessageOverhead bounds what a protocol message carries besides its
// payload: ids, token, privacy events, refusal text and framing. Message
// size limits are the payload bound plus this.
const MessageOverhead = 64 << 10

// Keepalive settings of both ends: a ping after 30 s of silence, a
// connection closed when it goes unanswered for 10 s, and pings no more
// often than every 10 s accepted even without an active call (parties
// long-poll).
const (
	KeepaliveTime    = 30 * time.Second
	KeepaliveTimeout = 10 * time.Second
	keepaliveMinTime = 10 * time.Second
)

// ServiceName is the full name of the federation's gRPC service.
const ServiceName = "fedtopic.fed.v1.Federation"

// ServerConfig configures the coordinator's gRPC server.
type ServerConfig struct {
	// TLS is the server's TLS configuration, normally from ServerTLS: it
	// must require and verify client certificates.
	TLS *tls.Config
	// Parties is the allow-list: the identities (certificate common names)
	// that may call.
	Parties []string
	// MaxUpdateSize and MaxBroadcastSize are the algorithm's payload bounds
	// (fed.Validator); the server receives at most MaxUpdateSize +
	// MessageOverhead bytes per message and sends at most
	// MaxBroadcastSize + MessageOverhead.
	MaxUpdateSize, MaxBroadcastSize int
}

// Validate reports every problem with c.
func (c *ServerConfig) Validate() error {
	var errs []error
	if c.TLS == nil {
		errs = append(errs, errors.New("fedgrpc: server: no TLS configuration (plaintext is refused)"))
	} else if c.TLS.ClientAuth != tls.RequireAndVerifyClientCert {
		errs = append(errs, errors.New("fedgrpc: server: TLS must require and verify client certificates"))
	}
	if len(c.Parties) == 0 {
		errs = append(errs, errors.New("fedgrpc: server: empty allow-list"))
	}
	errs = append(errs, checkSizes("server", c.MaxUpdateSize, c.MaxBroadcastSize))
	return errors.Join(errs...)
}

func checkSizes(who string, update, broadcast int) error {
	var errs []error
	for _, s := range []struct {
		name string
		v    int
	}{{"max update size", update}, {"max broadcast size", broadcast}} {
		if s.v <= 0 || s.v > math.MaxInt32-MessageOverhead {
			errs = append(errs, fmt.Errorf("fedgrpc: %s: %s = %d outside [1, %d]", who, s.name, s.v, math.MaxInt32-MessageOverhead))
		}
	}
	return errors.Join(errs...)
}

// Server serves a coordinator over gRPC with mutual TLS. Every call is
// authenticated by the caller's client certificate; its identity must be in
// the allow-list and equal the party the message claims. The server also
// offers the standard gRPC health service.
type Server struct {
	fedpb.UnimplementedFederationServer
	svc     fed.Service
	parties []string
	grpc    *grpc.Server
	health  *health.Server
}

// NewServer returns a server for svc. Further grpc.ServerOptions are passed
// through (after the ones NewServer sets, so they can override them).
func NewServer(svc fed.Service, cfg ServerConfig, opts ...grpc.ServerOption) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{svc: svc, parties: slices.Clone(cfg.Parties), health: health.NewServer()}
	base := []grpc.ServerOption{
		grpc.Creds(credentials.NewTLS(cfg.TLS)),
		grpc.MaxRecvMsgSize(cfg.MaxUpdateSize + MessageOverhead),
		grpc.MaxSendMsgSize(cfg.MaxBroadcastSize + MessageOverhead),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: KeepaliveTime, Timeout: KeepaliveTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: keepaliveMinTime, PermitWithoutStream: true}),
		grpc.UnaryInterceptor(s.authorize),
	}
	s.grpc = grpc.NewServer(append(base, opts...)...)
	fedpb.RegisterFederationServer(s.grpc, s)
	healthpb.RegisterHealthServer(s.grpc, s.health)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(ServiceName, healthpb.HealthCheckResponse_SERVING)
	return s, nil
}

// Serve accepts connections on lis until Stop; it returns nil after Stop.
func (s *Server) Serve(lis net.Listener) error {
	if err := s.grpc.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return fmt.Errorf("fedgrpc: serve: %w", err)
	}
	return nil
}

// Stop marks the service not serving, closes every listener and connection
// and cancels calls in flight (parties see fed.ErrUnavailable and retry).
func (s *Server) Stop() {
	s.health.Shutdown()
	s.grpc.Stop()
}

// Shutdown stops accepting calls and waits for the calls in flight to
// finish — so a final reply reaches the party that asked for it — or for
// ctx to end, when it stops like Stop.
func (s *Server) Shutdown(ctx context.Context) {
	s.health.Shutdown()
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
	}
}

// authorize authenticates every call by the verified client certificate,
// checks the identity against the allow-list for the federation's methods,
// and hands it to the coordinator, which checks it against the party each
// message claims.
func (s *Server) authorize(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return nil, status.Error(codes.Unauthenticated, "fedgrpc: no peer")
	}
	ti, ok := p.AuthInfo.(credentials.TLSInfo)
	if !ok {
		return nil, status.Error(codes.Unauthenticated, "fedgrpc: not a TLS connection")
	}
	id, err := identity(ti.State)
	if err != nil {
		return nil, status.Error(codes.Unauthenticated, "fedgrpc: "+err.Error())
	}
	if strings.HasPrefix(info.FullMethod, "/"+ServiceName+"/") && !slices.Contains(s.parties, id) {
		return nil, toStatus(fmt.Errorf("fedgrpc: certificate of %q, not in the federation: %w", id, fed.ErrUnknownParty))
	}
	return handler(fed.WithPeer(ctx, id), req)
}

// Join implements fedpb.FederationServer.
func (s *Server) Join(ctx context.Context, req *fedpb.JoinRequest) (*fedpb.JoinReply, error) {
	return serve(ctx, s, req, (*fedpb.JoinRequest).ToFed, s.svc.Join, fedpb.FromJoinReply,
		func(*fed.JoinRequest, *fed.JoinReply) int { return 0 })
}

// Next implements fedpb.FederationServer.
func (s *Server) Next(ctx context.Context, req *fedpb.TaskRequest) (*fedpb.Task, error) {
	return serve(ctx, s, req, (*fedpb.TaskRequest).ToFed, s.svc.Next, fedpb.FromTask,
		func(_ *fed.TaskRequest, t *fed.Task) int {
			if t == nil || t.Done {
				return 0
			}
			return t.Round
		})
}

// Submit implements fedpb.FederationServer.
func (s *Server) Submit(ctx context.Context, req *fedpb.Submission) (*fedpb.Receipt, error) {
	return serve(ctx, s, req, (*fedpb.Submission).ToFed, s.svc.Submit, fedpb.FromReceipt,
		func(m *fed.Submission, _ *fed.Receipt) int { return m.Round })
}

// serve decodes and validates a request, calls the coordinator, counts the
// encoded sizes of request and reply, and maps errors to status codes.
func serve[Req, Resp any, ReqPB, RespPB proto.Message](ctx context.Context, s *Server, in ReqPB,
	toFed func(ReqPB) (*Req, error), call func(context.Context, *Req) (*Resp, error),
	fromFed func(*Resp) RespPB, roundOf func(*Req, *Resp) int,
) (RespPB, error) {
	var zero RespPB
	party, _ := fed.PeerFromContext(ctx)
	req, err := toFed(in)
	if err != nil {
		s.svc.Traffic(party, 0, proto.Size(in), 0)
		return zero, toStatus(err)
	}
	ctx, reported := fed.Metered(ctx)
	defer reported()
	resp, err := call(ctx, req)
	if err != nil {
		s.svc.Traffic(party, roundOf(req, nil), proto.Size(in), 0)
		return zero, toStatus(err)
	}
	out := fromFed(resp)
	s.svc.Traffic(party, roundOf(req, resp), proto.Size(in), proto.Size(out))
	return out, nil
}
