package fed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"unicode/utf8"

	"github.com/fedtopic/fedtopic/privacy"
)

// ProtocolVersion is the version of the party–coordinator protocol this
// package speaks. A coordinator refuses parties of another version.
const ProtocolVersion = 1

// TokenSize is the length in bytes of a round token.
const TokenSize = 16

// maxIDLen bounds run and party ids on the wire.
const maxIDLen = 256

// maxEvents bounds the privacy events one submission may declare.
const maxEvents = 64

// maxRefusalLen bounds the reason text of a refusal.
const maxRefusalLen = 4096

// JoinRequest is a party's first call: it announces itself to the run.
type JoinRequest struct {
	Run       string
	Party     string
	Algorithm string // the algorithm the party is configured for
	Protocol  int    // ProtocolVersion of the party
	// SecureThreshold is the party's secure aggregation threshold t, or 0
	// when it is configured without secure aggregation. The coordinator
	// refuses a party whose setting differs from its own.
	SecureThreshold int
}

// JoinReply tells a party about the run it joined.
type JoinReply struct {
	Run       string
	Algorithm string
	Parties   int // size of the federation
	Round     int // the round now open (0 before the first)
	// SecureThreshold is the federation's secure aggregation threshold t,
	// or 0 without secure aggregation.
	SecureThreshold int
	// Index is the party's position in the federation's party list.
	Index int
}

// TaskRequest asks the coordinator for the party's next piece of work. It
// blocks until there is one (or the coordinator's poll interval passes).
type TaskRequest struct {
	Run   string
	Party string
}

// Task is the coordinator's answer to a TaskRequest: the open round with its
// broadcast, the end of the run with the final broadcast, or (Round 0, not
// Done) nothing yet — ask again.
type Task struct {
	Run       string
	Round     int
	Attempt   int
	Token     []byte // TokenSize bytes; a reply must echo it
	Broadcast []byte
	Done      bool
	// SecAgg, with secure aggregation, is the request of the round's
	// current stage in package secagg's encoding; the party answers it in
	// Submission.Payload. Broadcast is set only with the first stage's
	// request (the setup), which is when the party learns.
	SecAgg []byte
}

// Idle reports whether t carries no work: the party should ask again.
func (t *Task) Idle() bool { return t.Round == 0 && !t.Done }

// Submission is a party's reply in a round: an update, or a refusal (for
// example when the round would exceed the party's privacy budget).
type Submission struct {
	Run     string
	Party   string
	Round   int
	Token   []byte
	Payload []byte
	Spent   []privacy.Event
	Refusal string // non-empty: the party refuses the round, and why
}

// Receipt acknowledges an accepted submission.
type Receipt struct {
	Round int
}

// Protocol is the set of calls a party makes to the coordinator. The
// Coordinator implements it; transports (fed/inproc, fed/fedgrpc) carry it
// from a party to the coordinator, encoding every message on the way.
type Protocol interface {
	Join(ctx context.Context, req *JoinRequest) (*JoinReply, error)
	Next(ctx context.Context, req *TaskRequest) (*Task, error)
	Submit(ctx context.Context, req *Submission) (*Receipt, error)
}

// Service is the coordinator side of a transport: the Protocol plus a meter
// the transport reports encoded message sizes to, so byte counts are the
// wire's. A transport passes each call to the Protocol with a context from
// Metered, and calls its done function after the call's Traffic report.
type Service interface {
	Protocol
	// Traffic records that a transport carried up bytes from party and
	// down bytes to it for round (0 for calls outside a round).
	Traffic(party string, round int, up, down int)
}

// Validate checks that r is well formed.
func (r *JoinRequest) Validate() error {
	return errors.Join(checkID("run", r.Run), checkID("party", r.Party), checkID("algorithm", r.Algorithm),
		checkRange("protocol", r.Protocol, 1, math.MaxInt32), checkRange("secure threshold", r.SecureThreshold, 0, math.MaxInt32))
}

// Validate checks that r is well formed.
func (r *JoinReply) Validate() error {
	return errors.Join(checkID("run", r.Run), checkID("algorithm", r.Algorithm),
		checkRange("parties", r.Parties, 1, math.MaxInt32), checkRange("round", r.Round, 0, math.MaxInt32),
		checkRange("secure threshold", r.SecureThreshold, 0, r.Parties), checkRange("index", r.Index, 0, r.Parties-1))
}

// Validate checks that r is well formed.
func (r *TaskRequest) Validate() error {
	return errors.Join(checkID("run", r.Run), checkID("party", r.Party))
}

// Validate checks that t is well formed.
func (t *Task) Validate() error {
	errs := []error{checkID("run", t.Run), checkRange("round", t.Round, 0, math.MaxInt32),
		checkRange("attempt", t.Attempt, 0, math.MaxInt32)}
	switch {
	case t.Done:
		if len(t.SecAgg) != 0 {
			errs = append(errs, fmt.Errorf("%w: final task carries a secure aggregation request", ErrInvalidMessage))
		}
	case t.Round == 0:
		if t.Attempt != 0 || len(t.Token) != 0 || len(t.Broadcast) != 0 || len(t.SecAgg) != 0 {
			errs = append(errs, fmt.Errorf("%w: idle task carries a round", ErrInvalidMessage))
		}
	default:
		if t.Attempt < 1 {
			errs = append(errs, fmt.Errorf("%w: attempt %d < 1", ErrInvalidMessage, t.Attempt))
		}
		if len(t.Token) != TokenSize {
			errs = append(errs, fmt.Errorf("%w: token of %d bytes, want %d", ErrInvalidMessage, len(t.Token), TokenSize))
		}
	}
	return errors.Join(errs...)
}

