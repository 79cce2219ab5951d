package inproc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/fedpb"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// ErrCrashed is returned by every call of a connection whose party has
// crashed by the fault schedule. A fed.Party treats it as fatal, so its Run
// returns, as the process of a killed party would stop.
var ErrCrashed = errors.New("inproc: party crashed")

// Faults is a seeded schedule of failures. Each connection draws its
// failures from its own stream, derived from Seed, the party and the
// connection's number, so a schedule replays exactly.
type Faults struct {
	Seed uint64 `json:"seed"`
	// DropRequest is the probability that a request is lost before it
	// reaches the coordinator; the caller sees fed.ErrUnavailable.
	DropRequest float64 `json:"drop_request"`
	// DropReply is the probability that a reply is lost after the
	// coordinator handled the request; the caller sees fed.ErrUnavailable.
	DropReply float64 `json:"drop_reply"`
	// DelayProb is the probability that a call is delayed by a uniform
	// duration in [0, MaxDelay) before it is delivered.
	DelayProb float64       `json:"delay_prob"`
	MaxDelay  time.Duration `json:"max_delay"`
	// Crashes kill parties at given calls.
	Crashes []Crash `json:"crashes"`
}

// Crash kills a party's connection at its Call-th call (counting from 1) of
// Method ("join", "next", "submit"; "" counts every call). With Delivered
// the call reaches the coordinator first and the crash loses its reply;
// without, the call is never delivered. Dial counts the party's connections
// from 0, so a party restarted with a new connection can crash again.
type Crash struct {
	Party     string `json:"party"`
	Dial      int    `json:"dial"`
	Method    string `json:"method"`
	Call      int    `json:"call"`
	Delivered bool   `json:"delivered"`
}

// Validate reports every problem with f.
func (f *Faults) Validate() error {
	var errs []error
	for _, p := range []struct {
		name string
		v    float64
	}{{"drop_request", f.DropRequest}, {"drop_reply", f.DropReply}, {"delay_prob", f.DelayProb}} {
		if !(p.v >= 0 && p.v <= 1) {
			errs = append(errs, fmt.Errorf("inproc: %s = %v outside [0, 1]", p.name, p.v))
		}
	}
	if f.MaxDelay < 0 {
		errs = append(errs, fmt.Errorf("inproc: max_delay = %v < 0", f.MaxDelay))
	}
	for i, c := range f.Crashes {
		if c.Call < 1 {
			errs = append(errs, fmt.Errorf("inproc: crash %d: call = %d < 1", i, c.Call))
		}
		if !slices.Contains([]string{"", "join", "next", "submit"}, c.Method) {
			errs = append(errs, fmt.Errorf("inproc: crash %d: unknown method %q", i, c.Method))
		}
	}
	return errors.Join(errs...)
}

// Network connects parties to a coordinator in one process. Every message
// is encoded to its wire bytes and decoded again on the other side, so
// validation, copying and byte counts are those of the network transport.
// Connections authenticate as the party they were dialed for.
type Network struct {
	faults Faults

	mu    sync.Mutex
	svc   fed.Service // nil while the coordinator is down
	dials map[string]int
}

// New returns a network serving svc (which may be nil: the coordinator is
// down until SetService) with the given fault schedule.
func New(svc fed.Service, faults Faults) (*Network, error) {
	if err := faults.Validate(); err != nil {
		return nil, err
	}
	return &Network{svc: svc, faults: faults, dials: map[string]int{}}, nil
}

// SetService replaces the coordinator behind the network, as when a
// coordinator process restarts; nil takes it down (calls fail with
// fed.ErrUnavailable).
func (n *Network) SetService(svc fed.Service) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.svc = svc
}

func (n *Network) service() fed.Service {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.svc
}

// Dial returns a connection authenticated as party.
func (n *Network) Dial(party string) fed.Protocol {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.dials[party]
	n.dials[party]++
	c := &conn{net: n, party: party, dial: d, rand: rng.Derive(n.faults.Seed, "inproc", party, d), calls: map[string]int{}}
	for _, cr := range n.faults.Crashes {
		if cr.Party == party && cr.Dial == d {
			c.crashes = append(c.crashes, cr)
		}
	}
	return c
}

// conn is one party's connection. A party makes its calls one at a time;
// the mutex only guards against misuse.
type conn struct {
	net     *Network
	party   string
	dial    int
	crashes []Crash

	mu      sync.Mutex
	rand    *rand.Rand
	calls   map[string]int // per method, and "" for all
	crashed bool
}

// Join implements fed.Protocol.
func (c *conn) Join(ctx context.Context, req *fed.JoinRequest) (*fed.JoinReply, error) {
	return roundTrip(ctx, c, "join", fedpb.FromJoinRequest(req), (*fedpb.JoinRequest).ToFed, fed.Service.Join,
		fedpb.FromJoinReply, (*fedpb.JoinReply).ToFed, func(*fed.JoinRequest, *fed.JoinReply) int { return 0 })
}

