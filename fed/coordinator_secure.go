package fed

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fedtopic/fedtopic/fed/secagg"
)

// secureStage is the open stage of a round under secure aggregation: the
// protocol's coordinator and the requests of the stage.
type secureStage struct {
	srv    *secagg.Server
	out    secagg.Out // the requests of the open stage
	stages int        // stages collected so far (0: setup sent)
	// What the attempt's stages saw so far, for its record.
	dropped, refused []string
	spent            []PartySpend // declared with the setup stage's replies
}

// secureResume is an unfinished secure round read from the checkpoint.
type secureResume struct {
	round, attempt, stages int
	state                  []byte
}

// secureWords describes a secure aggregation setting for an error.
func secureWords(t int) string {
	if t == 0 {
		return "secure aggregation off"
	}
	return fmt.Sprintf("secure aggregation with threshold %d", t)
}

// addressedLocked reports whether party i is asked for a reply in the open
// round: always without secure aggregation, and while it is among the
// survivors of the stages with it.
func (c *Coordinator) addressedLocked(i int) bool {
	if c.sa == nil {
		return true
	}
	_, ok := slices.BinarySearch(c.sa.out.To, i)
	return ok
}

// setupSecure checks that the aggregator declares its aggregate a sum and
// that the protocol's parameters are valid for this federation.
func (c *Coordinator) setupSecure() error {
	sum, ok := c.agg.(SumAggregator)
	if !ok {
		return fmt.Errorf("fed: secure aggregation: algorithm %s does not declare its update a vector of sums", c.cfg.Algorithm)
	}
	spec := sum.SumSpec()
	if err := checkSumSpec(spec); err != nil {
		return fmt.Errorf("fed: secure aggregation: algorithm %s: %w", c.cfg.Algorithm, err)
	}
	if _, err := secAggParams(c.cfg.Run, 1, 1, len(c.cfg.Parties), c.cfg.SecureAggregation.Threshold, spec); err != nil {
		return fmt.Errorf("fed: secure aggregation: %w", err)
	}
	if spec.Sigma > 0 {
		if _, err := secagg.PartySigma(spec.Sigma, c.cfg.SecureAggregation.Threshold); err != nil {
			return fmt.Errorf("fed: secure aggregation: %w", err)
		}
	}
	c.sum, c.spec = sum, spec
	return nil
}

// openSecure opens the next attempt of a secure round with its setup
// stage, or resumes the stage a checkpoint left open.
func (c *Coordinator) openSecure() (round, attempt int, err error) {
	if res := c.resume; res != nil {
		c.resume = nil
		if res.round == c.committed+1 {
			c.mu.Lock()
			defer c.mu.Unlock()
			p, err := secAggParams(c.cfg.Run, res.round, res.attempt, len(c.cfg.Parties), c.cfg.SecureAggregation.Threshold, c.spec)
			if err != nil {
				return res.round, res.attempt, err
			}
			srv, err := secagg.NewServer(p)
			if err != nil {
				return res.round, res.attempt, err
			}
			if err := srv.UnmarshalBinary(res.state); err != nil {
				return res.round, res.attempt, fmt.Errorf("fed: resume secure aggregation: %w: %w", ErrCheckpoint, err)
			}
			c.round, c.attempt = res.round, res.attempt
			c.sa = &secureStage{srv: srv, out: srv.Pending(), stages: res.stages}
			c.newTokenLocked()
			clear(c.replies)
			clear(c.rejoined)
			c.rejected = nil
			c.traffic = newTraffic(c.cfg.Parties)
			c.phase = phaseCollecting
			c.signalLocked()
			c.log.Info("secure aggregation resumed", "round", c.round, "attempt", c.attempt, "stage", c.sa.stages)
			return c.round, c.attempt, nil
		}
	}
	return c.open(func(round, attempt int) (*secureStage, error) {
		p, err := secAggParams(c.cfg.Run, round, attempt, len(c.cfg.Parties), c.cfg.SecureAggregation.Threshold, c.spec)
		if err != nil {
			return nil, err
		}
		srv, err := secagg.NewServer(p)
		if err != nil {
			return nil, err
		}
		out, err := srv.Start()
		if err != nil {
			return nil, err
		}
		return &secureStage{srv: srv, out: out}, nil
	})
}

// playSecureRound plays one attempt at the next round under secure
// aggregation: the protocol's four stages as sub-rounds, each with its
// own token and deadline, then AggregateSum on the unmasked sum. It
// reports whether the run is done.
func (c *Coordinator) playSecureRound(ctx context.Context) (bool, error) {
	start := time.Now()
	r, attempt, err := c.openSecure()
	if err != nil {
		return false, &RoundError{Round: r, Attempt: attempt, Err: fmt.Errorf("secure aggregation: %w", err)}
	}
	c.log.Info("round open", "round", r, "attempt", attempt, "secure_threshold", c.quorum)
	if c.sa.stages == 0 {
		if err := c.persist(); err != nil {
			return false, err
		}
	}
	if err := c.crash(CrashAfterRoundStart, r); err != nil {
		return false, err
	}
	sa := c.sa
	var out secagg.Out
	for {
		deadline, err := c.collect(ctx, r)
		if err != nil {
			return false, err
		}
		replies := c.closeStage()
		out, err = sa.srv.Collect(replies)
		c.recordRejected(r, out.Rejected)
		if err != nil {
			return c.abortSecure(r, attempt, start, deadline, err)
		}
		c.mu.Lock()
		sa.stages++
		c.mu.Unlock()
		if out.Done {
			break
		}
		if err := c.persist(); err != nil {
			return false, err
		}
		if err := c.crash(CrashAfterSecureStage, r); err != nil {
			return false, err
		}
		c.mu.Lock()
		sa.out = out
		c.newTokenLocked()
		clear(c.replies)
		c.phase = phaseCollecting
		c.signalLocked()
		c.mu.Unlock()
	}
	rec := c.secureRecord(start, out.Included)
	c.mu.Lock()
	c.sa = nil
	c.mu.Unlock()
	step, err := c.sum.AggregateSum(r, out.Sum, out.Included)
	if err != nil {
		return false, &RoundError{Round: r, Attempt: attempt, Err: fmt.Errorf("aggregate: %w", err)}
	}
	return c.commit(r, attempt, step, rec, start, len(out.Included))
}

