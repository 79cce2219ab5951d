package fed

import (
	"bytes"
	"context"
	"encoding"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
)

// CrashPoint names a place in the coordinator's round loop where a test can
// stop the coordinator as if its process had been killed.
type CrashPoint int

// The crash points of a round, in the order a round passes them.
const (
	CrashAfterRoundStart CrashPoint = iota + 1 // the round is open, nothing received
	CrashMidCollection                         // the first reply has been accepted
	CrashAfterAggregate                        // aggregated, checkpoint not yet written
	CrashAfterPersist                          // checkpoint durable, next round not yet broadcast
	// CrashAfterSecureStage: with secure aggregation, a stage's replies
	// were collected and the checkpoint holding the protocol's state is
	// durable; the next stage's requests are not yet sent.
	CrashAfterSecureStage
)

// String returns the crash point's name.
func (p CrashPoint) String() string {
	switch p {
	case CrashAfterRoundStart:
		return "after-round-start"
	case CrashMidCollection:
		return "mid-collection"
	case CrashAfterAggregate:
		return "after-aggregate"
	case CrashAfterPersist:
		return "after-persist"
	case CrashAfterSecureStage:
		return "after-secure-stage"
	}
	return "unknown"
}

// CoordinatorOptions holds a coordinator's collaborators. The zero value is
// usable.
type CoordinatorOptions struct {
	// Logger receives structured logs; nil discards them. Logs never hold
	// payload values.
	Logger *slog.Logger
	// OnRound, if set, is called from Run's goroutine with the record of
	// every committed round (once its checkpoint is durable) and every
	// attempt that missed its quorum.
	OnRound func(RoundRecord)
	// Crash, if set, is called at every crash point; a non-nil error makes
	// Run return it at once, leaving state on disk exactly as a killed
	// process would. For tests.
	Crash func(p CrashPoint, round int) error
	// Tokens is the source of round tokens. Nil: a generator keyed from
	// crypto/rand.
	Tokens *rand.Rand
	// OnWait, if set, is called from Run's goroutine while it waits for
	// parties: before the first round whenever the set of parties that
	// have joined changes, and every ProgressEvery while a join or a round
	// still waits for someone, so an operator sees who is there and who is
	// missing instead of a silent wait.
	OnWait func(Waiting)
	// ProgressEvery is the interval of OnWait calls while nothing changes.
	// Default DefaultProgressEvery.
	ProgressEvery time.Duration
}

// DefaultProgressEvery is the default CoordinatorOptions.ProgressEvery.
const DefaultProgressEvery = 30 * time.Second

// Waiting describes what the coordinator is waiting for.
type Waiting struct {
	Round   int      // the open round; 0 while waiting for the parties to join
	Attempt int      // the open round's attempt
	Present []string // parties that have joined (Round 0) or replied
	Missing []string // parties still waited for
	Waited  time.Duration
	Left    time.Duration // until the join timeout or the round's deadline
}

// phase is where the coordinator's round loop is.
type phase int

const (
	phaseIdle       phase = iota // before the first round or between rounds
	phaseCollecting              // a round is open for replies
	phaseClosed                  // the round's replies are being aggregated
	phaseDone                    // the run is finished; the final step is served
	phaseStopped                 // Run returned with an error; nothing is served
)

// reply is what a party sent in the open round.
type reply struct {
	ok      bool // an accepted update
	payload []byte
	spent   []privacy.Event
	refusal string     // non-empty: the party refused the round
	meter   *callMeter // the call that carried it, if its transport meters calls
}

func (r *reply) answered() bool { return r.ok || r.refusal != "" }

