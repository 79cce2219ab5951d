package sim_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/sim/adlda"
	"github.com/fedtopic/fedtopic/topic"
)

// sumScenario is the test algorithm Sum over three small parties.
func sumScenario(eps float64, rounds int) sim.Scenario {
	fs := fedtest.Scenario{Parties: 3, Rounds: rounds, Epsilon: eps, Seed: 4}
	s := fs.Setup()
	return sim.Scenario{Algorithm: fedtest.Sum, Params: s.Params, Vocab: s.Vocab, Seed: 4,
		Corpora: []*corpus.Corpus{fs.Corpus(0), fs.Corpus(1), fs.Corpus(2)}}
}

// readRecord parses a run record into its round lines and summary.
func readRecord(t *testing.T, b []byte) ([]fed.RoundLine, fed.SummaryLine) {
	t.Helper()
	var rounds []fed.RoundLine
	var sum fed.SummaryLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		var probe struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &probe); err != nil {
			t.Fatalf("run record line %q: %v", sc.Text(), err)
		}
		switch probe.Type {
		case fed.TypeRound:
			var l fed.RoundLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Fatal(err)
			}
			rounds = append(rounds, l)
		case fed.TypeSummary:
			if err := json.Unmarshal(sc.Bytes(), &sum); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("run record line of type %q", probe.Type)
		}
	}
	return rounds, sum
}

// TestRunRecordPrivacy: a private algorithm's run record shows, per round,
// every party's bytes and its ε composed so far (pure ε adds up: round r
// shows r·ε), and the summary totals match the rounds.
func TestRunRecordPrivacy(t *testing.T) {
	sc := sumScenario(0.5, 4)
	sc.Budget = accountant.Budget{Epsilon: 10}
	var rec bytes.Buffer
	sc.Record = &rec
	sc.Metrics = func(round int, m *topic.Model) (map[string]float64, error) {
		return map[string]float64{"rows": float64(m.K)}, nil
	}
	res, err := sim.Run(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	rounds, sum := readRecord(t, rec.Bytes())
	if len(rounds) != 4 || sum.Rounds != 4 || res.Rounds != 4 {
		t.Fatalf("%d round lines, summary rounds %d, result rounds %d; want 4", len(rounds), sum.Rounds, res.Rounds)
	}
	var up [3]int64
	for r, l := range rounds {
		for i, e := range l.Epsilon {
			if want := 0.5 * float64(r+1); math.Abs(e.Epsilon-want) > 1e-12 || e.Releases != r+1 {
				t.Errorf("round %d, %s: ε = %v over %d releases; want %v over %d", l.Round, e.Party, e.Epsilon, e.Releases, want, r+1)
			}
			if l.Bytes[i].Up <= 0 || l.Bytes[i].Down <= 0 {
				t.Errorf("round %d, %s: bytes %+v; want both ways", l.Round, l.Bytes[i].Party, l.Bytes[i])
			}
			up[i] += l.Bytes[i].Up
		}
		if l.Metrics["rows"] != 2 {
			t.Errorf("round %d metrics %v; want rows = 2", l.Round, l.Metrics)
		}
	}
	for i, b := range sum.Bytes {
		if b.Up != up[i] {
			t.Errorf("summary bytes up of %s = %d; want the rounds' %d", b.Party, b.Up, up[i])
		}
		if sum.Epsilon[i].Epsilon != 2 {
			t.Errorf("summary ε of %s = %v; want 2", b.Party, sum.Epsilon[i].Epsilon)
		}
	}
}

// TestBudgetStopsRun: with a budget for two of four rounds the parties
// refuse round 3 and the run ends with the quorum lost for lack of budget.
func TestBudgetStopsRun(t *testing.T) {
	sc := sumScenario(1, 4)
	sc.Budget = accountant.Budget{Epsilon: 2.5}
	sc.MinParties = 1 // the run goes on until every party has refused
	var rec bytes.Buffer
	sc.Record = &rec
	_, err := sim.Run(context.Background(), sc)
	if !errors.Is(err, fed.ErrBudgetExhausted) {
		t.Fatalf("Run = %v; want the run stopped by exhausted budgets", err)
	}
	rounds, sum := readRecord(t, rec.Bytes())
	if sum.Rounds != 2 || !strings.Contains(sum.Error, "budget") {
		t.Errorf("summary: %d rounds, error %q; want 2 rounds and the budget named", sum.Rounds, sum.Error)
	}
	if last := rounds[len(rounds)-1]; len(last.Refused) != 3 {
		t.Errorf("last round refused by %v; want all three parties", last.Refused)
	}
}

// TestRecorderResume: a coordinator that restarts continues its run record:
// totals carry over and the replayed record of a round already written is
// not written again.
func TestRecorderResume(t *testing.T) {
	parties := []string{"p1", "p2"}
	rec := func(round int, resumed bool) fed.RoundRecord {
		return fed.RoundRecord{Round: round, Attempt: 1, Committed: true, Resumed: resumed, Replied: parties,
			Traffic: []fed.Traffic{{Party: "p1", Up: 10, Down: 20}, {Party: "p2", Up: 1, Down: 2}}}
	}
	var first bytes.Buffer
	r := sim.NewRecorder(&first, parties, 1e-5)
	for round := 1; round <= 2; round++ {
		if err := r.Round(rec(round, false), nil); err != nil {
			t.Fatal(err)
		}
	}
	var second bytes.Buffer
	r2 := sim.NewRecorder(&second, parties, 1e-5)
	if err := r2.Resume(bytes.NewReader(first.Bytes())); err != nil {
		t.Fatal(err)
	}
	if err := r2.Round(rec(2, true), nil); err != nil {
		t.Fatal(err)
	}
	if err := r2.Round(rec(3, false), nil); err != nil {
		t.Fatal(err)
	}
	s, err := r2.Summary(fed.SummaryLine{})
	if err != nil {
		t.Fatal(err)
	}
	rounds, _ := readRecord(t, second.Bytes())
	if len(rounds) != 1 || rounds[0].Round != 3 {
		t.Errorf("after resuming, wrote rounds %v; want only round 3", rounds)
	}
	if s.Bytes[0].Up != 30 || s.Bytes[1].Down != 6 {
		t.Errorf("summary bytes %+v; want the three rounds' totals", s.Bytes)
	}
}

// TestRunDeterministic: the same scenario twice gives the same model and
// the same run record apart from durations.
func TestRunDeterministic(t *testing.T) {
	run := func() ([]byte, []fed.RoundLine) {
		fs := fedtest.Scenario{Parties: 3, Vocab: 40, Docs: 30}
		sc := sim.Scenario{Algorithm: adlda.Algorithm, Params: json.RawMessage(`{"k": 3, "rounds": 3}`), Seed: 8,
			Vocab: fs.Setup().Vocab, Corpora: []*corpus.Corpus{fs.Corpus(0), fs.Corpus(1), fs.Corpus(2)}}
		var rec bytes.Buffer
		sc.Record = &rec
		res, err := sim.Run(context.Background(), sc)
		if err != nil {
			t.Fatal(err)
		}
		rounds, _ := readRecord(t, rec.Bytes())
		for i := range rounds {
			rounds[i].DurationS = 0
		}
		return res.Final, rounds
	}
	m1, r1 := run()
	m2, r2 := run()
	if !bytes.Equal(m1, m2) {
		t.Error("two runs of one scenario gave different models")
	}
	j1, _ := json.Marshal(r1)
	j2, _ := json.Marshal(r2)
	if !bytes.Equal(j1, j2) {
		t.Errorf("run records differ:\n%s\n%s", j1, j2)
	}
}

func TestScenarioValidate(t *testing.T) {
	err := (&sim.Scenario{Parties: []string{"a"}, Corpora: []*corpus.Corpus{{}, {}}}).Validate()
	for _, w := range []string{"incomplete algorithm", "1 party ids for 2 corpora", "party 1 has no documents", "empty vocabulary"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Validate() = %v; want it to mention %q", err, w)
		}
	}
}