// Validate checks that s is well formed. It does not look inside the
// payload: that is the algorithm Validator's job.
func (s *Submission) Validate() error {
	errs := []error{checkID("run", s.Run), checkID("party", s.Party), checkRange("round", s.Round, 1, math.MaxInt32)}
	if len(s.Token) != TokenSize {
		errs = append(errs, fmt.Errorf("%w: token of %d bytes, want %d", ErrInvalidMessage, len(s.Token), TokenSize))
	}
	if s.Refusal != "" && len(s.Payload) > 0 {
		errs = append(errs, fmt.Errorf("%w: refusal carries a payload", ErrInvalidMessage))
	}
	if len(s.Refusal) > maxRefusalLen || !utf8.ValidString(s.Refusal) {
		errs = append(errs, fmt.Errorf("%w: refusal is not UTF-8 of at most %d bytes", ErrInvalidMessage, maxRefusalLen))
	}
	if len(s.Spent) > maxEvents {
		errs = append(errs, fmt.Errorf("%w: %d privacy events > %d", ErrInvalidMessage, len(s.Spent), maxEvents))
	} else {
		for i := range s.Spent {
			if err := CheckEvent(&s.Spent[i]); err != nil {
				errs = append(errs, fmt.Errorf("event %d: %w", i, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Validate checks that r is well formed.
func (r *Receipt) Validate() error { return checkRange("round", r.Round, 1, math.MaxInt32) }

// CheckEvent reports whether e is a well-formed privacy event: one the
// accountant understands (privacy.Event.Validate), with every numeric field
// finite and non-negative and short UTF-8 names.
func CheckEvent(e *privacy.Event) error {
	errs := []error{}
	if err := e.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidMessage, err))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"epsilon", e.Epsilon}, {"delta", e.Delta}, {"sigma", e.Sigma}, {"sensitivity", e.Sensitivity}, {"sampling rate", e.SamplingRate}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			errs = append(errs, fmt.Errorf("%w: %s = %v", ErrInvalidMessage, f.name, f.v))
		}
	}
	if e.Categories < 0 {
		errs = append(errs, fmt.Errorf("%w: categories = %d", ErrInvalidMessage, e.Categories))
	}
	for _, s := range []string{e.Mechanism, e.Unit, e.Assumption} {
		if len(s) > maxIDLen || !utf8.ValidString(s) {
			errs = append(errs, fmt.Errorf("%w: mechanism, unit or assumption is not UTF-8 of at most %d bytes", ErrInvalidMessage, maxIDLen))
			break
		}
	}
	return errors.Join(errs...)
}

func checkID(name, v string) error {
	switch {
	case v == "":
		return fmt.Errorf("%w: empty %s", ErrInvalidMessage, name)
	case len(v) > maxIDLen:
		return fmt.Errorf("%w: %s of %d bytes > %d", ErrInvalidMessage, name, len(v), maxIDLen)
	case !utf8.ValidString(v):
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidMessage, name)
	}
	return nil
}

func checkRange(name string, v, lo, hi int) error {
	if v < lo || v > hi {
		return fmt.Errorf("%w: %s = %d outside [%d, %d]", ErrInvalidMessage, name, v, lo, hi)
	}
	return nil
}

// peerKey is the context key of the authenticated party identity.
type peerKey struct{}

// WithPeer returns a context carrying the party identity a transport has
// authenticated (the subject of its client certificate). The coordinator
// rejects messages that claim another party.
func WithPeer(ctx context.Context, party string) context.Context {
	return context.WithValue(ctx, peerKey{}, party)
}

// PeerFromContext returns the authenticated identity in ctx, if any.
func PeerFromContext(ctx context.Context) (string, bool) {
	p, ok := ctx.Value(peerKey{}).(string)
	return p, ok
}

// meterKey is the context key of a metered call.
type meterKey struct{}

// callMeter is closed once the transport has reported a call's bytes.
type callMeter struct {
	reported chan struct{}
	once     sync.Once
}

func (m *callMeter) done() { m.once.Do(func() { close(m.reported) }) }

// Metered returns a context for a call whose bytes the transport reports
// through Service.Traffic, and the function the transport must call once
// it has reported them (also when the call fails). A coordinator that
// accepts a reply through a metered call waits for that report before it
// closes the round's byte counts, so the reply that completes a round is
// counted in it whichever goroutine runs first.
func Metered(ctx context.Context) (context.Context, func()) {
	m := &callMeter{reported: make(chan struct{})}
	return context.WithValue(ctx, meterKey{}, m), m.done
}

// meterFromContext returns the meter of a metered call, or nil.
func meterFromContext(ctx context.Context) *callMeter {
	m, _ := ctx.Value(meterKey{}).(*callMeter)
	return m
}
