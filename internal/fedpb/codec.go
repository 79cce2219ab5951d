package fedpb

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/proto"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
)

// Marshal encodes a wire message deterministically.
func Marshal(m proto.Message) ([]byte, error) {
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("fedpb: encode %T: %w", m, err)
	}
	return b, nil
}

// unmarshal decodes b into m, wrapping failures in fed.ErrInvalidMessage.
func unmarshal(b []byte, m proto.Message) error {
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("fedpb: decode %T: %w: %w", m, fed.ErrInvalidMessage, err)
	}
	return nil
}

// toInt converts a wire counter to int, refusing values above MaxInt32.
func toInt(name string, v uint64) (int, error) {
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("fedpb: %s = %d: %w", name, v, fed.ErrInvalidMessage)
	}
	return int(v), nil
}

// fromInt converts a validated non-negative int to a wire counter (negative
// values, which Validate rejects, encode as 0).
func fromInt(v int) uint32 {
	if v < 0 {
		return 0
	}
	return uint32(min(v, math.MaxInt32))
}

// checked runs a fed message's Validate and wraps a failure.
func checked[T interface{ Validate() error }](m T, err error) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	if err := m.Validate(); err != nil {
		var zero T
		return zero, fmt.Errorf("fedpb: %w", err)
	}
	return m, nil
}

// FromJoinRequest converts a fed message to its wire form.
func FromJoinRequest(m *fed.JoinRequest) *JoinRequest {
	return &JoinRequest{Run: m.Run, Party: m.Party, Algorithm: m.Algorithm, Protocol: fromInt(m.Protocol), SecureThreshold: fromInt(m.SecureThreshold)}
}

// ToFed converts a wire message to its validated fed form.
func (x *JoinRequest) ToFed() (*fed.JoinRequest, error) {
	p, err1 := toInt("protocol", uint64(x.GetProtocol()))
	t, err2 := toInt("secure threshold", uint64(x.GetSecureThreshold()))
	return checked(&fed.JoinRequest{Run: x.GetRun(), Party: x.GetParty(), Algorithm: x.GetAlgorithm(), Protocol: p, SecureThreshold: t}, firstErr(err1, err2))
}

// FromJoinReply converts a fed message to its wire form.
func FromJoinReply(m *fed.JoinReply) *JoinReply {
	return &JoinReply{Run: m.Run, Algorithm: m.Algorithm, Parties: fromInt(m.Parties), Round: fromInt(m.Round),
		SecureThreshold: fromInt(m.SecureThreshold), Index: fromInt(m.Index)}
}

// ToFed converts a wire message to its validated fed form.
func (x *JoinReply) ToFed() (*fed.JoinReply, error) {
	n, err1 := toInt("parties", uint64(x.GetParties()))
	r, err2 := toInt("round", uint64(x.GetRound()))
	t, err3 := toInt("secure threshold", uint64(x.GetSecureThreshold()))
	i, err4 := toInt("index", uint64(x.GetIndex()))
	return checked(&fed.JoinReply{Run: x.GetRun(), Algorithm: x.GetAlgorithm(), Parties: n, Round: r, SecureThreshold: t, Index: i},
		firstErr(err1, err2, err3, err4))
}

// FromTaskRequest converts a fed message to its wire form.
func FromTaskRequest(m *fed.TaskRequest) *TaskRequest {
	return &TaskRequest{Run: m.Run, Party: m.Party}
}

// ToFed converts a wire message to its validated fed form.
func (x *TaskRequest) ToFed() (*fed.TaskRequest, error) {
	return checked(&fed.TaskRequest{Run: x.GetRun(), Party: x.GetParty()}, nil)
}

// FromTask converts a fed message to its wire form.
func FromTask(m *fed.Task) *Task {
	return &Task{Run: m.Run, Round: fromInt(m.Round), Attempt: fromInt(m.Attempt), Token: m.Token, Broadcast: m.Broadcast, Done: m.Done, Secagg: m.SecAgg}
}

