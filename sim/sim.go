package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/topic"
)

// DefaultDelta is the δ at which Gaussian releases are reported when the
// budget gives none.
const DefaultDelta = 1e-5

// Scenario is one simulated federated run: an algorithm, its parameters,
// one corpus per party over a shared vocabulary, and how the federation
// behaves. The zero value of each optional field means the default in its
// comment.
type Scenario struct {
	Algorithm fed.Algorithm
	Params    json.RawMessage // the algorithm's parameters
	Run       string          // run id; default "sim"
	Parties   []string        // party ids; default p1 … pn
	Corpora   []*corpus.Corpus
	Vocab     []string
	Seed      uint64 // the run's seed; it also keys each party's share of distributed noise
	// MinParties is the quorum; default all parties.
	MinParties int
	// SecureAggregation runs every round under secure aggregation: the
	// coordinator learns only the sum of the surviving parties' updates.
	// The algorithm must declare its update a vector of sums
	// (fed.SumLearner, fed.SumAggregator).
	SecureAggregation bool
	// SecureThreshold is secure aggregation's threshold t (n/2 < t ≤ n),
	// which is then the quorum; default all parties. Setting it without
	// SecureAggregation is an error.
	SecureThreshold int
	// RoundTimeout is each round's deadline; default fed.DefaultRoundTimeout.
	RoundTimeout time.Duration
	// Budget is every party's privacy budget. Algorithms that release
	// nothing private need none.
	Budget accountant.Budget
	// LedgerDir holds the parties' ledgers (one file per party); default a
	// temporary directory removed when Run returns.
	LedgerDir string
	// Faults injects failures into the in-process transport.
	Faults inproc.Faults
	// Logger receives the engine's logs; nil discards them.
	Logger *slog.Logger
	// Record receives the run record (JSON lines); nil writes none.
	Record io.Writer
	// Metrics, if set, is called with the global model after every
	// committed round (algorithms whose aggregator is a fed.Modeler), and
	// its values go into the run record.
	Metrics func(round int, global *topic.Model) (map[string]float64, error)
	// OnRound, if set, is called after every round attempt with its line
	// of the run record (for progress).
	OnRound func(fed.RoundLine)
	// Prior lists records of engine runs before this one whose privacy
	// spend and bytes count toward this run's totals (the vocabulary
	// round of SelectVocabulary).
	Prior []fed.RoundRecord
	// Summary, if set, may add to the summary line before it is written
	// (data, parameters, privacy statement, model file names).
	Summary func(*fed.SummaryLine, *Result)
}

// Result is what a simulated run produced.
type Result struct {
	Rounds  int
	Global  *topic.Model   // the global model, if the aggregator is a fed.Modeler
	Locals  []*topic.Model // each party's final local model, where its learner is a fed.Modeler
	Final   []byte         // the final broadcast
	Traffic []fed.Traffic  // bytes per party over the run
	Summary fed.SummaryLine
}

func (sc *Scenario) parties() []string {
	if len(sc.Parties) > 0 {
		return sc.Parties
	}
	ids := make([]string, len(sc.Corpora))
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	return ids
}

