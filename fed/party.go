package fed

import (
	"context"
	"encoding"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"math/rand/v2"

	"github.com/fedtopic/fedtopic/fed/secagg"
	"github.com/fedtopic/fedtopic/privacy"
)

// PartyOptions holds a party's collaborators. The zero value is usable.
type PartyOptions struct {
	// Logger receives structured logs; nil discards them. Logs never hold
	// data or payload values.
	Logger *slog.Logger
	// OnRound, if set, is called from Run's goroutine after every round the
	// party answered.
	OnRound func(PartyRound)
	// OnWait, if set, is called from Run's goroutine while the party waits:
	// when it has joined, whenever a request for work comes back empty
	// (every poll timeout of the coordinator), and before every pause
	// between retries of a call the coordinator did not answer.
	OnWait func(PartyWait)
	// Noise is the source of distributed noise under secure aggregation
	// (SumSpec.Sigma). Nil: a generator keyed from crypto/rand. A seeded
	// source makes a simulation reproducible.
	Noise *rand.Rand
}

// WaitKind tells what a party is waiting for.
type WaitKind int

// The kinds of PartyWait.
const (
	WaitJoined WaitKind = iota + 1 // joined; waiting for the first task
	WaitIdle                       // the coordinator has no task for the party yet
	WaitRetry                      // the coordinator did not answer; the party retries
)

// PartyWait describes a party's wait.
type PartyWait struct {
	Kind    WaitKind
	Round   int           // the round the party waits for (its best guess before the first task)
	Parties int           // WaitJoined: the number of parties in the run
	Waited  time.Duration // WaitIdle: since the party last had work; WaitRetry: since the coordinator last answered
	Retry   time.Duration // WaitRetry: the pause before the next try
	GiveUp  time.Duration // WaitRetry: how much longer the party keeps trying
	Err     error         // WaitRetry: why the call failed
}

// PartyRound describes one round from a party's side.
type PartyRound struct {
	Round    int             `json:"round"`
	Attempt  int             `json:"attempt"`
	Stage    string          `json:"stage,omitempty"`  // the secure aggregation request answered, if any
	Resent   bool            `json:"resent,omitempty"` // the cached bytes of an earlier try were resent
	Bytes    int             `json:"bytes"`            // payload size
	Spent    []privacy.Event `json:"spent,omitempty"`  // charged to the ledger (zero when resent)
	Accepted bool            `json:"accepted"`
	Err      string          `json:"error,omitempty"` // why the coordinator did not accept it
}

// PartyResult is what a party has at the end of a run.
type PartyResult struct {
	Rounds int    // the run's committed rounds
	Final  []byte // the final broadcast
}

// Party runs the party side of a federated run: it joins, asks for work,
// computes its update with its Learner, charges its Ledger, caches the exact
// bytes and sends them; on a retried round it resends the cached bytes and
// never computes (or draws noise for) the same release twice. It refuses a
// round its budget cannot pay for and tells the coordinator so.
type Party struct {
	cfg     PartyConfig
	learner Learner
	ledger  Ledger
	conn    Protocol
	opts    PartyOptions
	log     *slog.Logger
	cache   *cachedUpdate
	running atomic.Bool
	next    int       // the round the party expects next, for OnWait
	idle    time.Time // since when the party has had no work
	index   int       // the party's index in the federation
	parties int       // the federation's size
	secure  *securePart
	noise   *secagg.Noise // the share of distributed noise, built once
}