// Next implements fed.Protocol.
func (c *conn) Next(ctx context.Context, req *fed.TaskRequest) (*fed.Task, error) {
	return roundTrip(ctx, c, "next", fedpb.FromTaskRequest(req), (*fedpb.TaskRequest).ToFed, fed.Service.Next,
		fedpb.FromTask, (*fedpb.Task).ToFed, func(_ *fed.TaskRequest, t *fed.Task) int {
			if t == nil || t.Done {
				return 0
			}
			return t.Round
		})
}

// Submit implements fed.Protocol.
func (c *conn) Submit(ctx context.Context, req *fed.Submission) (*fed.Receipt, error) {
	return roundTrip(ctx, c, "submit", fedpb.FromSubmission(req), (*fedpb.Submission).ToFed, fed.Service.Submit,
		fedpb.FromReceipt, (*fedpb.Receipt).ToFed, func(s *fed.Submission, _ *fed.Receipt) int { return s.Round })
}

// fault is what the schedule decided for one call.
type fault struct {
	crashBefore, crashAfter, dropRequest, dropReply bool
	delay                                           time.Duration
}

// decide draws the call's faults, in a fixed order so schedules replay.
func (c *conn) decide(method string) (fault, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.crashed {
		return fault{}, ErrCrashed
	}
	c.calls[method]++
	c.calls[""]++
	var f fault
	for _, cr := range c.crashes {
		if (cr.Method == "" || cr.Method == method) && c.calls[cr.Method] == cr.Call {
			if cr.Delivered {
				f.crashAfter = true
			} else {
				f.crashBefore = true
			}
		}
	}
	f.dropRequest = c.rand.Float64() < c.net.faults.DropRequest
	f.dropReply = c.rand.Float64() < c.net.faults.DropReply
	if c.rand.Float64() < c.net.faults.DelayProb && c.net.faults.MaxDelay > 0 {
		f.delay = time.Duration(c.rand.Int64N(int64(c.net.faults.MaxDelay)))
	}
	if f.crashBefore {
		c.crashed = true
	}
	return f, nil
}

func (c *conn) crash() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.crashed = true
}

// roundTrip carries one call: encode the request, apply the schedule,
// decode it for the coordinator, call it as the authenticated party, encode
// the reply, count bytes, decode the reply for the party.
func roundTrip[Req, Resp any, ReqPB, RespPB proto.Message](
	ctx context.Context, c *conn, method string, reqPB ReqPB,
	reqToFed func(ReqPB) (*Req, error),
	handle func(fed.Service, context.Context, *Req) (*Resp, error),
	respFromFed func(*Resp) RespPB, respToFed func(RespPB) (*Resp, error),
	roundOf func(*Req, *Resp) int,
) (*Resp, error) {
	f, err := c.decide(method)
	if err != nil {
		return nil, err
	}
	if f.crashBefore {
		return nil, fmt.Errorf("inproc: %s: %w", method, ErrCrashed)
	}
	reqBytes, err := fedpb.Marshal(reqPB)
	if err != nil {
		return nil, err
	}
	if f.delay > 0 {
		t := time.NewTimer(f.delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	if f.dropRequest {
		return nil, fmt.Errorf("inproc: %s: request lost: %w", method, fed.ErrUnavailable)
	}
	svc := c.net.service()
	if svc == nil {
		return nil, fmt.Errorf("inproc: %s: coordinator down: %w", method, fed.ErrUnavailable)
	}
	in := newOf(reqPB)
	if err := proto.Unmarshal(reqBytes, in); err != nil {
		return nil, fmt.Errorf("inproc: %s: decode request: %w: %w", method, fed.ErrInvalidMessage, err)
	}
	req, err := reqToFed(in)
	if err != nil {
		return nil, err
	}
	mctx, reported := fed.Metered(fed.WithPeer(ctx, c.party))
	defer reported()
	resp, herr := handle(svc, mctx, req)
	if herr != nil {
		svc.Traffic(c.party, roundOf(req, nil), len(reqBytes), 0)
		if f.crashAfter {
			c.crash()
			return nil, fmt.Errorf("inproc: %s: %w", method, ErrCrashed)
		}
		return nil, herr
	}
	respPB := respFromFed(resp)
	respBytes, err := fedpb.Marshal(respPB)
	if err != nil {
		return nil, err
	}
	svc.Traffic(c.party, roundOf(req, resp), len(reqBytes), len(respBytes))
	if f.crashAfter {
		c.crash()
		return nil, fmt.Errorf("inproc: %s: reply lost: %w", method, ErrCrashed)
	}
	if f.dropReply {
		return nil, fmt.Errorf("inproc: %s: reply lost: %w", method, fed.ErrUnavailable)
	}
	out := newOf(respPB)
	if err := proto.Unmarshal(respBytes, out); err != nil {
		return nil, fmt.Errorf("inproc: %s: decode reply: %w: %w", method, fed.ErrInvalidMessage, err)
	}
	return respToFed(out)
}

// newOf returns a new empty message of m's type.
func newOf[M proto.Message](m M) M {
	return m.ProtoReflect().New().Interface().(M)
}