// Validate reports every problem with sc.
func (sc *Scenario) Validate() error {
	var errs []error
	a := sc.Algorithm
	if a.Name == "" || a.NewAggregator == nil || a.NewLearner == nil || a.NewValidator == nil {
		errs = append(errs, errors.New("sim: incomplete algorithm"))
	}
	if len(sc.Corpora) == 0 {
		errs = append(errs, errors.New("sim: no party corpora"))
	}
	if len(sc.Parties) > 0 && len(sc.Parties) != len(sc.Corpora) {
		errs = append(errs, fmt.Errorf("sim: %d party ids for %d corpora", len(sc.Parties), len(sc.Corpora)))
	}
	for i, c := range sc.Corpora {
		if c == nil || c.NumDocs() == 0 {
			errs = append(errs, fmt.Errorf("sim: party %d has no documents", i+1))
		} else if c.V > len(sc.Vocab) {
			errs = append(errs, fmt.Errorf("sim: party %d: corpus vocabulary %d > shared vocabulary %d", i+1, c.V, len(sc.Vocab)))
		}
	}
	if len(sc.Vocab) == 0 {
		errs = append(errs, errors.New("sim: empty vocabulary"))
	}
	if n := len(sc.Corpora); sc.SecureThreshold != 0 && (2*sc.SecureThreshold <= n || sc.SecureThreshold > n) {
		errs = append(errs, fmt.Errorf("sim: secure aggregation threshold %d with %d parties: need more than half of the parties and at most all of them", sc.SecureThreshold, n))
	}
	if sc.SecureThreshold != 0 && !sc.SecureAggregation {
		errs = append(errs, fmt.Errorf("sim: a secure aggregation threshold (%d) without secure aggregation", sc.SecureThreshold))
	}
	if sc.SecureThreshold != 0 && sc.MinParties != 0 && sc.MinParties != sc.SecureThreshold {
		errs = append(errs, fmt.Errorf("sim: quorum %d, but with secure aggregation the quorum is its threshold %d", sc.MinParties, sc.SecureThreshold))
	}
	if sc.RoundTimeout < 0 {
		errs = append(errs, fmt.Errorf("sim: round timeout %v < 0", sc.RoundTimeout))
	}
	if err := sc.Budget.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := sc.Faults.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Run plays sc to its end in this process: the coordinator and every party
// of fed, connected by fed/inproc (every message encoded), each party with
// its own durable ledger in LedgerDir (give the same directory to
// SelectVocabulary and Run so both rounds are charged to one ledger). All
// goroutines are joined before Run returns.
func Run(ctx context.Context, sc Scenario) (*Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	e := sc.engine()
	setup := fed.Setup{Run: e.run, Parties: e.ids, Vocab: sc.Vocab, Seed: sc.Seed, Params: sc.Params}
	alg := sc.Algorithm
	agg, err := alg.NewAggregator(setup)
	if err != nil {
		return nil, err
	}
	val, err := alg.NewValidator(setup)
	if err != nil {
		return nil, err
	}
	learners := make([]fed.Learner, len(e.ids))
	for i, id := range e.ids {
		if learners[i], err = alg.NewLearner(setup, i, sc.Corpora[i]); err != nil {
			return nil, fmt.Errorf("sim: party %s: %w", id, err)
		}
	}
	delta := sc.Budget.Delta
	if delta == 0 {
		delta = DefaultDelta
	}
	w := sc.Record
	if w == nil {
		w = io.Discard
	}
	rec := NewRecorder(w, e.ids, delta)
	for _, p := range sc.Prior {
		rec.Prior(p)
	}
	var recErr error
	onRound := func(r fed.RoundRecord) {
		var metrics map[string]float64
		if r.Committed && sc.Metrics != nil {
			if m, ok := agg.(fed.Modeler); ok {
				if gm, err := m.Model(); err == nil {
					gm.Vocab = sc.Vocab
					if metrics, err = sc.Metrics(r.Round, gm); err != nil {
						recErr = errors.Join(recErr, fmt.Errorf("sim: round %d: metrics: %w", r.Round, err))
					}
				}
			}
		}
		if err := rec.Round(r, metrics); err != nil {
			recErr = errors.Join(recErr, err)
		}
		if sc.OnRound != nil {
			sc.OnRound(fed.RoundLine{Round: r.Round, Attempt: r.Attempt, Committed: r.Committed, Replied: r.Replied,
				Dropped: r.Dropped, Bytes: r.Traffic, DurationS: r.Duration.Seconds(), Metrics: metrics, Error: r.Err})
		}
	}
	res, committed, err := e.play(ctx, alg.Name, agg, val, learners, onRound)
	summary := fed.SummaryLine{Run: e.run, Algorithm: alg.Name, Seed: sc.Seed, Rounds: committed}
	summary.SecureAggregation = fed.SummarizeSecure(e.secure, agg)
	if err != nil {
		summary.Error = err.Error()
		summary.DurationS = time.Since(start).Seconds()
		_, serr := rec.Summary(summary)
		return nil, errors.Join(err, serr)
	}
	var errs []error
	out := &Result{Rounds: res.Rounds, Final: res.Final.Payload, Traffic: res.Traffic, Locals: make([]*topic.Model, len(e.ids))}
	if m, ok := agg.(fed.Modeler); ok {
		if out.Global, err = m.Model(); err != nil {
			errs = append(errs, fmt.Errorf("sim: global model: %w", err))
		} else {
			out.Global.Vocab = sc.Vocab
			if sc.Metrics != nil {
				summary.Metrics, err = sc.Metrics(res.Rounds, out.Global)
				errs = append(errs, err)
			}
		}
	}
	if m, ok := agg.(fed.Merger); ok {
		summary.TopicMerges = m.Merges()
	}
	for i, l := range learners {
		if m, ok := l.(fed.Modeler); ok {
			if out.Locals[i], err = m.Model(); err != nil {
				errs = append(errs, fmt.Errorf("sim: party %s: local model: %w", e.ids[i], err))
			} else {
				out.Locals[i].Vocab = sc.Vocab
			}
		}
	}
	if sc.Summary != nil {
		sc.Summary(&summary, out)
	}
	summary.DurationS = time.Since(start).Seconds()
	out.Summary, err = rec.Summary(summary)
	errs = append(errs, recErr, err)
	if err := errors.Join(errs...); err != nil {
		return out, err
	}
	return out, nil
}

// engine is what one in-process run of the federation needs besides the
// algorithm's halves.
type engine struct {
	run        string
	ids        []string
	minParties int
	timeout    time.Duration
	ledgerDir  string
	budget     accountant.Budget
	faults     inproc.Faults
	logger     *slog.Logger
	secure     *fed.SecureAggregation
	seed       uint64 // keys each party's share of distributed noise
}

func (sc *Scenario) engine() *engine {
	run := sc.Run
	if run == "" {
		run = "sim"
	}
	e := &engine{run: run, ids: sc.parties(), minParties: sc.MinParties, timeout: sc.RoundTimeout,
		ledgerDir: sc.LedgerDir, budget: sc.Budget, faults: sc.Faults, logger: sc.Logger, seed: sc.Seed}
	if sc.SecureAggregation {
		t := sc.SecureThreshold
		if t == 0 {
			t = len(e.ids)
		}
		e.secure = &fed.SecureAggregation{Threshold: t}
	}
	return e
}

// play runs the coordinator and the parties to the end and returns the
// coordinator's result and the rounds it committed. A party that stops for
// lack of budget or by an injected crash does not fail the run; the
// coordinator decides by its quorum.
func (e *engine) play(ctx context.Context, alg string, agg fed.Aggregator, val fed.Validator, learners []fed.Learner, onRound func(fed.RoundRecord)) (*fed.Result, int, error) {
	timeout := fed.Duration(e.timeout)
	coord, err := fed.NewCoordinator(fed.CoordinatorConfig{
		Run: e.run, Algorithm: alg, Parties: e.ids, MinParties: e.minParties,
		RoundTimeout: timeout, JoinTimeout: timeout, SecureAggregation: e.secure,
	}, agg, val, fed.CoordinatorOptions{Logger: e.logger, OnRound: onRound})
	if err != nil {
		return nil, 0, err
	}
	net, err := inproc.New(coord, e.faults)
	if err != nil {
		return nil, 0, err
	}
	ledgerDir := e.ledgerDir
	if ledgerDir == "" {
		if ledgerDir, err = os.MkdirTemp("", "fedtopic-sim-ledgers-"); err != nil {
			return nil, 0, fmt.Errorf("sim: %w", err)
		}
		defer os.RemoveAll(ledgerDir)
	} else if err := os.MkdirAll(ledgerDir, 0o700); err != nil {
		return nil, 0, fmt.Errorf("sim: %w", err)
	}
	ledgers := make([]*accountant.Ledger, len(e.ids))
	defer func() {
		for _, l := range ledgers {
			if l != nil {
				l.Close()
			}
		}
	}()
	parties := make([]*fed.Party, len(e.ids))
	for i, id := range e.ids {
		if ledgers[i], err = accountant.OpenLedger(filepath.Join(ledgerDir, id+".ledger"), e.budget); err != nil {
			return nil, 0, fmt.Errorf("sim: party %s: %w", id, err)
		}
		parties[i], err = fed.NewParty(fed.PartyConfig{Run: e.run, ID: id, Algorithm: alg, SecureAggregation: e.secure}, learners[i], ledgers[i], net.Dial(id),
			fed.PartyOptions{Logger: e.logger, Noise: rng.Derive(e.seed, "sim", "distributed noise", id)})
		if err != nil {
			return nil, 0, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	partyErrs := make([]error, len(e.ids))
	var res *fed.Result
	var coordErr error
	var wg sync.WaitGroup
	for i, p := range parties {
		wg.Go(func() {
			_, partyErrs[i] = p.Run(ctx)
			if err := partyErrs[i]; failed(err) && ctx.Err() == nil {
				cancel() // one process: no party outlives a party that failed
			}
		})
	}
	wg.Go(func() {
		res, coordErr = coord.Run(ctx)
		if coordErr != nil {
			cancel() // parties would otherwise wait for a coordinator that has stopped
		}
	})
	wg.Wait()
	var errs []error
	for i, err := range partyErrs {
		if failed(err) && !errors.Is(err, context.Canceled) {
			errs = append(errs, fmt.Errorf("sim: party %s: %w", e.ids[i], err))
		}
	}
	if coordErr != nil {
		// A party's own failure is the cause; the coordinator's error
		// (a quorum it could not reach, a cancelled run) follows from it.
		return nil, coord.Committed(), errors.Join(append(errs, coordErr)...)
	}
	return res, res.Rounds, errors.Join(errs...)
}

// failed reports whether a party's error is a failure of the run rather
// than a party stopping for lack of budget or by an injected crash, which
// the coordinator's quorum decides about.
func failed(err error) bool {
	return err != nil && !errors.Is(err, fed.ErrBudgetExhausted) && !errors.Is(err, inproc.ErrCrashed)
}
