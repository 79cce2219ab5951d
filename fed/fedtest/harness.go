package fedtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// Scenario describes a federation running Sum. The zero value of each field
// means the default in its comment.
type Scenario struct {
	Parties      int           // default 3
	Rows         int           // rows of Sum's matrix; default 2
	Vocab        int           // vocabulary size V; default 20
	Docs         int           // documents per party; default 10
	Rounds       int           // default 3
	Epsilon      float64       // ε per release; 0 = no noise
	Budget       float64       // ε budget per party; 0 = unlimited
	MinParties   int           // quorum; default all
	RoundTimeout time.Duration // default 5s
	Seed         uint64
}

func (sc Scenario) withDefaults() Scenario {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&sc.Parties, 3)
	def(&sc.Rows, 2)
	def(&sc.Vocab, 20)
	def(&sc.Docs, 10)
	def(&sc.Rounds, 3)
	if sc.RoundTimeout == 0 {
		sc.RoundTimeout = 5 * time.Second
	}
	if sc.Budget == 0 {
		sc.Budget = math.Inf(1)
	}
	return sc
}

// RunID is the run id of every scenario.
const RunID = "fedtest-run"

// IDs returns the party ids p1 … pn.
func (sc Scenario) IDs() []string {
	sc = sc.withDefaults()
	ids := make([]string, sc.Parties)
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	return ids
}

// Setup returns the Setup both halves of Sum are built from.
func (sc Scenario) Setup() fed.Setup {
	sc = sc.withDefaults()
	params, err := json.Marshal(SumParams{Rows: sc.Rows, Rounds: sc.Rounds, Epsilon: sc.Epsilon})
	if err != nil {
		panic(err) // SumParams always marshals
	}
	vocab := make([]string, sc.Vocab)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%03d", w)
	}
	return fed.Setup{Run: RunID, Parties: sc.IDs(), Vocab: vocab, Seed: sc.Seed, Params: params}
}

// CoordinatorConfig returns the coordinator's configuration, without a
// state directory.
func (sc Scenario) CoordinatorConfig() fed.CoordinatorConfig {
	sc = sc.withDefaults()
	return fed.CoordinatorConfig{
		Run: RunID, Algorithm: SumName, Parties: sc.IDs(), MinParties: sc.MinParties,
		RoundTimeout: fed.Duration(sc.RoundTimeout), JoinTimeout: fed.Duration(sc.RoundTimeout),
		PollTimeout: fed.Duration(sc.RoundTimeout), LingerTimeout: fed.Duration(sc.RoundTimeout),
	}
}

// PartyConfig returns party i's configuration, without a state directory,
// with retries fast enough for tests.
func (sc Scenario) PartyConfig(i int) fed.PartyConfig {
	return fed.PartyConfig{Run: RunID, ID: sc.IDs()[i], Algorithm: SumName,
		RetryMin: fed.Duration(time.Millisecond), RetryMax: fed.Duration(50 * time.Millisecond), GiveUp: fed.Duration(time.Minute)}
}

// Aggregator returns a fresh coordinator half.
func (sc Scenario) Aggregator(t testing.TB) *SumAggregator {
	t.Helper()
	a, err := Sum.NewAggregator(sc.Setup())
	if err != nil {
		t.Fatalf("Sum.NewAggregator: %v", err)
	}
	return a.(*SumAggregator)
}

// Validator returns the update checks.
func (sc Scenario) Validator(t testing.TB) fed.Validator {
	t.Helper()
	v, err := Sum.NewValidator(sc.Setup())
	if err != nil {
		t.Fatalf("Sum.NewValidator: %v", err)
	}
	return v
}

// Learner returns a fresh party half for party i over its local corpus.
func (sc Scenario) Learner(t testing.TB, i int) *SumLearner {
	t.Helper()
	l, err := Sum.NewLearner(sc.Setup(), i, sc.Corpus(i))
	if err != nil {
		t.Fatalf("Sum.NewLearner: %v", err)
	}
	return l.(*SumLearner)
}