// NewParty returns a party that reaches the coordinator through conn. The
// ledger may be nil only for algorithms that release nothing private. With a
// state directory, a cache left by an earlier process of the same party and
// run is loaded and the learner restored from it.
func NewParty(cfg PartyConfig, l Learner, ledger Ledger, conn Protocol, opts PartyOptions) (*Party, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if l == nil || conn == nil {
		return nil, errors.New("fed: party needs a learner and a connection")
	}
	p := &Party{cfg: cfg, learner: l, ledger: ledger, conn: conn, opts: opts, log: opts.Logger}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.log = p.log.With("party", cfg.ID)
	if cfg.StateDir == "" {
		return p, nil
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("fed: party %s: state: %w", cfg.ID, err)
	}
	u, err := loadCache(cfg.StateDir)
	if err != nil {
		return nil, fmt.Errorf("fed: party %s: cache: %w", cfg.ID, err)
	}
	if u == nil {
		return p, nil
	}
	if u.Run != cfg.Run || u.Party != cfg.ID {
		return nil, fmt.Errorf("fed: party %s: state directory %s holds run %q of party %q, not run %q", cfg.ID, cfg.StateDir, u.Run, u.Party, cfg.Run)
	}
	_, marshals := l.(encoding.BinaryMarshaler)
	um, unmarshals := l.(encoding.BinaryUnmarshaler)
	switch {
	case u.state != nil && unmarshals:
		if err := um.UnmarshalBinary(u.state); err != nil {
			return nil, fmt.Errorf("fed: party %s: restore learner after round %d: %w", cfg.ID, u.Round, err)
		}
	case u.state != nil || marshals:
		return nil, fmt.Errorf("fed: party %s: cache and learner disagree on whether learner state is kept", cfg.ID)
	}
	p.cache = u
	p.log.Info("restored cache", "round", u.Round)
	return p, nil
}

// Run takes part in the run until it is done. It returns an error wrapping
// ErrBudgetExhausted when the party refused a round for lack of budget, and
// gives up when the coordinator stays unreachable longer than GiveUp. Run may
// be called once.
func (p *Party) Run(ctx context.Context) (*PartyResult, error) {
	if !p.running.CompareAndSwap(false, true) {
		return nil, errors.New("fed: party: Run called twice")
	}
	jr, err := retry(ctx, p, func(ctx context.Context) (*JoinReply, error) {
		return p.conn.Join(ctx, &JoinRequest{Run: p.cfg.Run, Party: p.cfg.ID, Algorithm: p.cfg.Algorithm, Protocol: ProtocolVersion,
			SecureThreshold: p.cfg.SecureAggregation.threshold()})
	})
	if err != nil {
		return nil, fmt.Errorf("fed: party %s: join: %w", p.cfg.ID, err)
	}
	if p.cfg.Parties > 0 && jr.Parties != p.cfg.Parties {
		return nil, fmt.Errorf("fed: party %s: run %s has %d parties, but the party was set up for %d: %w", p.cfg.ID, jr.Run, jr.Parties, p.cfg.Parties, ErrAlgorithmMismatch)
	}
	if t := p.cfg.SecureAggregation.threshold(); jr.SecureThreshold != t {
		return nil, fmt.Errorf("fed: party %s: run %s runs %s, the party %s: %w", p.cfg.ID, jr.Run, secureWords(jr.SecureThreshold), secureWords(t), ErrAlgorithmMismatch)
	}
	p.index, p.parties = jr.Index, jr.Parties
	p.log.Info("joined", "run", jr.Run, "parties", jr.Parties, "round", jr.Round)
	p.next = max(jr.Round, 1)
	if p.cache != nil {
		p.next = max(p.next, p.cache.Round+1)
	}
	p.idle = time.Now()
	p.wait(PartyWait{Kind: WaitJoined, Round: p.next, Parties: jr.Parties})
	for {
		task, err := retry(ctx, p, func(ctx context.Context) (*Task, error) {
			return p.conn.Next(ctx, &TaskRequest{Run: p.cfg.Run, Party: p.cfg.ID})
		})
		if err != nil {
			return nil, fmt.Errorf("fed: party %s: next: %w", p.cfg.ID, err)
		}
		switch {
		case task.Run != p.cfg.Run:
			return nil, fmt.Errorf("fed: party %s: task of run %q: %w", p.cfg.ID, task.Run, ErrUnknownRun)
		case task.Idle():
			p.wait(PartyWait{Kind: WaitIdle, Round: p.next, Waited: time.Since(p.idle)})
			continue
		case task.Done:
			if f, ok := p.learner.(Finisher); ok {
				if err := f.Finish(task.Broadcast); err != nil {
					return nil, fmt.Errorf("fed: party %s: finish: %w", p.cfg.ID, err)
				}
			}
			p.log.Info("run done", "rounds", task.Round)
			return &PartyResult{Rounds: task.Round, Final: task.Broadcast}, nil
		}
		if err := p.play(ctx, task); err != nil {
			return nil, err
		}
		p.next, p.idle = task.Round+1, time.Now()
	}
}