// Coordinator runs the rounds of one federated run: it opens a round with a
// broadcast, collects and validates the parties' updates until every live
// party has replied or the deadline passes, aggregates if the quorum was
// met, checkpoints, and broadcasts the next round. It implements Service;
// transports call its methods concurrently while Run drives the rounds.
type Coordinator struct {
	cfg      CoordinatorConfig
	agg      Aggregator
	val      Validator
	opts     CoordinatorOptions
	log      *slog.Logger
	quorum   int
	ckptPath string // "" without a state directory
	running  atomic.Bool

	mu           sync.Mutex
	changed      chan struct{} // closed and replaced on every state change
	phase        phase
	round        int // the open round, or the last one opened
	attempt      int
	token        []byte
	bcast        Step // the open round's broadcast; the final step once done
	committed    int
	last         *RoundRecord // record of the last committed round
	status       []PartyStatus
	replies      []reply
	rejected     []Rejection
	rejoined     []bool
	traffic      []Traffic // this attempt
	total        []Traffic
	fetchedFinal []bool
	tokens       *rand.Rand
	stopped      string // why Run ended the run for good; "" if it did not
	toldStop     []bool // parties that were told the run stopped

	sum    SumAggregator // the aggregator, with secure aggregation; nil without
	spec   SumSpec       // its vector, with secure aggregation
	sa     *secureStage  // the open stage of a secure round; nil otherwise
	resume *secureResume // an unfinished secure round loaded from the checkpoint
}

// NewCoordinator returns a coordinator for cfg. With a state directory it
// resumes from the checkpoint there, failing at once with an error wrapping
// ErrCheckpoint if the checkpoint is corrupted or belongs to another run;
// without one (or with none written yet) it starts the run with agg.Init.
func NewCoordinator(cfg CoordinatorConfig, agg Aggregator, val Validator, opts CoordinatorOptions) (*Coordinator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if agg == nil || val == nil {
		return nil, errors.New("fed: coordinator needs an aggregator and a validator")
	}
	n := len(cfg.Parties)
	c := &Coordinator{
		cfg:          cfg,
		agg:          agg,
		val:          val,
		opts:         opts,
		log:          opts.Logger,
		quorum:       cfg.quorum(),
		changed:      make(chan struct{}),
		status:       make([]PartyStatus, n),
		replies:      make([]reply, n),
		rejoined:     make([]bool, n),
		traffic:      newTraffic(cfg.Parties),
		total:        newTraffic(cfg.Parties),
		fetchedFinal: make([]bool, n),
		toldStop:     make([]bool, n),
		tokens:       opts.Tokens,
	}
	c.cfg.Parties = slices.Clone(cfg.Parties)
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.tokens == nil {
		c.tokens = rng.Secure()
	}
	if cfg.SecureAggregation != nil {
		if err := c.setupSecure(); err != nil {
			return nil, err
		}
	}
	if cfg.StateDir != "" {
		if _, ok := agg.(encoding.BinaryMarshaler); !ok {
			return nil, errors.New("fed: coordinator with a state directory needs an aggregator that implements encoding.BinaryMarshaler")
		}
		if _, ok := agg.(encoding.BinaryUnmarshaler); !ok {
			return nil, errors.New("fed: coordinator with a state directory needs an aggregator that implements encoding.BinaryUnmarshaler")
		}
		if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
			return nil, fmt.Errorf("fed: coordinator state: %w", err)
		}
		c.ckptPath = filepath.Join(cfg.StateDir, "checkpoint")
		data, err := os.ReadFile(c.ckptPath)
		switch {
		case err == nil:
			if err := c.restore(data); err != nil {
				return nil, fmt.Errorf("fed: resume from %s: %w", c.ckptPath, err)
			}
			c.log.Info("resumed from checkpoint", "path", c.ckptPath, "committed", c.committed, "done", c.phase == phaseDone)
			return c, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("fed: coordinator state: %w", err)
		}
	}
	step, err := agg.Init()
	if err != nil {
		return nil, fmt.Errorf("fed: aggregator init: %w", err)
	}
	c.bcast = step
	if step.Done {
		c.phase = phaseDone
	}
	if err := c.persist(); err != nil {
		return nil, err
	}
	return c, nil
}

func newTraffic(ids []string) []Traffic {
	t := make([]Traffic, len(ids))
	for i, id := range ids {
		t[i].Party = id
	}
	return t
}