// TestRecorderCountsReleaseOnce: a party that resends its cached update in
// a retried round made one release, and its composed ε counts it once.
func TestRecorderCountsReleaseOnce(t *testing.T) {
	ev := []privacy.Event{{Mechanism: privacy.MechanismLaplace, Epsilon: 0.5, Sensitivity: 1, Unit: "word occurrence", Count: 1}}
	spent := []fed.PartySpend{{Party: "p1", Events: ev}}
	var b bytes.Buffer
	r := sim.NewRecorder(&b, []string{"p1"}, 1e-5)
	for _, rec := range []fed.RoundRecord{
		{Round: 1, Attempt: 1, Spent: spent, Err: "quorum not reached"},
		{Round: 1, Attempt: 2, Committed: true, Spent: spent},
		{Round: 2, Attempt: 1, Committed: true, Spent: spent},
	} {
		if err := r.Round(rec, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Epsilon()[0]; got.Epsilon != 1 || got.Releases != 2 {
		t.Errorf("composed ε = %v over %d releases; want 1 over 2 (round 1 resent, not released twice)", got.Epsilon, got.Releases)
	}
}

// mergingAggregator is the Sum aggregator that also reports topic merges,
// as FTM's does.
type mergingAggregator struct {
	fed.Aggregator
	merges []fed.TopicMerge
}

func (a mergingAggregator) Merges() []fed.TopicMerge { return a.merges }

// TestRunRecordMerges: an aggregator that is a fed.Merger has its last
// merges written into the summary line, for the report's topic tables.
func TestRunRecordMerges(t *testing.T) {
	want := []fed.TopicMerge{
		{Global: 0, Members: []fed.TopicRef{{Party: "p1", Topic: 2, Similarity: 0.9}, {Party: "p3", Topic: 0, Similarity: 0.8}}},
		{Global: 1, Members: []fed.TopicRef{{Party: "p2", Topic: 1}}},
	}
	sc := sumScenario(1, 2)
	alg := sc.Algorithm
	newAgg := alg.NewAggregator
	alg.NewAggregator = func(s fed.Setup) (fed.Aggregator, error) {
		a, err := newAgg(s)
		return mergingAggregator{Aggregator: a, merges: want}, err
	}
	sc.Algorithm = alg
	sc.Budget = accountant.Budget{Epsilon: 10, Delta: 1e-5}
	var buf bytes.Buffer
	sc.Record = &buf
	if _, err := sim.Run(context.Background(), sc); err != nil {
		t.Fatalf("sim.Run: %v", err)
	}
	_, sum := readRecord(t, buf.Bytes())
	got, _ := json.Marshal(sum.TopicMerges)
	wantJSON, _ := json.Marshal(want)
	if !bytes.Equal(got, wantJSON) {
		t.Errorf("summary topic_merges = %s; want %s", got, wantJSON)
	}
}

// failingLearner fails in its round.
type failingLearner struct {
	fed.Learner
	round int
}

func (l failingLearner) Learn(round int, broadcast []byte) (fed.Step, error) {
	if round == l.round {
		return fed.Step{}, errors.New("local training diverged")
	}
	return l.Learner.Learn(round, broadcast)
}

// TestPartyFailureNamed: a party whose learner fails ends the simulation at
// once with its own error first, rather than leaving the coordinator to
// wait out the round's deadline and report only a missing quorum; the
// coordinator is told the round is refused in words that name no data.
func TestPartyFailureNamed(t *testing.T) {
	sc := sumScenario(1, 4)
	sc.Budget = accountant.Budget{Epsilon: 10}
	sc.RoundTimeout = time.Hour // a run that waited for the deadline would not end
	alg := sc.Algorithm
	alg.NewLearner = func(s fed.Setup, party int, docs *corpus.Corpus) (fed.Learner, error) {
		l, err := fedtest.Sum.NewLearner(s, party, docs)
		if party == 1 {
			return failingLearner{Learner: l, round: 2}, err
		}
		return l, err
	}
	sc.Algorithm = alg
	var rec bytes.Buffer
	sc.Record = &rec
	done := make(chan error, 1)
	go func() { _, err := sim.Run(context.Background(), sc); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "sim: party p2") || !strings.Contains(err.Error(), "local training diverged") {
			t.Errorf("Run = %v; want party p2's own error first", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still waiting 30 s after a party's learner failed")
	}
	// What the coordinator recorded of the rounds is what it was told.
	rounds, _ := readRecord(t, rec.Bytes())
	var told string
	for _, r := range rounds {
		b, _ := json.Marshal(r)
		told += string(b)
	}
	if strings.Contains(told, "diverged") || !strings.Contains(told, "learner failed") {
		t.Errorf("the coordinator's round records %s; want that p2's learner failed, without its own error", told)
	}
}

// TestSecureRunDeterministic checks that a simulation with distributed
// noise under secure aggregation is reproducible for a seed — each party's
// share of the noise is keyed from it — and that another seed draws other
// noise.
func TestSecureRunDeterministic(t *testing.T) {
	run := func(seed uint64) []byte {
		fs := fedtest.Scenario{Parties: 3, Vocab: 10, Docs: 5}
		sc := sim.Scenario{Algorithm: fedtest.IntSum, Params: json.RawMessage(`{"len": 8, "rounds": 2, "max": 5, "sigma": 4}`), Seed: seed,
			Vocab: fs.Setup().Vocab, Corpora: []*corpus.Corpus{fs.Corpus(0), fs.Corpus(1), fs.Corpus(2)}, SecureAggregation: true,
			Budget: accountant.Budget{Epsilon: 1000, Delta: 1e-5, Unit: "party"}}
		res, err := sim.Run(context.Background(), sc)
		if err != nil {
			t.Fatal(err)
		}
		return res.Final
	}
	a, b := run(8), run(8)
	if !bytes.Equal(a, b) {
		t.Error("two secure runs of one scenario with distributed noise gave different sums")
	}
	if bytes.Equal(a, run(9)) {
		t.Error("secure runs with seeds 8 and 9 gave the same noisy sums")
	}
}
