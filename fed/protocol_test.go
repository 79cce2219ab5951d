package fed_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/privacy"
)

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// secret is a value no log line may contain.
const secret = 987654.25

// matrix returns a Sum payload of the scenario's shape filled with secret,
// with f applied to its values.
func matrix(sc fedtest.Scenario, rows int, f func([]float64)) []byte {
	m := make([]float64, rows*sc.Vocab)
	for i := range m {
		m[i] = secret
	}
	if f != nil {
		f(m)
	}
	return fedtest.EncodeMatrix(rows, sc.Vocab, m)
}

// TestSubmitRejections drives the protocol by hand through the in-process
// transport: stale and duplicate replies, replays, updates of the wrong
// shape or with non-finite values, and unknown runs, parties and rounds.
// Every rejection leaves the round open for a valid reply, and no log line
// carries payload values.
func TestSubmitRejections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sc := fedtest.Scenario{Parties: 2, Rows: 2, Vocab: 5, Rounds: 2, Seed: 51, RoundTimeout: roundTimeout}
		var logs syncBuffer
		var recs []fed.RoundRecord
		coord, err := fed.NewCoordinator(sc.CoordinatorConfig(), sc.Aggregator(t), sc.Validator(t), fed.CoordinatorOptions{
			Logger:  slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
			OnRound: func(r fed.RoundRecord) { recs = append(recs, r) },
		})
		if err != nil {
			t.Fatal(err)
		}
		n, err := inproc.New(coord, inproc.Faults{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { _, err := coord.Run(ctx); done <- err }()
		p1, p2 := n.Dial("p1"), n.Dial("p2")
		for _, p := range []struct {
			id   string
			conn fed.Protocol
		}{{"p1", p1}, {"p2", p2}} {
			if _, err := p.conn.Join(ctx, &fed.JoinRequest{Run: fedtest.RunID, Party: p.id, Algorithm: fedtest.SumName, Protocol: fed.ProtocolVersion}); err != nil {
				t.Fatalf("Join(%s): %v", p.id, err)
			}
		}
		task1, err := p1.Next(ctx, &fed.TaskRequest{Run: fedtest.RunID, Party: "p1"})
		if err != nil || task1.Round != 1 {
			t.Fatalf("Next(p1) = %+v, %v; want round 1", task1, err)
		}
		valid := func(round int, token []byte) *fed.Submission {
			return &fed.Submission{Run: fedtest.RunID, Party: "p1", Round: round, Token: token, Payload: matrix(sc, 2, nil)}
		}
		with := func(f func(*fed.Submission)) *fed.Submission { s := valid(1, task1.Token); f(s); return s }
		otherToken := bytes.Repeat([]byte{7}, fed.TokenSize)
		round1 := []struct {
			name string
			sub  *fed.Submission
			want error
		}{
			{name: "unknown run", sub: with(func(s *fed.Submission) { s.Run = "other" }), want: fed.ErrUnknownRun},
			{name: "unknown party", sub: with(func(s *fed.Submission) { s.Party = "p9" }), want: fed.ErrUnknownParty},
			{name: "claims another party", sub: with(func(s *fed.Submission) { s.Party = "p2" }), want: fed.ErrPermissionDenied},
			{name: "future round", sub: with(func(s *fed.Submission) { s.Round = 2 }), want: fed.ErrStaleRound},
			{name: "token of another attempt", sub: with(func(s *fed.Submission) { s.Token = otherToken }), want: fed.ErrStaleRound},
			{name: "missing token", sub: with(func(s *fed.Submission) { s.Token = nil }), want: fed.ErrInvalidMessage},
			{name: "round zero", sub: with(func(s *fed.Submission) { s.Round = 0 }), want: fed.ErrInvalidMessage},
			{name: "wrong shape", sub: with(func(s *fed.Submission) { s.Payload = fedtest.EncodeMatrix(1, 2*sc.Vocab, make([]float64, 2*sc.Vocab)) }), want: fed.ErrInvalidUpdate},
			{name: "ragged", sub: with(func(s *fed.Submission) { s.Payload = s.Payload[:len(s.Payload)-3] }), want: fed.ErrInvalidUpdate},
			{name: "NaN", sub: with(func(s *fed.Submission) { s.Payload = matrix(sc, 2, func(m []float64) { m[3] = math.NaN() }) }), want: fed.ErrInvalidUpdate},
			{name: "+Inf", sub: with(func(s *fed.Submission) { s.Payload = matrix(sc, 2, func(m []float64) { m[0] = math.Inf(1) }) }), want: fed.ErrInvalidUpdate},
			{name: "-Inf", sub: with(func(s *fed.Submission) { s.Payload = matrix(sc, 2, func(m []float64) { m[9] = math.Inf(-1) }) }), want: fed.ErrInvalidUpdate},
			{name: "negative", sub: with(func(s *fed.Submission) { s.Payload = matrix(sc, 2, func(m []float64) { m[1] = -secret }) }), want: fed.ErrInvalidUpdate},
			{name: "too large", sub: with(func(s *fed.Submission) { s.Payload = append(s.Payload, 0) }), want: fed.ErrTooLarge},
			{name: "non-finite privacy event", sub: with(func(s *fed.Submission) {
				s.Spent = []privacy.Event{{Mechanism: "laplace", Epsilon: math.NaN(), Count: 1}}
			}), want: fed.ErrInvalidMessage},
		}
		for _, tt := range round1 {
			if _, err := p1.Submit(ctx, tt.sub); !errors.Is(err, tt.want) {
				t.Errorf("round 1, %s: Submit error %v; want %v", tt.name, err, tt.want)
			}
		}
		if _, err := p1.Submit(ctx, valid(1, task1.Token)); err != nil {
			t.Fatalf("round 1: valid Submit after the rejections: %v", err)
		}
		if _, err := p1.Submit(ctx, valid(1, task1.Token)); !errors.Is(err, fed.ErrDuplicate) {
			t.Errorf("round 1: second Submit error %v; want ErrDuplicate", err)
		}
		task2p2, err := p2.Next(ctx, &fed.TaskRequest{Run: fedtest.RunID, Party: "p2"})
		if err != nil || task2p2.Round != 1 {
			t.Fatalf("Next(p2) = %+v, %v; want round 1", task2p2, err)
		}
		if _, err := p2.Submit(ctx, &fed.Submission{Run: fedtest.RunID, Party: "p2", Round: 1, Token: task2p2.Token, Payload: matrix(sc, 2, nil)}); err != nil {
			t.Fatalf("Submit(p2): %v", err)
		}
		task2, err := p1.Next(ctx, &fed.TaskRequest{Run: fedtest.RunID, Party: "p1"})
		if err != nil || task2.Round != 2 || bytes.Equal(task2.Token, task1.Token) {
			t.Fatalf("Next(p1) = %+v, %v; want round 2 with a new token", task2, err)
		}
		round2 := []struct {
			name string
			sub  *fed.Submission
		}{
			{name: "replay of round 1", sub: valid(1, task1.Token)},
			{name: "round 1 with round 2 token", sub: valid(1, task2.Token)},
			{name: "round 2 with round 1 token", sub: valid(2, task1.Token)},
		}
		for _, tt := range round2 {
			if _, err := p1.Submit(ctx, tt.sub); !errors.Is(err, fed.ErrStaleRound) {
				t.Errorf("round 2, %s: Submit error %v; want ErrStaleRound", tt.name, err)
			}
		}
		if len(recs) != 1 || len(recs[0].Rejected) != 7 {
			t.Errorf("round 1 record has %d rejections; want the 7 payload rejections (shape, ragged, NaN, ±Inf, negative, size)", len(recs[0].Rejected))
		}
		if l := logs.String(); strings.Contains(l, "987654") {
			t.Errorf("logs contain payload values:\n%s", l)
		}
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("coordinator stopped early: %v", err)
		default:
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Coordinator.Run after cancel = %v; want context.Canceled", err)
		}
	})
}
