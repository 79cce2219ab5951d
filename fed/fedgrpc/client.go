package fedgrpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/protobuf/proto"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/fedpb"
)

// ClientConfig configures a party's connection to the coordinator.
type ClientConfig struct {
	// TLS is the party's TLS configuration, normally from ClientTLS.
	TLS *tls.Config
	// MaxUpdateSize and MaxBroadcastSize are the algorithm's payload bounds;
	// the client sends at most MaxUpdateSize + MessageOverhead bytes per
	// message and receives at most MaxBroadcastSize + MessageOverhead.
	MaxUpdateSize, MaxBroadcastSize int
}

// Validate reports every problem with c.
func (c *ClientConfig) Validate() error {
	var errs []error
	if c.TLS == nil {
		errs = append(errs, errors.New("fedgrpc: client: no TLS configuration (plaintext is refused)"))
	} else if len(c.TLS.Certificates) == 0 && c.TLS.GetClientCertificate == nil {
		errs = append(errs, errors.New("fedgrpc: client: no client certificate"))
	}
	errs = append(errs, checkSizes("client", c.MaxUpdateSize, c.MaxBroadcastSize))
	return errors.Join(errs...)
}

// How a party's connection retries after losing the coordinator (a network
// partition, a coordinator restart): gRPC's exponential backoff (factor 1.6,
// jitter 0.2) from ReconnectBaseDelay, capped at ReconnectMaxDelay as
// Flower's client retries are, instead of gRPC's default cap of 120 s, so a
// party is back within 20 s of the network healing.
const (
	ReconnectBaseDelay = time.Second
	ReconnectMaxDelay  = 20 * time.Second
)

// Client is a party's connection to the coordinator; it implements
// fed.Protocol. It only dials out.
type Client struct {
	conn   *grpc.ClientConn
	rpc    fedpb.FederationClient
	health healthpb.HealthClient
}

// Dial returns a client for the coordinator at target (host:port). The
// connection is made lazily: a wrong address, server name or CA shows on
// the first call, which then fails with fed.ErrUnavailable before any
// message leaves. Further grpc.DialOptions are passed through.
func Dial(target string, cfg ClientConfig, opts ...grpc.DialOption) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(credentials.NewTLS(cfg.TLS)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: KeepaliveTime, Timeout: KeepaliveTimeout, PermitWithoutStream: true}),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: ReconnectBaseDelay, Multiplier: 1.6, Jitter: 0.2, MaxDelay: ReconnectMaxDelay},
			MinConnectTimeout: ReconnectMaxDelay,
		}),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(cfg.MaxBroadcastSize+MessageOverhead),
			grpc.MaxCallSendMsgSize(cfg.MaxUpdateSize+MessageOverhead),
		),
	}
	conn, err := grpc.NewClient(target, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("fedgrpc: dial %s: %w", target, err)
	}
	return &Client{conn: conn, rpc: fedpb.NewFederationClient(conn), health: healthpb.NewHealthClient(conn)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Healthy asks the coordinator's health service whether the federation
// service is serving.
func (c *Client) Healthy(ctx context.Context) error {
	r, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{Service: ServiceName})
	if err != nil {
		return fromStatus(ctx, "health", err)
	}
	if r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("fedgrpc: coordinator %s: %w", r.GetStatus(), fed.ErrUnavailable)
	}
	return nil
}

// Join implements fed.Protocol.
func (c *Client) Join(ctx context.Context, req *fed.JoinRequest) (*fed.JoinReply, error) {
	return call(ctx, "join", fedpb.FromJoinRequest(req), c.rpc.Join, (*fedpb.JoinReply).ToFed)
}

// Next implements fed.Protocol.
func (c *Client) Next(ctx context.Context, req *fed.TaskRequest) (*fed.Task, error) {
	return call(ctx, "next", fedpb.FromTaskRequest(req), c.rpc.Next, (*fedpb.Task).ToFed)
}

// Submit implements fed.Protocol.
func (c *Client) Submit(ctx context.Context, req *fed.Submission) (*fed.Receipt, error) {
	return call(ctx, "submit", fedpb.FromSubmission(req), c.rpc.Submit, (*fedpb.Receipt).ToFed)
}

func call[ReqPB, RespPB proto.Message, Resp any](ctx context.Context, method string, in ReqPB,
	rpc func(context.Context, ReqPB, ...grpc.CallOption) (RespPB, error), toFed func(RespPB) (*Resp, error),
) (*Resp, error) {
	out, err := rpc(ctx, in)
	if err != nil {
		return nil, fromStatus(ctx, method, err)
	}
	return toFed(out)
}