// Corpus returns party i's synthetic local corpus: Docs documents of 5 to
// 15 words drawn from a skewed distribution over the vocabulary.
func (sc Scenario) Corpus(i int) *corpus.Corpus {
	sc = sc.withDefaults()
	r := rng.Derive(sc.Seed, "fedtest", "corpus", i)
	c := &corpus.Corpus{V: sc.Vocab, DocStart: []int{0}}
	for range sc.Docs {
		for range 5 + r.IntN(11) {
			w := int32(float64(sc.Vocab) * r.Float64() * r.Float64())
			c.Words = append(c.Words, w)
		}
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	return c
}

// Transport carries a federation's calls in Run.
type Transport interface {
	// Connect serves svc to parties, with message limits from val, and
	// returns a function that connects a party to it and a function that
	// stops whatever Connect started.
	Connect(svc fed.Service, parties []string, val fed.Validator) (dial func(party string) (fed.Protocol, error), stop func(), err error)
	String() string
}

// InProc returns the in-process transport with the given fault schedule.
func InProc(f inproc.Faults) Transport { return inprocTransport{f} }

type inprocTransport struct{ faults inproc.Faults }

func (tr inprocTransport) String() string { return "inproc" }

func (tr inprocTransport) Connect(svc fed.Service, parties []string, val fed.Validator) (func(string) (fed.Protocol, error), func(), error) {
	n, err := inproc.New(svc, tr.faults)
	if err != nil {
		return nil, nil, err
	}
	return func(p string) (fed.Protocol, error) { return n.Dial(p), nil }, func() {}, nil
}

// Outcome is what Run observed.
type Outcome struct {
	Result  *fed.Result
	Final   []byte // the final broadcast
	Records []fed.RoundRecord
	Parties []*fed.PartyResult
	Ledgers [][]LedgerEntry // per party, what its ledger recorded
}

// Run plays sc to the end over tr and fails t on any error.
func Run(t testing.TB, tr Transport, sc Scenario) *Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := Play(ctx, tr, sc)
	if err != nil {
		t.Fatalf("%v: %v", tr, err)
	}
	return out
}

// Play plays sc to the end over tr: a coordinator and one party per id,
// each in its own goroutine, all joined before Play returns.
func Play(ctx context.Context, tr Transport, sc Scenario) (*Outcome, error) {
	sc = sc.withDefaults()
	setup := sc.Setup()
	agg, err := Sum.NewAggregator(setup)
	if err != nil {
		return nil, err
	}
	val, err := Sum.NewValidator(setup)
	if err != nil {
		return nil, err
	}
	var out Outcome
	var mu sync.Mutex
	coord, err := fed.NewCoordinator(sc.CoordinatorConfig(), agg, val, fed.CoordinatorOptions{
		OnRound: func(r fed.RoundRecord) { mu.Lock(); out.Records = append(out.Records, r); mu.Unlock() },
	})
	if err != nil {
		return nil, err
	}
	dial, stop, err := tr.Connect(coord, setup.Parties, val)
	if err != nil {
		return nil, err
	}
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out.Parties = make([]*fed.PartyResult, sc.Parties)
	ledgers := make([]*Ledger, sc.Parties)
	errs := make([]error, sc.Parties+1)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }() // on an early return, stop the parties already started
	for i, id := range setup.Parties {
		l, err := Sum.NewLearner(setup, i, sc.Corpus(i))
		if err != nil {
			return nil, err
		}
		conn, err := dial(id)
		if err != nil {
			return nil, err
		}
		ledgers[i], _ = OpenLedger(sc.Budget, "")
		p, err := fed.NewParty(sc.PartyConfig(i), l, ledgers[i], conn, fed.PartyOptions{})
		if err != nil {
			return nil, err
		}
		wg.Go(func() { out.Parties[i], errs[i] = p.Run(ctx) })
	}
	wg.Go(func() { out.Result, errs[sc.Parties] = coord.Run(ctx) })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			who := "coordinator"
			if i < sc.Parties {
				who = setup.Parties[i]
			}
			return nil, fmt.Errorf("fedtest: %s: %w", who, err)
		}
	}
	out.Final = out.Result.Final.Payload
	for _, l := range ledgers {
		out.Ledgers = append(out.Ledgers, l.Entries())
	}
	return &out, nil
}