// ToFed converts a wire message to its validated fed form.
func (x *Task) ToFed() (*fed.Task, error) {
	r, err1 := toInt("round", uint64(x.GetRound()))
	a, err2 := toInt("attempt", uint64(x.GetAttempt()))
	return checked(&fed.Task{Run: x.GetRun(), Round: r, Attempt: a, Token: x.GetToken(), Broadcast: x.GetBroadcast(), Done: x.GetDone(), SecAgg: x.GetSecagg()}, firstErr(err1, err2))
}

// FromSubmission converts a fed message to its wire form.
func FromSubmission(m *fed.Submission) *Submission {
	x := &Submission{Run: m.Run, Party: m.Party, Round: fromInt(m.Round), Token: m.Token, Payload: m.Payload, Refusal: m.Refusal}
	for _, e := range m.Spent {
		x.Spent = append(x.Spent, &PrivacyEvent{Mechanism: e.Mechanism, Epsilon: e.Epsilon, Delta: e.Delta, Sigma: e.Sigma,
			Sensitivity: e.Sensitivity, Unit: e.Unit, Count: uint64(max(e.Count, 0)),
			SamplingRate: e.SamplingRate, Categories: fromInt(e.Categories), Assumption: e.Assumption})
	}
	return x
}

// ToFed converts a wire message to its validated fed form.
func (x *Submission) ToFed() (*fed.Submission, error) {
	r, err := toInt("round", uint64(x.GetRound()))
	m := &fed.Submission{Run: x.GetRun(), Party: x.GetParty(), Round: r, Token: x.GetToken(), Payload: x.GetPayload(), Refusal: x.GetRefusal()}
	for _, e := range x.GetSpent() {
		n, cerr := toInt("event count", e.GetCount())
		k, kerr := toInt("event categories", uint64(e.GetCategories()))
		err = firstErr(err, cerr, kerr)
		m.Spent = append(m.Spent, privacy.Event{Mechanism: e.GetMechanism(), Epsilon: e.GetEpsilon(), Delta: e.GetDelta(), Sigma: e.GetSigma(),
			Sensitivity: e.GetSensitivity(), Unit: e.GetUnit(), Count: n,
			SamplingRate: e.GetSamplingRate(), Categories: k, Assumption: e.GetAssumption()})
	}
	return checked(m, err)
}

// FromReceipt converts a fed message to its wire form.
func FromReceipt(m *fed.Receipt) *Receipt { return &Receipt{Round: fromInt(m.Round)} }

// ToFed converts a wire message to its validated fed form.
func (x *Receipt) ToFed() (*fed.Receipt, error) {
	r, err := toInt("round", uint64(x.GetRound()))
	return checked(&fed.Receipt{Round: r}, err)
}

// UnmarshalJoinRequest decodes and validates a JoinRequest.
func UnmarshalJoinRequest(b []byte) (*fed.JoinRequest, error) {
	var x JoinRequest
	if err := unmarshal(b, &x); err != nil {
		return nil, err
	}
	return x.ToFed()
}

// UnmarshalJoinReply decodes and validates a JoinReply.
func UnmarshalJoinReply(b []byte) (*fed.JoinReply, error) {
	var x JoinReply
	if err := unmarshal(b, &x); err != nil {
		return nil, err
	}
	return x.ToFed()
}

// UnmarshalTaskRequest decodes and validates a TaskRequest.
func UnmarshalTaskRequest(b []byte) (*fed.TaskRequest, error) {
	var x TaskRequest
	if err := unmarshal(b, &x); err != nil {
		return nil, err
	}
	return x.ToFed()
}

// UnmarshalTask decodes and validates a Task.
func UnmarshalTask(b []byte) (*fed.Task, error) {
	var x Task
	if err := unmarshal(b, &x); err != nil {
		return nil, err
	}
	return x.ToFed()
}

// UnmarshalSubmission decodes and validates a Submission.
func UnmarshalSubmission(b []byte) (*fed.Submission, error) {
	var x Submission
	if err := unmarshal(b, &x); err != nil {
		return nil, err
	}
	return x.ToFed()
}

// UnmarshalReceipt decodes and validates a Receipt.
func UnmarshalReceipt(b []byte) (*fed.Receipt, error) {
	var x Receipt
	if err := unmarshal(b, &x); err != nil {
		return nil, err
	}
	return x.ToFed()
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
