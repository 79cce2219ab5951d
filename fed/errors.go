package fed

import (
	"errors"
	"fmt"

	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// Errors the protocol returns. Transports carry them across the wire (fedgrpc
// maps each to a gRPC status code and back), so callers can test for them
// with errors.Is on either side.
var (
	// ErrBudgetExhausted reports that a party's ledger refused a release
	// because it would exceed the party's privacy budget. It is the
	// accountant's error, so refusals of an accountant.Ledger match it.
	ErrBudgetExhausted = accountant.ErrBudgetExhausted
	// ErrInvalidUpdate reports an update whose payload failed the
	// algorithm's validation (shape, non-finite values, range).
	ErrInvalidUpdate = errors.New("invalid update")
	// ErrInvalidMessage reports a protocol message that is malformed in
	// itself (missing fields, out-of-range numbers, undecodable bytes).
	ErrInvalidMessage = errors.New("invalid message")
	// ErrTooLarge reports a message or payload above the agreed size bound.
	ErrTooLarge = errors.New("message too large")
	// ErrUnknownRun reports a message for a run (federation) this
	// coordinator is not serving.
	ErrUnknownRun = errors.New("unknown run")
	// ErrUnknownParty reports a party that is not in the federation's
	// allow-list.
	ErrUnknownParty = errors.New("unknown party")
	// ErrPermissionDenied reports a message whose claimed party differs from
	// the identity the transport authenticated.
	ErrPermissionDenied = errors.New("permission denied")
	// ErrStaleRound reports a reply for a round or attempt that is not open:
	// late, early, from an earlier round, or carrying another round's token.
	ErrStaleRound = errors.New("stale round")
	// ErrDuplicate reports a second reply from the same party in one round.
	ErrDuplicate = errors.New("duplicate reply")
	// ErrUnavailable reports that the peer could not be reached or is not
	// serving; the call may be retried.
	ErrUnavailable = errors.New("unavailable")
	// ErrQuorum reports a round that ended with fewer replies than the
	// federation's quorum.
	ErrQuorum = errors.New("quorum not reached")
	// ErrCheckpoint reports a coordinator checkpoint that cannot be used:
	// truncated, corrupted, of an unknown schema or of another run.
	ErrCheckpoint = errors.New("bad checkpoint")
	// ErrRunStopped reports that the coordinator ended the run before its
	// last round — a round missed its quorum as often as it may be tried,
	// or the aggregator failed — and told the party so. The run will not go
	// on; the party should stop rather than wait.
	ErrRunStopped = errors.New("run stopped by the coordinator")
	// ErrAlgorithmMismatch reports a party and a coordinator configured
	// with different algorithms, protocol versions or numbers of parties.
	ErrAlgorithmMismatch = errors.New("algorithm or protocol mismatch")
)

// RoundError describes a round that failed: which round, which attempt, and
// why. Err is one of the package's sentinel errors or an algorithm's error.
type RoundError struct {
	Round   int
	Attempt int
	Err     error
}

// Error implements error.
func (e *RoundError) Error() string {
	return fmt.Sprintf("fed: round %d attempt %d: %v", e.Round, e.Attempt, e.Err)
}

// Unwrap returns the cause.
func (e *RoundError) Unwrap() error { return e.Err }

// retryable reports whether a party should retry the call that returned err
// after a pause, rather than give up.
func retryable(err error) bool {
	return errors.Is(err, ErrUnavailable)
}