// closeStage ends the open stage: it returns the replies, indexed by
// party, and marks addressed live parties that did not answer as dropped.
func (c *Coordinator) closeStage() [][]byte {
	c.mu.Lock()
	c.phase = phaseClosed
	var meters []*callMeter
	for i := range c.replies {
		if m := c.replies[i].meter; m != nil {
			meters = append(meters, m)
		}
	}
	c.mu.Unlock()
	c.awaitTraffic(meters)
	c.mu.Lock()
	defer c.mu.Unlock()
	replies := make([][]byte, len(c.cfg.Parties))
	for _, i := range c.sa.out.To {
		id, rp := c.cfg.Parties[i], &c.replies[i]
		switch {
		case rp.ok:
			replies[i] = rp.payload
			if len(rp.spent) > 0 {
				c.sa.spent = append(c.sa.spent, PartySpend{Party: id, Events: rp.spent})
			}
		case rp.refusal != "":
			c.sa.refused = append(c.sa.refused, id)
		case c.status[i].live():
			c.status[i] = Dropped
			c.sa.dropped = append(c.sa.dropped, id)
			c.log.Warn("party dropped: no reply by the deadline", "party", id, "round", c.round, "stage", c.sa.stages+1)
		default:
			c.sa.dropped = append(c.sa.dropped, id)
		}
	}
	c.signalLocked()
	return replies
}

// recordRejected logs the replies the protocol refused (their reasons
// name positions and counts, never values) and records them; the party
// counts as dropped from the attempt.
func (c *Coordinator) recordRejected(r int, rejected []secagg.Rejection) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rj := range rejected {
		if rj.Party < 0 || rj.Party >= len(c.cfg.Parties) {
			continue
		}
		id := c.cfg.Parties[rj.Party]
		c.log.Warn("secure aggregation reply rejected", "party", id, "round", r, "stage", c.sa.stages+1, "reason", rj.Err)
		c.rejected = append(c.rejected, Rejection{Party: id, Reason: rj.Err.Error()})
		c.sa.dropped = append(c.sa.dropped, id)
	}
}

// secureRecord describes the attempt that just ended; included are the
// parties whose updates are in the sum.
func (c *Coordinator) secureRecord(start time.Time, included []int) RoundRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := RoundRecord{Round: c.round, Attempt: c.attempt, Start: start, Replied: []string{}}
	sr := &SecureRecord{Threshold: c.quorum, Stages: c.sa.stages, Sigma: c.spec.Sigma}
	for _, i := range included {
		rec.Replied = append(rec.Replied, c.cfg.Parties[i])
	}
	sr.Included = slices.Clone(rec.Replied)
	for _, id := range c.cfg.Parties {
		switch {
		case slices.Contains(rec.Replied, id):
		case slices.Contains(c.sa.refused, id):
			rec.Refused = append(rec.Refused, id)
		case slices.Contains(c.sa.dropped, id):
			rec.Dropped = append(rec.Dropped, id)
		}
	}
	for i, id := range c.cfg.Parties {
		if c.rejoined[i] {
			rec.Rejoined = append(rec.Rejoined, id)
		}
	}
	rec.Rejected = c.rejected
	rec.Traffic = slices.Clone(c.traffic)
	rec.Spent = c.sa.spent // every party that sent its masked vector paid, included or not
	rec.Secure = sr
	return rec
}

// abortSecure ends an attempt whose protocol stopped: nothing was
// unmasked and nothing is aggregated. Below the threshold the round is
// retried like a round that missed its quorum; any other failure stops the
// run.
func (c *Coordinator) abortSecure(r, attempt int, start time.Time, deadline bool, cause error) (bool, error) {
	rec := c.secureRecord(start, nil)
	c.mu.Lock()
	stage := c.sa.stages + 1
	c.sa = nil
	capable := 0
	for _, s := range c.status {
		if s != Exhausted {
			capable++
		}
	}
	c.mu.Unlock()
	if err := c.persist(); err != nil { // forget the aborted instance
		return false, err
	}
	err := fmt.Errorf("secure aggregation stage %d of 4: %w", stage, cause)
	if errors.Is(cause, secagg.ErrBelowThreshold) {
		err = fmt.Errorf("%w: %w (%s)", ErrQuorum, err, c.whyMissing(deadline))
	}
	rec.Err = err.Error()
	rec.Duration = time.Since(start)
	c.log.Warn("round aborted: nothing unmasked", "round", r, "attempt", attempt, "stage", stage, "quorum", c.quorum, "dropped", rec.Dropped)
	c.emit(rec)
	if !errors.Is(cause, secagg.ErrBelowThreshold) || capable < c.quorum || attempt >= c.cfg.maxAttempts() {
		return false, &RoundError{Round: r, Attempt: attempt, Err: err}
	}
	return false, nil
}
