package fed

import (
	"context"
	"crypto/rand"
	"encoding"
	"errors"
	"fmt"
	"slices"

	"github.com/fedtopic/fedtopic/fed/secagg"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// securePart is a party's secure aggregation instance for one attempt at
// a round.
type securePart struct {
	round, attempt int
	sp             *secagg.Party
}

// prepareSecure answers one stage of a round under secure aggregation.
// With the setup request the party learns (or, on a retried attempt or
// after a restart, reuses the cached vector: no new noise), charges its
// ledger, caches the vector and starts a fresh protocol instance for the
// attempt. Every reply is made by the instance and saved with it before it
// leaves, so a resent request gets the same bytes.
func (p *Party) prepareSecure(ctx context.Context, task *Task) (sub *Submission, pr PartyRound, refused, err error) {
	sub = &Submission{Run: p.cfg.Run, Party: p.cfg.ID, Round: task.Round, Token: task.Token}
	pr = PartyRound{Round: task.Round, Attempt: task.Attempt}
	kind, err := secagg.MessageKind(task.SecAgg)
	if err != nil {
		return nil, pr, nil, fmt.Errorf("fed: party %s: round %d: %w", p.cfg.ID, task.Round, err)
	}
	pr.Stage = kind.String()
	refuse := func(err error) (*Submission, PartyRound, error, error) {
		p.refusal(sub, task.Round, err)
		return sub, pr, err, nil
	}
	sl, ok := p.learner.(SumLearner)
	if !ok {
		return nil, pr, nil, fmt.Errorf("fed: party %s: secure aggregation: the learner of %s does not declare its update a vector of sums", p.cfg.ID, p.cfg.Algorithm)
	}
	if u := p.cache; u != nil && u.Round > task.Round {
		return nil, pr, nil, fmt.Errorf("fed: party %s: coordinator asks for round %d but this party already released round %d; it will not release again", p.cfg.ID, task.Round, u.Round)
	}
	if kind == secagg.KindSetup {
		var fresh bool
		if fresh, refused, err = p.learnSum(ctx, task, sl); err != nil {
			return nil, pr, nil, err
		}
		if refused != nil {
			return refuse(refused)
		}
		u := p.cache
		pr.Resent = !fresh
		sub.Spent = u.Spent
		if fresh {
			pr.Spent = u.Spent
		}
		if u.SecAgg != nil && u.SecAgg.Revealed != 0 && u.SecAgg.Revealed != task.Attempt {
			return refuse(fmt.Errorf("fed: party %s: round %d: already revealed its shares in attempt %d; it takes part in no other attempt at this round", p.cfg.ID, task.Round, u.SecAgg.Revealed))
		}
	}
	sp, err := p.secureInstance(task, sl.SumSpec())
	if err != nil {
		return nil, pr, nil, err
	}
	if sp == nil {
		return refuse(fmt.Errorf("fed: party %s: round %d attempt %d: no secure aggregation state for this attempt (%s request)", p.cfg.ID, task.Round, task.Attempt, kind))
	}
	var input []int64 // only the forward stage, which masks it, reads the vector
	if kind == secagg.KindForward {
		if input, err = decodeGrid(p.cache.payload); err != nil {
			return nil, pr, nil, fmt.Errorf("fed: party %s: round %d: %w", p.cfg.ID, task.Round, err)
		}
	}
	reply, err := sp.sp.Handle(task.SecAgg, input)
	if err != nil {
		// A request the party will not answer (ErrRefused: it could unmask
		// one party's input; ErrStage: out of order). The coordinator
		// counts the party as dropped from the attempt.
		return refuse(fmt.Errorf("fed: party %s: round %d attempt %d: %w", p.cfg.ID, task.Round, task.Attempt, err))
	}
	u := p.cache
	u.SecAgg = &secAggCache{Attempt: task.Attempt, Revealed: u.SecAgg.revealed()}
	if kind == secagg.KindUnmask {
		u.SecAgg.Revealed = task.Attempt
	}
	if err := p.saveSecure(sp); err != nil {
		return nil, pr, nil, fmt.Errorf("fed: party %s: round %d: %w", p.cfg.ID, task.Round, err)
	}
	sub.Payload = reply
	pr.Bytes = len(reply)
	return sub, pr, nil, nil
}

func (s *secAggCache) revealed() int {
	if s == nil {
		return 0
	}
	return s.Revealed
}

// learnSum makes sure the cache holds the party's vector for task's round:
// it reuses a cached one (fresh false) or learns, adds its share of
// distributed noise, charges the ledger (durably) and caches the vector
// with the learner's state before anything leaves. refused is non-nil
// (wrapping ErrBudgetExhausted) when the budget cannot pay for the round.
func (p *Party) learnSum(ctx context.Context, task *Task, sl SumLearner) (fresh bool, refused, err error) {
	if u := p.cache; u != nil && u.Round == task.Round {
		p.log.Info("reusing cached vector", "round", task.Round, "attempt", task.Attempt)
		return false, nil, nil
	}
	spec := sl.SumSpec()
	if rl, ok := sl.(RoundSumLearner); ok {
		spec = rl.SumSpecFor(task.Round)
	}
	if err := checkSumSpec(spec); err != nil {
		return false, nil, fmt.Errorf("fed: party %s: secure aggregation: %w", p.cfg.ID, err)
	}
	if err := p.checkPlan(task.Round); err != nil {
		if errors.Is(err, ErrBudgetExhausted) {
			return false, err, nil
		}
		return false, nil, err
	}
	vec, spent, err := sl.LearnSum(task.Round, task.Broadcast)
	if err != nil {
		return false, nil, fmt.Errorf("fed: party %s: round %d: learn: %w", p.cfg.ID, task.Round, err)
	}
	if len(vec) != spec.Len {
		return false, nil, fmt.Errorf("fed: party %s: round %d: learner returned %d values, its vector has %d", p.cfg.ID, task.Round, len(vec), spec.Len)
	}
	if spec.Sigma > 0 {
		src := p.opts.Noise
		if src == nil {
			src = rng.Secure()
		}
		if t := p.cfg.SecureAggregation.Threshold; !p.noise.For(spec.Sigma, t) {
			if p.noise, err = secagg.NewNoise(spec.Sigma, t); err != nil {
				return false, nil, fmt.Errorf("fed: party %s: round %d: %w", p.cfg.ID, task.Round, err)
			}
		}
		p.noise.Add(vec, src)
		spent = append(slices.Clone(spent), noiseEvent(spec))
	}
	if err := p.charge(ctx, task.Round, spent); err != nil {
		if errors.Is(err, ErrBudgetExhausted) {
			return false, err, nil
		}
		return false, nil, err
	}
	u := &cachedUpdate{Run: p.cfg.Run, Party: p.cfg.ID, Round: task.Round, Spent: spent, payload: encodeGrid(vec)}
	if p.cfg.StateDir != "" {
		if m, ok := p.learner.(encoding.BinaryMarshaler); ok {
			if u.state, err = m.MarshalBinary(); err != nil {
				return false, nil, fmt.Errorf("fed: party %s: round %d: learner state: %w", p.cfg.ID, task.Round, err)
			}
		}
		if err := saveCache(p.cfg.StateDir, u); err != nil {
			return false, nil, fmt.Errorf("fed: party %s: round %d: cache: %w", p.cfg.ID, task.Round, err)
		}
	}
	p.cache, p.secure = u, nil
	return true, nil, nil
}

// secureInstance returns the party's protocol instance for task's attempt:
// the one in memory, one restored from the cache after a restart, or — for
// a setup request — a fresh one with keys drawn from crypto/rand. It
// returns nil when the party has no state for the attempt (a later stage
// of an attempt it did not start, or lost).
func (p *Party) secureInstance(task *Task, spec SumSpec) (*securePart, error) {
	if s := p.secure; s != nil && s.round == task.Round && s.attempt == task.Attempt {
		return s, nil
	}
	u := p.cache
	if u == nil || u.Round != task.Round {
		return nil, nil
	}
	params, err := secAggParams(p.cfg.Run, task.Round, task.Attempt, p.parties, p.cfg.SecureAggregation.Threshold, spec)
	if err != nil {
		return nil, fmt.Errorf("fed: party %s: secure aggregation: %w", p.cfg.ID, err)
	}
	sp, err := secagg.NewParty(params, p.index, rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("fed: party %s: secure aggregation: %w", p.cfg.ID, err)
	}
	kind, _ := secagg.MessageKind(task.SecAgg)
	switch {
	case u.SecAgg != nil && u.SecAgg.Attempt == task.Attempt && u.sastate != nil:
		if err := sp.UnmarshalBinary(u.sastate); err != nil {
			return nil, fmt.Errorf("fed: party %s: restore secure aggregation state: %w", p.cfg.ID, err)
		}
		p.log.Info("restored secure aggregation state", "round", task.Round, "attempt", task.Attempt)
	case kind != secagg.KindSetup:
		return nil, nil
	}
	p.secure = &securePart{round: task.Round, attempt: task.Attempt, sp: sp}
	return p.secure, nil
}

// saveSecure writes the cache with the instance's state (atomically, with
// fsync) before its reply leaves.
func (p *Party) saveSecure(s *securePart) error {
	if p.cfg.StateDir == "" {
		return nil
	}
	state, err := s.sp.MarshalBinary()
	if err != nil {
		return fmt.Errorf("secure aggregation state: %w", err)
	}
	p.cache.sastate = state
	if err := saveCache(p.cfg.StateDir, p.cache); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return nil
}
