package secagg

import "errors"

// Errors a caller can test for with errors.Is.
var (
	// ErrMalformed marks bytes that are not a valid message or state.
	ErrMalformed = errors.New("malformed")
	// ErrStage marks a message that does not fit the stage the party or
	// the coordinator is in: out of order, from another stage, or a
	// repeat whose bytes differ from the first.
	ErrStage = errors.New("out of stage")
	// ErrRefused marks a request a party will not answer because honouring
	// it could unmask an individual input.
	ErrRefused = errors.New("refused")
	// ErrBelowThreshold marks an instance that lost too many parties to go
	// on: fewer than t survivors. Nothing is unmasked.
	ErrBelowThreshold = errors.New("below threshold")
	// ErrOverflow marks a value outside the clip, which could make the sum
	// wrap around the ring.
	ErrOverflow = errors.New("overflow")
	// ErrAborted marks a coordinator that stopped at an earlier error.
	ErrAborted = errors.New("aborted")
)
