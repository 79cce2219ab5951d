package fed_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

// cluster is a federation of Sum parties over the in-process transport whose
// coordinator and parties the test can crash and restart. Every goroutine it
// starts is joined by wait.
type cluster struct {
	t       *testing.T
	sc      fedtest.Scenario
	cfg     fed.CoordinatorConfig
	net     *inproc.Network
	ctx     context.Context
	durable bool // parties keep state directories and ledger files
	dir     string
	wg      sync.WaitGroup

	mu       sync.Mutex
	records  []fed.RoundRecord
	aggs     []*fedtest.SumAggregator // one per coordinator started
	learners [][]*fedtest.SumLearner  // per party, one per start
	ledgers  []*fedtest.Ledger        // per party, the latest
	crash    func(p fed.CrashPoint, round int) error
	onRound  func(fed.RoundRecord)

	// Set before starting: progress callbacks of the coordinator and the
	// parties (called from their goroutines).
	onWait    func(fed.Waiting)
	every     time.Duration
	partyWait func(party string, w fed.PartyWait)
}

// outcome is what one goroutine of the cluster returned.
type outcome[T any] struct {
	v   T
	err error
}

func newCluster(t *testing.T, sc fedtest.Scenario, faults inproc.Faults, durable bool) *cluster {
	t.Helper()
	n, err := inproc.New(nil, faults)
	if err != nil {
		t.Fatalf("inproc.New: %v", err)
	}
	c := &cluster{t: t, sc: sc, cfg: sc.CoordinatorConfig(), net: n, ctx: t.Context(), durable: durable, dir: t.TempDir()}
	c.learners = make([][]*fedtest.SumLearner, len(sc.IDs()))
	c.ledgers = make([]*fedtest.Ledger, len(sc.IDs()))
	if durable {
		c.cfg.StateDir = filepath.Join(c.dir, "coordinator")
	}
	return c
}

// startCoordinator builds a coordinator on the cluster's state directory,
// puts it behind the network and runs it.
func (c *cluster) startCoordinator() (*fed.Coordinator, <-chan outcome[*fed.Result]) {
	c.t.Helper()
	agg := c.sc.Aggregator(c.t)
	coord, err := fed.NewCoordinator(c.cfg, agg, c.sc.Validator(c.t), fed.CoordinatorOptions{
		OnRound: func(r fed.RoundRecord) {
			c.mu.Lock()
			c.records = append(c.records, r)
			f := c.onRound
			c.mu.Unlock()
			if f != nil {
				f(r)
			}
		},
		Crash: func(p fed.CrashPoint, round int) error {
			c.mu.Lock()
			f := c.crash
			c.mu.Unlock()
			if f == nil {
				return nil
			}
			return f(p, round)
		},
		OnWait:        c.onWait,
		ProgressEvery: c.every,
	})
	if err != nil {
		c.t.Fatalf("NewCoordinator: %v", err)
	}
	c.mu.Lock()
	c.aggs = append(c.aggs, agg)
	c.mu.Unlock()
	c.net.SetService(coord)
	ch := make(chan outcome[*fed.Result], 1)
	c.wg.Go(func() {
		res, err := coord.Run(c.ctx)
		ch <- outcome[*fed.Result]{res, err}
	})
	return coord, ch
}

// startParty starts (or restarts) party i with a fresh learner and
// connection; a durable cluster gives it the same state directory and
// ledger file every time.
func (c *cluster) startParty(i int) <-chan outcome[*fed.PartyResult] {
	return c.startPartyWith(i, func(l fed.Learner) fed.Learner { return l }, func(p fed.Protocol) fed.Protocol { return p })
}

func (c *cluster) startPartyWith(i int, wrapL func(fed.Learner) fed.Learner, wrapC func(fed.Protocol) fed.Protocol) <-chan outcome[*fed.PartyResult] {
	c.t.Helper()
	cfg := c.sc.PartyConfig(i)
	ledgerPath := ""
	if c.durable {
		cfg.StateDir = filepath.Join(c.dir, cfg.ID)
		ledgerPath = filepath.Join(c.dir, cfg.ID+".ledger")
	}
	budget := c.sc.Budget
	if budget == 0 {
		budget = 1e300
	}
	ledger, err := fedtest.OpenLedger(budget, ledgerPath)
	if err != nil {
		c.t.Fatalf("OpenLedger: %v", err)
	}
	l := c.sc.Learner(c.t, i)
	var opts fed.PartyOptions
	if f := c.partyWait; f != nil {
		opts.OnWait = func(w fed.PartyWait) { f(cfg.ID, w) }
	}
	p, err := fed.NewParty(cfg, wrapL(l), ledger, wrapC(c.net.Dial(cfg.ID)), opts)
	if err != nil {
		c.t.Fatalf("NewParty(%s): %v", cfg.ID, err)
	}
	c.mu.Lock()
	c.learners[i] = append(c.learners[i], l)
	c.ledgers[i] = ledger
	c.mu.Unlock()
	ch := make(chan outcome[*fed.PartyResult], 1)
	c.wg.Go(func() {
		res, err := p.Run(c.ctx)
		ch <- outcome[*fed.PartyResult]{res, err}
	})
	return ch
}

// startParties starts every party and returns their result channels.
func (c *cluster) startParties() []<-chan outcome[*fed.PartyResult] {
	var chs []<-chan outcome[*fed.PartyResult]
	for i := range c.sc.IDs() {
		chs = append(chs, c.startParty(i))
	}
	return chs
}

func (c *cluster) wait() { c.wg.Wait() }

// committed returns the committed records in the order they were emitted,
// dropping replays of a round already seen.
func (c *cluster) committed() []fed.RoundRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []fed.RoundRecord
	for _, r := range c.records {
		if r.Committed && !slices.ContainsFunc(out, func(o fed.RoundRecord) bool { return o.Round == r.Round }) {
			out = append(out, r)
		}
	}
	return out
}

func (c *cluster) allRecords() []fed.RoundRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.records)
}

// errCrash is what crash hooks return to simulate a killed coordinator.
var errCrash = errors.New("killed")