// Run drives the run to its end: it waits for the parties to join, plays
// rounds until the aggregator reports Done, then lets live parties collect
// the final broadcast. It returns a *RoundError when a round misses its
// quorum MaxAttempts times, and ctx's error when ctx ends. After an error
// the coordinator stops serving (calls fail with ErrUnavailable). Run may be
// called once.
func (c *Coordinator) Run(ctx context.Context) (*Result, error) {
	if !c.running.CompareAndSwap(false, true) {
		return nil, errors.New("fed: coordinator: Run called twice")
	}
	res, err := c.run(ctx)
	if err != nil {
		// A round that failed for good ends the run: parties are told so
		// (ErrRunStopped) and stop. Any other error (ctx, a checkpoint that
		// cannot be written, a crash in a test) leaves them retrying, as a
		// restarted coordinator resumes the run.
		var re *RoundError
		final := errors.As(err, &re) && ctx.Err() == nil
		c.mu.Lock()
		c.phase = phaseStopped
		if final {
			c.stopped = fmt.Sprintf("round %d (attempt %d): %v", re.Round, re.Attempt, re.Err)
		}
		c.signalLocked()
		c.mu.Unlock()
		if final {
			c.lingerStopped(ctx)
		}
		return nil, err
	}
	return res, nil
}

// stoppedErrLocked returns the error a stopped coordinator answers party i
// with: ErrRunStopped with the reason if the run ended for good, else
// ErrUnavailable (the party retries).
func (c *Coordinator) stoppedErrLocked(i int) error {
	if c.stopped == "" {
		return fmt.Errorf("fed: coordinator stopped: %w", ErrUnavailable)
	}
	if i >= 0 {
		c.toldStop[i] = true
		c.signalLocked()
	}
	return fmt.Errorf("fed: run %s ended at %s: %w", c.cfg.Run, c.stopped, ErrRunStopped)
}

// lingerStopped waits until every live party has been told that the run
// stopped, or for the linger timeout.
func (c *Coordinator) lingerStopped(ctx context.Context) {
	c.waitUntil(ctx, c.cfg.lingerTimeout(), func() bool {
		for i, s := range c.status {
			if s.live() && !c.toldStop[i] {
				return false
			}
		}
		return true
	})
}

func (c *Coordinator) run(ctx context.Context) (*Result, error) {
	if c.last != nil && c.opts.OnRound != nil {
		rec := *c.last
		rec.Resumed = true
		c.opts.OnRound(rec)
	}
	if !c.isDone() {
		if err := c.waitJoin(ctx); err != nil {
			return nil, err
		}
		for {
			done, err := c.playRound(ctx)
			if err != nil {
				return nil, err
			}
			if done {
				break
			}
		}
	}
	c.linger(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	return &Result{Rounds: c.committed, Final: c.bcast, Traffic: slices.Clone(c.total)}, nil
}

func (c *Coordinator) isDone() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.phase == phaseDone
}

