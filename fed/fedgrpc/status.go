package fedgrpc

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fedtopic/fedtopic/fed"
)

// errorDomain is the ErrorInfo domain of fedtopic's protocol errors.
const errorDomain = "fedtopic.fed.v1"

// mapping pairs each protocol error with its gRPC status code and the
// ErrorInfo reason that identifies it exactly on the other side.
var mapping = []struct {
	err    error
	code   codes.Code
	reason string
}{
	{fed.ErrBudgetExhausted, codes.ResourceExhausted, "BUDGET_EXHAUSTED"},
	{fed.ErrTooLarge, codes.ResourceExhausted, "TOO_LARGE"},
	{fed.ErrInvalidUpdate, codes.InvalidArgument, "INVALID_UPDATE"},
	{fed.ErrInvalidMessage, codes.InvalidArgument, "INVALID_MESSAGE"},
	{fed.ErrUnknownRun, codes.NotFound, "UNKNOWN_RUN"},
	{fed.ErrUnknownParty, codes.PermissionDenied, "UNKNOWN_PARTY"},
	{fed.ErrPermissionDenied, codes.PermissionDenied, "PERMISSION_DENIED"},
	{fed.ErrStaleRound, codes.FailedPrecondition, "STALE_ROUND"},
	{fed.ErrAlgorithmMismatch, codes.FailedPrecondition, "ALGORITHM_MISMATCH"},
	{fed.ErrDuplicate, codes.AlreadyExists, "DUPLICATE"},
	{fed.ErrRunStopped, codes.Aborted, "RUN_STOPPED"},
	{fed.ErrQuorum, codes.Aborted, "QUORUM"},
	{fed.ErrCheckpoint, codes.Internal, "CHECKPOINT"},
	{fed.ErrUnavailable, codes.Unavailable, "UNAVAILABLE"},
}

// toStatus turns an error of the coordinator into a gRPC status error. The
// status code carries the category, an ErrorInfo the exact protocol error.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	for _, m := range mapping {
		if errors.Is(err, m.err) {
			st, derr := status.New(m.code, err.Error()).WithDetails(&errdetails.ErrorInfo{Reason: m.reason, Domain: errorDomain})
			if derr != nil {
				return status.Error(m.code, err.Error())
			}
			return st.Err()
		}
	}
	return status.Error(codes.Internal, err.Error())
}

// fromStatus turns a gRPC error a party received into an error wrapping the
// matching protocol error: by ErrorInfo reason when the coordinator sent
// one, otherwise by status code (a transport failure is fed.ErrUnavailable,
// gRPC's own message-size refusal fed.ErrTooLarge).
func fromStatus(ctx context.Context, method string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("fedgrpc: %s: %w: %w", method, fed.ErrUnavailable, err)
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			for _, m := range mapping {
				if m.reason == info.GetReason() {
					return &Error{Method: method, Status: st, err: m.err}
				}
			}
		}
	}
	var base error
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded:
		base = fed.ErrUnavailable
	case codes.ResourceExhausted:
		base = fed.ErrTooLarge
	case codes.Unauthenticated, codes.PermissionDenied:
		base = fed.ErrPermissionDenied
	case codes.InvalidArgument:
		base = fed.ErrInvalidMessage
	case codes.Canceled:
		base = context.Canceled
	}
	return &Error{Method: method, Status: st, err: base}
}

// Error is a failed call as a party sees it: the gRPC status, and the
// protocol error it stands for (errors.Is finds it).
type Error struct {
	Method string
	Status *status.Status
	err    error
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("fedgrpc: %s: %s: %s", e.Method, e.Status.Code(), e.Status.Message())
}

// Unwrap returns the protocol error, or nil for a status with no
// counterpart.
func (e *Error) Unwrap() error { return e.err }

// GRPCStatus lets status.FromError and status.Code see the status.
func (e *Error) GRPCStatus() *status.Status { return e.Status }
