package fedlda_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/fedlda"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
)

// synthParties returns a planted synthetic corpus split into three parties
// of relative sizes 1:2:3, and its vocabulary.
func synthParties(t testing.TB, k, v, docs, docLen int, seed uint64) ([]*corpus.Corpus, []string) {
	t.Helper()
	d, err := synth.Generate(synth.Config{K: k, V: v, Docs: docs, DocLen: float64(docLen), Structure: synth.Planted}, rng.Derive(seed, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	parts, err := corpus.Split(d.Corpus, corpus.SplitSpec{Sizes: []float64{1, 2, 3}}, rng.Derive(seed, "split"))
	if err != nil {
		t.Fatal(err)
	}
	vocab := make([]string, v)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%02d", w)
	}
	return parts, vocab
}

func setup(params string, parts []*corpus.Corpus, vocab []string) fed.Setup {
	ids := make([]string, len(parts))
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	return fed.Setup{Run: "fedlda-test", Parties: ids, Vocab: vocab, Seed: 11, Params: json.RawMessage(params)}
}

// TestCollectorMatchesUsers is the consistency check: with no
// perturbation the collector's counts equal the sum of the users' reported
// counts after every iteration, whether every change is sent (r = 1) or
// only a sample of l of the M padded slots (r = 0.7; an unsent change is
// not applied locally either). Every update also passes the Validator.
func TestCollectorMatchesUsers(t *testing.T) {
	parts, vocab := synthParties(t, 4, 40, 120, 12, 1)
	for _, tt := range []struct {
		name, params string
	}{
		{name: "r=1 gibbs", params: `{"k":4,"rounds":6,"mechanism":"none","sample_ratio":1,"max_doc_tokens":12,"block_users":7}`},
		{name: "r=0.7 gibbs", params: `{"k":4,"rounds":6,"mechanism":"none","max_doc_tokens":10,"block_users":7}`},
		{name: "r=0.7 mh", params: `{"k":4,"rounds":6,"mechanism":"none","sampler":"mh","max_doc_tokens":16,"workers":3,"block_users":5}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := setup(tt.params, parts, vocab)
			agg, err := fedlda.NewAggregator(s)
			if err != nil {
				t.Fatal(err)
			}
			val, err := fedlda.NewValidator(s)
			if err != nil {
				t.Fatal(err)
			}
			learners := make([]*fedlda.Learner, len(parts))
			for i := range parts {
				if learners[i], err = fedlda.NewLearner(s, i, parts[i]); err != nil {
					t.Fatal(err)
				}
			}
			step, err := agg.Init()
			if err != nil {
				t.Fatal(err)
			}
			for round := 1; !step.Done; round++ {
				var ups []fed.Update
				for i, l := range learners {
					ls, err := l.Learn(round, step.Payload)
					if err != nil {
						t.Fatal(err)
					}
					if err := val.CheckUpdate(round, ls.Payload); err != nil {
						t.Fatalf("round %d: party %d: CheckUpdate = %v; want nil", round, i, err)
					}
					ups = append(ups, fed.Update{Party: i, ID: s.Parties[i], Payload: ls.Payload})
				}
				if step, err = agg.Aggregate(round, ups); err != nil {
					t.Fatal(err)
				}
				want := make([]uint32, len(agg.Counts()))
				for _, l := range learners {
					for i, x := range l.Counts() {
						want[i] += x
					}
				}
				if got := agg.Counts(); !slices.Equal(got, want) {
					t.Fatalf("round %d: collector counts differ from the users' reported counts", round)
				}
				var total uint32
				for _, x := range want {
					total += x
				}
				if round == 6 && total == 0 {
					t.Fatalf("round 6: no token has a topic")
				}
			}
		})
	}
}

// outcome is what a federation run produced.
type outcome struct {
	final   []byte
	ledgers [][]fedtest.LedgerEntry
}

// play runs FedLDA over tr: a coordinator and one party per corpus, each
// with an in-memory ledger.
func play(t *testing.T, tr fedtest.Transport, s fed.Setup, parts []*corpus.Corpus) *outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	agg, err := fedlda.NewAggregator(s)
	if err != nil {
		t.Fatal(err)
	}
	val, err := fedlda.NewValidator(s)
	if err != nil {
		t.Fatal(err)
	}
	coord, err := fed.NewCoordinator(fed.CoordinatorConfig{Run: s.Run, Algorithm: fedlda.Name, Parties: s.Parties,
		RoundTimeout: fed.Duration(time.Minute), PollTimeout: fed.Duration(time.Second)}, agg, val, fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dial, stop, err := tr.Connect(coord, s.Parties, val)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ledgers := make([]*fedtest.Ledger, len(parts))
	errs := make([]error, len(parts)+1)
	var wg sync.WaitGroup
	for i, id := range s.Parties {
		l, err := fedlda.NewLearner(s, i, parts[i])
		if err != nil {
			t.Fatal(err)
		}
		conn, err := dial(id)
		if err != nil {
			t.Fatal(err)
		}
		ledgers[i], _ = fedtest.OpenLedger(1e6, "")
		p, err := fed.NewParty(fed.PartyConfig{Run: s.Run, ID: id, Algorithm: fedlda.Name,
			RetryMin: fed.Duration(time.Millisecond), RetryMax: fed.Duration(50 * time.Millisecond)}, l, ledgers[i], conn, fed.PartyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _, errs[i] = p.Run(ctx) })
	}
	var res *fed.Result
	wg.Go(func() { res, errs[len(parts)] = coord.Run(ctx) })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: participant %d: %v", tr, i, err)
		}
	}
	out := &outcome{final: res.Final.Payload}
	for _, l := range ledgers {
		out.ledgers = append(out.ledgers, l.Entries())
	}
	return out
}

// TestTransportsAgree checks simulation parity: a seeded three-party run
// with kRR in process and over gRPC with mutual TLS on loopback gives the
// same final counts and ledger entries, and every party is charged l·ε
// per round at the document level.
func TestTransportsAgree(t *testing.T) {
	parts, vocab := synthParties(t, 4, 40, 90, 10, 2)
	s := setup(`{"k":4,"rounds":3,"mechanism":"krr","epsilon":3,"max_doc_tokens":10,"sampler":"mh"}`, parts, vocab)
	want := play(t, fedtest.InProc(inproc.Faults{}), s, parts)
	got := play(t, fedtest.Loopback(), s, parts)
	if !bytes.Equal(got.final, want.final) {
		t.Errorf("the final counts over gRPC differ from the in-process ones")
	}
	wantEvent := privacy.Event{Mechanism: privacy.MechanismKRR, Epsilon: 3, Unit: "document", Count: 7}
	for i := range want.ledgers {
		if d := cmp.Diff(want.ledgers[i], got.ledgers[i]); d != "" {
			t.Errorf("party %d: ledger entries differ (-inproc +grpc):\n%s", i+1, d)
		}
		if n := len(want.ledgers[i]); n != 3 {
			t.Fatalf("party %d: %d charges; want one per round (3)", i+1, n)
		}
		for _, e := range want.ledgers[i] {
			if d := cmp.Diff([]privacy.Event{wantEvent}, e.Events); d != "" {
				t.Errorf("party %d: charge (-want +got):\n%s", i+1, d)
			}
		}
	}
}

// TestPlanIsSpent checks that a Learner's plan is exactly what its step
// declares, for every mechanism, and that none releases nothing private.
func TestPlanIsSpent(t *testing.T) {
	parts, vocab := synthParties(t, 4, 40, 30, 10, 3)
	for _, mech := range []string{"krr", "tkrr", "rrp", "none"} {
		s := setup(fmt.Sprintf(`{"k":4,"rounds":2,"mechanism":%q,"epsilon":5,"truncation":0.1,"max_doc_tokens":9}`, mech), parts, vocab)
		l, err := fedlda.NewLearner(s, 0, parts[0])
		if err != nil {
			t.Fatal(err)
		}
		agg, _ := fedlda.NewAggregator(s)
		init, _ := agg.Init()
		plan, err := l.Plan(1)
		if err != nil {
			t.Fatal(err)
		}
		step, err := l.Learn(1, init.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(plan, step.Spent); d != "" {
			t.Errorf("%s: Plan(1) and Learn(1).Spent differ (-plan +spent):\n%s", mech, d)
		}
		if mech == "none" && len(plan) != 0 {
			t.Errorf("none: Plan(1) = %+v; want nothing", plan)
		}
		for _, e := range plan {
			if e.Count != 7 || e.Epsilon != 5 || e.Unit != "document" {
				t.Errorf("%s: event %+v; want l = ⌈0.7·9⌉ = 7 tuples of ε = 5 per document", mech, e)
			}
		}
	}
}

// TestLearnerRestores checks that a party restored from its state sends
// what it would have sent.
func TestLearnerRestores(t *testing.T) {
	parts, vocab := synthParties(t, 4, 40, 30, 10, 4)
	s := setup(`{"k":4,"rounds":3,"mechanism":"krr","epsilon":4,"max_doc_tokens":10}`, parts, vocab)
	agg, _ := fedlda.NewAggregator(s)
	a, _ := fedlda.NewLearner(s, 1, parts[1])
	b, _ := fedlda.NewLearner(s, 1, parts[1])
	step, _ := agg.Init()
	s1, err := a.Learn(1, step.Payload)
	if err != nil {
		t.Fatal(err)
	}
	step, _ = agg.Aggregate(1, []fed.Update{{Party: 1, ID: "p2", Payload: s1.Payload}})
	state, _ := a.MarshalBinary()
	if err := b.UnmarshalBinary(state); err != nil {
		t.Fatalf("UnmarshalBinary: %v", err)
	}
	want, _ := a.Learn(2, step.Payload)
	got, err := b.Learn(2, step.Payload)
	if err != nil || !bytes.Equal(got.Payload, want.Payload) {
		t.Errorf("restored learner's round 2 differs from the original's (err %v)", err)
	}
	if err := b.UnmarshalBinary(state[:len(state)-1]); err == nil {
		t.Errorf("UnmarshalBinary(truncated state) = nil; want an error")
	}
}

// TestValidatorRejectsAForeignShape checks the Validator against an update
// of another configuration: more tuples per user than l.
func TestValidatorRejectsAForeignShape(t *testing.T) {
	parts, vocab := synthParties(t, 4, 40, 30, 10, 5)
	big := setup(`{"k":4,"mechanism":"none","max_doc_tokens":10,"sample_ratio":1}`, parts, vocab)
	small := setup(`{"k":4,"mechanism":"none","max_doc_tokens":10}`, parts, vocab)
	l, _ := fedlda.NewLearner(big, 0, parts[0])
	agg, _ := fedlda.NewAggregator(big)
	init, _ := agg.Init()
	step, err := l.Learn(1, init.Payload)
	if err != nil {
		t.Fatal(err)
	}
	val, _ := fedlda.NewValidator(small)
	if err := val.CheckUpdate(1, step.Payload); err == nil {
		t.Errorf("CheckUpdate(10 tuples per user) with l = 7: nil; want an error")
	}
	if n := len(step.Payload); n > val.MaxUpdateSize() {
		t.Errorf("update of %d bytes > MaxUpdateSize %d", n, val.MaxUpdateSize())
	}
}