func (p *Party) wait(w PartyWait) {
	if p.opts.OnWait != nil {
		p.opts.OnWait(w)
	}
}

// play answers one task.
func (p *Party) play(ctx context.Context, task *Task) error {
	var sub *Submission
	var pr PartyRound
	var refused, err error
	switch secure := p.cfg.SecureAggregation != nil; {
	case secure != (len(task.SecAgg) > 0):
		return fmt.Errorf("fed: party %s: round %d: the coordinator runs %s, the party %s: %w", p.cfg.ID, task.Round,
			map[bool]string{true: "secure aggregation", false: "no secure aggregation"}[len(task.SecAgg) > 0],
			map[bool]string{true: "secure aggregation", false: "no secure aggregation"}[secure], ErrAlgorithmMismatch)
	case secure:
		sub, pr, refused, err = p.prepareSecure(ctx, task)
	default:
		sub, pr, refused, err = p.prepare(ctx, task)
	}
	if err != nil {
		return err
	}
	_, err = retry(ctx, p, func(ctx context.Context) (*Receipt, error) { return p.conn.Submit(ctx, sub) })
	if refused != nil {
		if err != nil {
			p.log.Warn("could not deliver refusal", "round", task.Round, "err", err)
		}
		return fmt.Errorf("fed: party %s: round %d: %w", p.cfg.ID, task.Round, refused)
	}
	switch {
	case err == nil, errors.Is(err, ErrDuplicate):
		pr.Accepted = true
	case errors.Is(err, ErrStaleRound), errors.Is(err, ErrInvalidUpdate), errors.Is(err, ErrTooLarge):
		pr.Err = err.Error()
		p.log.Warn("update not accepted", "round", task.Round, "err", err)
	default:
		return fmt.Errorf("fed: party %s: submit round %d: %w", p.cfg.ID, task.Round, err)
	}
	if p.opts.OnRound != nil {
		p.opts.OnRound(pr)
	}
	return nil
}

// prepare returns the submission answering task: the cached bytes if this
// round was computed before, otherwise a fresh update paid for in the
// ledger and cached before it is returned. refused is non-nil (wrapping
// ErrBudgetExhausted) when the submission is a refusal.
func (p *Party) prepare(ctx context.Context, task *Task) (sub *Submission, pr PartyRound, refused, err error) {
	sub = &Submission{Run: p.cfg.Run, Party: p.cfg.ID, Round: task.Round, Token: task.Token}
	pr = PartyRound{Round: task.Round, Attempt: task.Attempt}
	if u := p.cache; u != nil {
		switch {
		case u.Round == task.Round:
			sub.Payload, sub.Spent = u.payload, u.Spent
			pr.Resent, pr.Bytes = true, len(u.payload)
			p.log.Info("resending cached update", "round", task.Round, "attempt", task.Attempt)
			return sub, pr, nil, nil
		case u.Round > task.Round:
			return nil, pr, nil, fmt.Errorf("fed: party %s: coordinator asks for round %d but this party already released round %d; it will not release again", p.cfg.ID, task.Round, u.Round)
		}
	}
	refuse := func(err error) (*Submission, PartyRound, error, error) {
		p.refusal(sub, task.Round, err)
		return sub, pr, err, nil
	}
	if err := p.checkPlan(task.Round); err != nil {
		if errors.Is(err, ErrBudgetExhausted) {
			return refuse(err)
		}
		return nil, pr, nil, err
	}
	step, err := p.learner.Learn(task.Round, task.Broadcast)
	if err != nil {
		// The coordinator is told that the round is refused and why in
		// words that name no data; the party's own error, which may, stays
		// here and ends the party.
		err = fmt.Errorf("fed: party %s: round %d: learn: %w", p.cfg.ID, task.Round, err)
		p.log.Error("learner failed", "round", task.Round, "err", err)
		p.refusal(sub, task.Round, errLearnerFailed)
		return sub, pr, err, nil
	}
	if err := p.charge(ctx, task.Round, step.Spent); err != nil {
		if errors.Is(err, ErrBudgetExhausted) {
			return refuse(err)
		}
		return nil, pr, nil, err
	}
	u := &cachedUpdate{Run: p.cfg.Run, Party: p.cfg.ID, Round: task.Round, Spent: step.Spent, payload: step.Payload}
	if p.cfg.StateDir != "" {
		if m, ok := p.learner.(encoding.BinaryMarshaler); ok {
			if u.state, err = m.MarshalBinary(); err != nil {
				return nil, pr, nil, fmt.Errorf("fed: party %s: round %d: learner state: %w", p.cfg.ID, task.Round, err)
			}
		}
		if err := saveCache(p.cfg.StateDir, u); err != nil {
			return nil, pr, nil, fmt.Errorf("fed: party %s: round %d: cache: %w", p.cfg.ID, task.Round, err)
		}
	}
	p.cache = u
	sub.Payload, sub.Spent = step.Payload, step.Spent
	pr.Bytes, pr.Spent = len(step.Payload), step.Spent
	return sub, pr, nil, nil
}