// waitUntil blocks until cond (evaluated under c.mu) holds, timeout passes
// (false) or ctx ends (its error).
func (c *Coordinator) waitUntil(ctx context.Context, timeout time.Duration, cond func() bool) (bool, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		c.mu.Lock()
		ok, ch := cond(), c.changed
		c.mu.Unlock()
		if ok {
			return true, nil
		}
		select {
		case <-ch:
		case <-t.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// waitJoin waits for every party to call in, or for the join timeout. It
// reports who has joined whenever that changes, and every ProgressEvery.
func (c *Coordinator) waitJoin(ctx context.Context) error {
	timeout := c.cfg.joinTimeout()
	pr := c.newProgress(0, 0, timeout)
	defer pr.stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		w, ch := pr.snapshotLocked(), c.changed
		c.mu.Unlock()
		pr.report(w, false)
		if len(w.Missing) == 0 {
			return nil
		}
		select {
		case <-ch:
		case <-pr.tick():
			pr.report(w, true)
		case <-deadline.C:
			c.log.Warn("join timeout: starting without every party", "live", c.Parties())
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// progress reports a wait to CoordinatorOptions.OnWait.
type progress struct {
	c              *Coordinator
	round, attempt int
	start          time.Time
	timeout        time.Duration
	ticker         *time.Ticker // nil without OnWait
	last           []string     // Missing of the last report
	reported       bool
}

func (c *Coordinator) newProgress(round, attempt int, timeout time.Duration) *progress {
	p := &progress{c: c, round: round, attempt: attempt, start: time.Now(), timeout: timeout}
	if c.opts.OnWait != nil {
		every := c.opts.ProgressEvery
		if every <= 0 {
			every = DefaultProgressEvery
		}
		p.ticker = time.NewTicker(every)
	}
	return p
}

// tick returns the channel of the progress ticker (nil: never ready).
func (p *progress) tick() <-chan time.Time {
	if p.ticker == nil {
		return nil
	}
	return p.ticker.C
}

func (p *progress) stop() {
	if p.ticker != nil {
		p.ticker.Stop()
	}
}

// snapshotLocked describes the wait: before the first round who has
// joined, in a round who has replied.
func (p *progress) snapshotLocked() Waiting {
	c := p.c
	w := Waiting{Round: p.round, Attempt: p.attempt, Waited: time.Since(p.start)}
	w.Left = max(p.timeout-w.Waited, 0)
	for i, id := range c.cfg.Parties {
		var here bool
		if p.round == 0 {
			here = c.status[i].live()
		} else {
			if !c.addressedLocked(i) {
				continue // dropped from the secure round's stages
			}
			here = c.replies[i].answered()
			if !here && c.status[i] == Exhausted {
				continue // refused earlier; not waited for
			}
		}
		if here {
			w.Present = append(w.Present, id)
		} else {
			w.Missing = append(w.Missing, id)
		}
	}
	return w
}

// report calls OnWait with w when the parties missing changed since the
// last report (the first report included) or force is set. The end of a
// wait that was reported is reported too (Missing empty).
func (p *progress) report(w Waiting, force bool) {
	if p.c.opts.OnWait == nil || (len(w.Missing) == 0 && !p.reported) {
		return // nobody was ever missing: nothing to tell
	}
	if !force && p.reported && slices.Equal(w.Missing, p.last) {
		return
	}
	p.last, p.reported = w.Missing, true
	p.c.opts.OnWait(w)
}

// linger waits until every live party has collected the final broadcast, or
// for the linger timeout.
func (c *Coordinator) linger(ctx context.Context) {
	c.waitUntil(ctx, c.cfg.lingerTimeout(), func() bool {
		for i, s := range c.status {
			if s.live() && !c.fetchedFinal[i] {
				return false
			}
		}
		return true
	})
}

// playRound plays one attempt at the next round. It reports whether the run
// is done.
func (c *Coordinator) playRound(ctx context.Context) (bool, error) {
	if c.sum != nil {
		return c.playSecureRound(ctx)
	}
	start := time.Now()
	r, attempt, _ := c.open(nil)
	c.log.Info("round open", "round", r, "attempt", attempt)
	if err := c.crash(CrashAfterRoundStart, r); err != nil {
		return false, err
	}
	deadline, err := c.collect(ctx, r)
	if err != nil {
		return false, err
	}
	updates, rec, capable := c.close(start)
	if len(updates) < c.quorum {
		why := c.whyMissing(deadline)
		err := fmt.Errorf("%w: %d valid updates, quorum %d (%s)", ErrQuorum, len(updates), c.quorum, why)
		if capable < c.quorum {
			err = fmt.Errorf("%w: only %d of %d parties can still reply, quorum %d (%s): %w", ErrQuorum, capable, len(c.cfg.Parties), c.quorum, why, ErrBudgetExhausted)
		}
		rec.Err = err.Error()
		rec.Duration = time.Since(start)
		c.log.Warn("round aborted", "round", r, "attempt", attempt, "replied", len(updates), "quorum", c.quorum, "dropped", rec.Dropped)
		c.emit(rec)
		if capable < c.quorum || attempt >= c.cfg.maxAttempts() {
			return false, &RoundError{Round: r, Attempt: attempt, Err: err}
		}
		return false, nil
	}
	step, err := c.agg.Aggregate(r, updates)
	if err != nil {
		return false, &RoundError{Round: r, Attempt: attempt, Err: fmt.Errorf("aggregate: %w", err)}
	}
	return c.commit(r, attempt, step, rec, start, len(updates))
}

// commit makes step the outcome of round r: it checkpoints, then opens
// the next round's broadcast (or the final one) to the parties. It reports
// whether the run is done.
func (c *Coordinator) commit(r, attempt int, step Step, rec RoundRecord, start time.Time, replied int) (bool, error) {
	if err := c.crash(CrashAfterAggregate, r); err != nil {
		return false, err
	}
	rec.Committed = true
	rec.Done = step.Done
	rec.CoordinatorSpent = step.Spent
	rec.Duration = time.Since(start)
	c.mu.Lock()
	c.bcast, c.committed, c.last = step, r, &rec
	c.mu.Unlock()
	if err := c.persist(); err != nil {
		return false, err
	}
	if err := c.crash(CrashAfterPersist, r); err != nil {
		return false, err
	}
	c.mu.Lock()
	if step.Done {
		c.phase = phaseDone
	} else {
		c.phase = phaseIdle
	}
	c.signalLocked()
	c.mu.Unlock()
	rec.Step = &step
	c.log.Info("round committed", "round", r, "attempt", attempt, "replied", replied, "dropped", rec.Dropped, "duration", rec.Duration)
	c.emit(rec)
	return step.Done, nil
}

func (c *Coordinator) emit(rec RoundRecord) {
	if c.opts.OnRound != nil {
		c.opts.OnRound(rec)
	}
}

func (c *Coordinator) crash(p CrashPoint, round int) error {
	if c.opts.Crash == nil {
		return nil
	}
	if err := c.opts.Crash(p, round); err != nil {
		return fmt.Errorf("fed: round %d: crash at %v: %w", round, p, err)
	}
	return nil
}

// whyMissing says, party by party, why the closed round lacks an update:
// the party refused (with its reason), its update was rejected, it sent
// nothing by the deadline (or, when the round closed early, had not
// replied yet), or it never called in.
func (c *Coordinator) whyMissing(deadline bool) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for i, id := range c.cfg.Parties {
		rp := &c.replies[i]
		switch {
		case rp.ok:
			continue
		case rp.refusal != "":
			out = append(out, fmt.Sprintf("%s refused: %s", id, rp.refusal))
		case slices.ContainsFunc(c.rejected, func(r Rejection) bool { return r.Party == id }):
			out = append(out, fmt.Sprintf("%s sent an update that was rejected", id))
		case c.status[i] == Absent:
			out = append(out, fmt.Sprintf("%s never called in", id))
		case !deadline:
			out = append(out, fmt.Sprintf("%s had not replied yet", id))
		default:
			out = append(out, fmt.Sprintf("%s sent nothing by the deadline", id))
		}
	}
	return strings.Join(out, "; ")
}

// open starts the next attempt of the round after the last committed one.
// With secure aggregation, stage (called under the lock with the round and
// attempt) returns the attempt's first stage, which opens with it.
func (c *Coordinator) open(stage func(round, attempt int) (*secureStage, error)) (round, attempt int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.round != c.committed+1 {
		c.round, c.attempt = c.committed+1, 0
	}
	c.attempt++
	if stage != nil {
		if c.sa, err = stage(c.round, c.attempt); err != nil {
			return c.round, c.attempt, err
		}
	}
	c.newTokenLocked()
	clear(c.replies)
	clear(c.rejoined)
	c.rejected = nil
	c.traffic = newTraffic(c.cfg.Parties)
	c.phase = phaseCollecting
	c.signalLocked()
	return c.round, c.attempt, nil
}

// newTokenLocked draws the token replies to the open round (or stage)
// must echo.
func (c *Coordinator) newTokenLocked() {
	c.token = binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, c.tokens.Uint64()), c.tokens.Uint64())
}

// collect waits until the open round is complete or its deadline passes
// (then it reports true), reporting who it waits for every ProgressEvery.
func (c *Coordinator) collect(ctx context.Context, r int) (bool, error) {
	deadline := time.NewTimer(c.cfg.roundTimeout())
	defer deadline.Stop()
	c.mu.Lock()
	pr := c.newProgress(r, c.attempt, c.cfg.roundTimeout())
	c.mu.Unlock()
	defer pr.stop()
	midFired := false
	for {
		c.mu.Lock()
		complete, got, ch := c.completeLocked(), c.updatesLocked(), c.changed
		w := pr.snapshotLocked()
		c.mu.Unlock()
		if got > 0 && !midFired {
			midFired = true
			if err := c.crash(CrashMidCollection, r); err != nil {
				return false, err
			}
		}
		if complete {
			return false, nil
		}
		select {
		case <-ch:
		case <-pr.tick():
			pr.report(w, true)
		case <-deadline.C:
			c.log.Info("round deadline", "round", r)
			return true, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

func (c *Coordinator) updatesLocked() int {
	n := 0
	for i := range c.replies {
		if c.replies[i].ok {
			n++
		}
	}
	return n
}

// completeLocked reports whether the open round need wait no longer: every
// party has answered, or the quorum is met and no live party is still
// expected, or so many parties are out of budget that the quorum cannot be
// met.
func (c *Coordinator) completeLocked() bool {
	answered, pending, capable, addressed := 0, 0, 0, 0
	for i, s := range c.status {
		if !c.addressedLocked(i) {
			continue
		}
		addressed++
		switch {
		case c.replies[i].answered():
			answered++
		case s.live():
			pending++
		}
		if s != Exhausted {
			capable++
		}
	}
	switch {
	case answered == addressed, capable < c.quorum:
		return true
	}
	return pending == 0 && c.updatesLocked() >= c.quorum
}

// close ends the open round: it collects the accepted updates in party
// order, marks live parties that did not answer as dropped, and describes
// the attempt. capable counts parties that still have budget.
func (c *Coordinator) close(start time.Time) (updates []Update, rec RoundRecord, capable int) {
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
	rec = RoundRecord{Round: c.round, Attempt: c.attempt, Start: start, Replied: []string{}}
	for i, id := range c.cfg.Parties {
		rp := &c.replies[i]
		switch {
		case rp.ok:
			updates = append(updates, Update{Party: i, ID: id, Payload: rp.payload, Spent: rp.spent})
			rec.Replied = append(rec.Replied, id)
			if len(rp.spent) > 0 {
				rec.Spent = append(rec.Spent, PartySpend{Party: id, Events: rp.spent})
			}
		case rp.refusal != "":
			rec.Refused = append(rec.Refused, id)
		case c.status[i].live():
			c.status[i] = Dropped
			rec.Dropped = append(rec.Dropped, id)
			c.log.Warn("party dropped: no reply by the deadline", "party", id, "round", c.round)
		}
		if c.rejoined[i] {
			rec.Rejoined = append(rec.Rejoined, id)
		}
		if c.status[i] != Exhausted {
			capable++
		}
	}
	rec.Rejected = c.rejected
	rec.Traffic = slices.Clone(c.traffic)
	c.signalLocked()
	return updates, rec, capable
}

// trafficWait bounds how long close waits for a transport to report the
// bytes of a call whose reply it accepted. A transport reports them right
// after the handler returns, so the bound only matters if one never does.
const trafficWait = 5 * time.Second

// awaitTraffic waits until the transports have reported the bytes of the
// calls in meters, so the round's byte counts include every answer.
func (c *Coordinator) awaitTraffic(meters []*callMeter) {
	if len(meters) == 0 {
		return
	}
	t := time.NewTimer(trafficWait)
	defer t.Stop()
	for _, m := range meters {
		select {
		case <-m.reported:
		case <-t.C:
			c.log.Warn("round byte counts closed without a transport's report", "round", c.round)
			return
		}
	}
}

// signalLocked wakes everyone waiting for a state change.
func (c *Coordinator) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// seenLocked records that party i called in.
func (c *Coordinator) seenLocked(i int) {
	switch c.status[i] {
	case Absent:
		c.status[i] = Joined
		c.log.Info("party joined", "party", c.cfg.Parties[i])
	case Dropped, Exhausted:
		c.status[i] = Rejoined
		if c.phase == phaseCollecting {
			c.rejoined[i] = true
		}
		c.log.Info("party rejoined", "party", c.cfg.Parties[i])
	default:
		return
	}
	c.signalLocked()
}

// identify checks a message's run and claimed party, and that the claim
// matches the identity the transport authenticated, if any.
func (c *Coordinator) identify(ctx context.Context, run, party string) (int, error) {
	if run != c.cfg.Run {
		return -1, fmt.Errorf("fed: run %q: %w", run, ErrUnknownRun)
	}
	i := indexOf(c.cfg.Parties, party)
	if i < 0 {
		return -1, fmt.Errorf("fed: party %q: %w", party, ErrUnknownParty)
	}
	if peer, ok := PeerFromContext(ctx); ok && peer != party {
		return -1, fmt.Errorf("fed: authenticated as %q, claims %q: %w", peer, party, ErrPermissionDenied)
	}
	return i, nil
}

// Join implements Protocol.
func (c *Coordinator) Join(ctx context.Context, req *JoinRequest) (*JoinReply, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("fed: join: %w", err)
	}
	i, err := c.identify(ctx, req.Run, req.Party)
	if err != nil {
		return nil, err
	}
	if req.Protocol != ProtocolVersion {
		return nil, fmt.Errorf("fed: party %s speaks protocol %d, coordinator %d: %w", req.Party, req.Protocol, ProtocolVersion, ErrAlgorithmMismatch)
	}
	if req.Algorithm != c.cfg.Algorithm {
		return nil, fmt.Errorf("fed: party %s runs %q, the federation %q: %w", req.Party, req.Algorithm, c.cfg.Algorithm, ErrAlgorithmMismatch)
	}
	if t := c.cfg.SecureAggregation.threshold(); req.SecureThreshold != t {
		return nil, fmt.Errorf("fed: party %s: %s, the federation %s: %w", req.Party, secureWords(req.SecureThreshold), secureWords(t), ErrAlgorithmMismatch)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == phaseStopped {
		return nil, c.stoppedErrLocked(i)
	}
	c.seenLocked(i)
	round := c.committed
	if c.phase == phaseCollecting {
		round = c.round
	}
	return &JoinReply{Run: c.cfg.Run, Algorithm: c.cfg.Algorithm, Parties: len(c.cfg.Parties), Round: round,
		SecureThreshold: c.cfg.SecureAggregation.threshold(), Index: i}, nil
}

// Next implements Protocol. It returns the open round's task if the party
// has not answered it yet, the final broadcast once the run is done, and an
// idle task if neither happens within the poll timeout.
func (c *Coordinator) Next(ctx context.Context, req *TaskRequest) (*Task, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("fed: next: %w", err)
	}
	i, err := c.identify(ctx, req.Run, req.Party)
	if err != nil {
		return nil, err
	}
	poll := time.NewTimer(c.cfg.pollTimeout())
	defer poll.Stop()
	for {
		c.mu.Lock()
		if c.phase != phaseStopped {
			c.seenLocked(i)
		}
		switch c.phase {
		case phaseStopped:
			err := c.stoppedErrLocked(i)
			c.mu.Unlock()
			return nil, err
		case phaseDone:
			c.fetchedFinal[i] = true
			t := &Task{Run: c.cfg.Run, Round: c.committed, Done: true, Broadcast: c.bcast.broadcastFor(i)}
			c.signalLocked()
			c.mu.Unlock()
			return t, nil
		case phaseCollecting:
			if !c.replies[i].answered() && c.addressedLocked(i) {
				t := &Task{Run: c.cfg.Run, Round: c.round, Attempt: c.attempt, Token: slices.Clone(c.token), Broadcast: c.bcast.broadcastFor(i)}
				if c.sa != nil {
					t.SecAgg = c.sa.out.For(i)
					if c.sa.stages > 0 {
						t.Broadcast = nil // the party learnt from it in the first stage
					}
				}
				c.mu.Unlock()
				return t, nil
			}
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-poll.C:
			return &Task{Run: c.cfg.Run}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Submit implements Protocol: it accepts one reply per party in the open
// round after checking round, token, size and the algorithm's validation.
func (c *Coordinator) Submit(ctx context.Context, s *Submission) (*Receipt, error) {
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("fed: submit: %w", err)
	}
	i, err := c.identify(ctx, s.Run, s.Party)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	err = c.admissibleLocked(i, s)
	secure := c.sa != nil
	c.mu.Unlock()
	if err != nil {
		c.log.Info("reply refused", "party", s.Party, "round", s.Round, "reason", err)
		return nil, err
	}
	if secure && s.Refusal == "" {
		// The protocol checks the reply itself when the stage is collected;
		// the coordinator never sees an individual update to validate.
		if max := SecAggMaxMessage(len(c.cfg.Parties), c.spec.Len); len(s.Payload) > max {
			return nil, c.reject(i, s.Round, fmt.Errorf("secure aggregation reply of %d bytes > %d: %w", len(s.Payload), max, ErrTooLarge))
		}
	} else if s.Refusal == "" {
		if max := c.val.MaxUpdateSize(); len(s.Payload) > max {
			return nil, c.reject(i, s.Round, fmt.Errorf("update of %d bytes > %d: %w", len(s.Payload), max, ErrTooLarge))
		}
		if err := c.val.CheckUpdate(s.Round, s.Payload); err != nil {
			return nil, c.reject(i, s.Round, fmt.Errorf("%w: %w", ErrInvalidUpdate, err))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.admissibleLocked(i, s); err != nil {
		return nil, err
	}
	c.seenLocked(i)
	if s.Refusal != "" {
		c.replies[i] = reply{refusal: s.Refusal, meter: meterFromContext(ctx)}
		c.status[i] = Exhausted
		c.log.Warn("party refused the round", "party", s.Party, "round", s.Round, "reason", s.Refusal)
	} else {
		c.replies[i] = reply{ok: true, payload: s.Payload, spent: s.Spent, meter: meterFromContext(ctx)}
	}
	c.signalLocked()
	return &Receipt{Round: s.Round}, nil
}

// admissibleLocked checks that s answers the open round and attempt and is
// the party's first answer to it.
func (c *Coordinator) admissibleLocked(i int, s *Submission) error {
	switch {
	case c.phase == phaseStopped:
		return c.stoppedErrLocked(i)
	case c.phase != phaseCollecting || s.Round != c.round:
		return fmt.Errorf("fed: reply for round %d, but round %d is %s: %w", s.Round, c.round, c.phaseWord(), ErrStaleRound)
	case !bytes.Equal(s.Token, c.token):
		return fmt.Errorf("fed: round %d: token of another attempt or run: %w", s.Round, ErrStaleRound)
	case c.replies[i].answered():
		return fmt.Errorf("fed: round %d: party %s already replied: %w", s.Round, s.Party, ErrDuplicate)
	case !c.addressedLocked(i):
		return fmt.Errorf("fed: round %d: party %s dropped out of this secure aggregation: %w", s.Round, s.Party, ErrStaleRound)
	}
	return nil
}

func (c *Coordinator) phaseWord() string {
	if c.phase == phaseCollecting {
		return "open"
	}
	return "closed"
}

// reject logs and records an invalid update and returns the error for the
// party.
func (c *Coordinator) reject(i, round int, err error) error {
	id := c.cfg.Parties[i]
	c.log.Warn("update rejected", "party", id, "round", round, "reason", err)
	c.mu.Lock()
	if c.phase == phaseCollecting && c.round == round {
		c.rejected = append(c.rejected, Rejection{Party: id, Reason: err.Error()})
	}
	c.mu.Unlock()
	return fmt.Errorf("fed: round %d: party %s: %w", round, id, err)
}

// Traffic implements Service.
func (c *Coordinator) Traffic(party string, round, up, down int) {
	i := indexOf(c.cfg.Parties, party)
	if i < 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total[i].Up += int64(up)
	c.total[i].Down += int64(down)
	if round == c.round && (c.phase == phaseCollecting || c.phase == phaseClosed) {
		c.traffic[i].Up += int64(up)
		c.traffic[i].Down += int64(down)
	}
}

// Parties returns every party's state, in index order.
func (c *Coordinator) Parties() []PartyInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]PartyInfo, len(c.status))
	for i, s := range c.status {
		out[i] = PartyInfo{ID: c.cfg.Parties[i], Status: s}
	}
	return out
}

// Committed returns the number of rounds committed so far.
func (c *Coordinator) Committed() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.committed
}