// errLearnerFailed is the reason a party sends when its learner fails: the
// learner's own error stays with the party.
var errLearnerFailed = errors.New("the party's learner failed (the party's own log says why)")

// refusal turns sub into a refusal of round for the reason err.
func (p *Party) refusal(sub *Submission, round int, err error) {
	p.log.Warn("refusing round", "round", round, "reason", err)
	sub.Payload = nil
	sub.Refusal = err.Error()
	if len(sub.Refusal) > maxRefusalLen {
		sub.Refusal = sub.Refusal[:maxRefusalLen]
	}
	sub.Refusal = strings.ToValidUTF8(sub.Refusal, "?")
}

// checkPlan checks a Planner's plan for round against the ledger before
// anything is drawn; the error wraps ErrBudgetExhausted when it does not
// fit.
func (p *Party) checkPlan(round int) error {
	pl, ok := p.learner.(Planner)
	if !ok || p.ledger == nil {
		return nil
	}
	plan, err := pl.Plan(round)
	if err != nil {
		return fmt.Errorf("fed: party %s: round %d: plan: %w", p.cfg.ID, round, err)
	}
	if err := p.ledger.Check(plan); err != nil {
		if errors.Is(err, ErrBudgetExhausted) {
			return err
		}
		return fmt.Errorf("fed: party %s: round %d: ledger: %w", p.cfg.ID, round, err)
	}
	return nil
}

// charge records round's release in the ledger (durably) before it
// leaves; the error wraps ErrBudgetExhausted when it does not fit.
func (p *Party) charge(ctx context.Context, round int, spent []privacy.Event) error {
	if len(spent) == 0 {
		return nil
	}
	if p.ledger == nil {
		return fmt.Errorf("fed: party %s: round %d: the learner releases private data but the party has no ledger", p.cfg.ID, round)
	}
	release := fmt.Sprintf("%s/%s/round-%d", p.cfg.Run, p.cfg.ID, round)
	if err := p.ledger.Charge(ctx, release, spent); err != nil {
		if errors.Is(err, ErrBudgetExhausted) {
			return err
		}
		return fmt.Errorf("fed: party %s: round %d: ledger: %w", p.cfg.ID, round, err)
	}
	return nil
}

// retry calls f until it succeeds, fails with an error that is not
// retryable, ctx ends, or the coordinator has been unreachable for longer
// than GiveUp. Pauses grow exponentially from RetryMin to RetryMax.
func retry[T any](ctx context.Context, p *Party, f func(context.Context) (T, error)) (T, error) {
	wait := p.cfg.RetryMin.orDefault(DefaultRetryMin)
	maxWait := p.cfg.RetryMax.orDefault(DefaultRetryMax)
	giveUp := p.cfg.GiveUp.orDefault(DefaultGiveUp)
	var since time.Time
	for {
		v, err := f(ctx)
		if err == nil {
			return v, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			return v, cerr
		}
		if !retryable(err) {
			return v, err
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > giveUp {
			return v, fmt.Errorf("coordinator unreachable for %v: %w", giveUp, err)
		}
		p.log.Debug("retrying", "after", wait, "err", err)
		p.wait(PartyWait{Kind: WaitRetry, Round: p.next, Waited: time.Since(since), Retry: wait, GiveUp: giveUp - time.Since(since), Err: err})
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return v, ctx.Err()
		}
		wait = min(2*wait, maxWait)
	}
}
