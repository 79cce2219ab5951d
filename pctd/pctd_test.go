package pctd_test

import (
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
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/topic"
)

// synthData returns a synthetic corpus with sentences split into parties
// of relative sizes 1:2:3.
func synthData(t testing.TB, k, v, docs int, seed uint64) (parts []*corpus.Corpus, vocab []string) {
	t.Helper()
	d, err := synth.Generate(synth.Config{K: k, V: v, Docs: docs, DocLen: 30, SentLen: 6, WordsOnly: true}, rng.Derive(seed, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	c := d.Corpus
	idx := func(a, b int) []int {
		s := make([]int, 0, b-a)
		for i := a; i < b; i++ {
			s = append(s, i)
		}
		return s
	}
	parts = []*corpus.Corpus{c.Subset(idx(0, docs/6)), c.Subset(idx(docs/6, docs/2)), c.Subset(idx(docs/2, docs))}
	vocab = make([]string, c.V)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%03d", w)
	}
	return parts, vocab
}

// outcome is what a federation run produced.
type outcome struct {
	final   []byte
	global  *topic.Model
	locals  []*topic.Model
	ledgers [][]fedtest.LedgerEntry
}

// play runs PC-TD over tr: a coordinator and one party per corpus, each
// with an in-memory ledger of budget 1e6.
func play(t *testing.T, tr fedtest.Transport, params string, parts []*corpus.Corpus, vocab []string, seed uint64) *outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ids := make([]string, len(parts))
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	setup := fed.Setup{Run: "pctd-test", Parties: ids, Vocab: vocab, Seed: seed, Params: json.RawMessage(params)}
	agg, err := pctd.NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	val, err := pctd.NewValidator(setup)
	if err != nil {
		t.Fatal(err)
	}
	coord, err := fed.NewCoordinator(fed.CoordinatorConfig{Run: setup.Run, Algorithm: pctd.Name, Parties: ids,
		RoundTimeout: fed.Duration(time.Minute), PollTimeout: fed.Duration(time.Second)}, agg, val, fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dial, stop, err := tr.Connect(coord, ids, val)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	learners := make([]*pctd.Learner, len(ids))
	ledgers := make([]*fedtest.Ledger, len(ids))
	errs := make([]error, len(ids)+1)
	var wg sync.WaitGroup
	for i, id := range ids {
		if learners[i], err = pctd.NewLearner(setup, i, parts[i]); err != nil {
			t.Fatal(err)
		}
		conn, err := dial(id)
		if err != nil {
			t.Fatal(err)
		}
		ledgers[i], _ = fedtest.OpenLedger(1e6, "")
		p, err := fed.NewParty(fed.PartyConfig{Run: setup.Run, ID: id, Algorithm: pctd.Name,
			RetryMin: fed.Duration(time.Millisecond), RetryMax: fed.Duration(50 * time.Millisecond)}, learners[i], ledgers[i], conn, fed.PartyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _, errs[i] = p.Run(ctx) })
	}
	var res *fed.Result
	wg.Go(func() { res, errs[len(ids)] = coord.Run(ctx) })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: participant %d: %v", tr, i, err)
		}
	}
	out := &outcome{final: res.Final.Payload}
	if out.global, err = agg.Model(); err != nil {
		t.Fatal(err)
	}
	for i, l := range learners {
		m, err := l.Model()
		if err != nil {
			t.Fatal(err)
		}
		out.locals = append(out.locals, m)
		out.ledgers = append(out.ledgers, ledgers[i].Entries())
	}
	return out
}

// TestTransportsAgree checks simulation parity: a seeded three-party run
// of each noise path in process and over gRPC with mutual TLS on loopback
// gives identical models and ledgers, and every party is charged one
// Gaussian release per round.
func TestTransportsAgree(t *testing.T) {
	parts, vocab := synthData(t, 4, 60, 240, 1)
	for _, params := range []string{
		`{"topics":4,"rounds":3,"variant":"unit","sigma":0.5}`,
		`{"topics":4,"rounds":3,"max_doc_tokens":20,"epsilon":5}`,
	} {
		t.Run(params, func(t *testing.T) {
			want := play(t, fedtest.InProc(inproc.Faults{}), params, parts, vocab, 5)
			got := play(t, fedtest.Loopback(), params, parts, vocab, 5)
			if !slices.Equal(got.final, want.final) || !slices.Equal(got.global.Phi, want.global.Phi) {
				t.Errorf("the final model over gRPC differs from the in-process one")
			}
			for i := range want.locals {
				if !slices.Equal(got.locals[i].Phi, want.global.Phi) {
					t.Errorf("party %d holds another model than the coordinator's", i+1)
				}
				if d := cmp.Diff(want.ledgers[i], got.ledgers[i]); d != "" {
					t.Errorf("party %d: ledger entries differ (-inproc +grpc):\n%s", i+1, d)
				}
				if n := len(want.ledgers[i]); n != 3 {
					t.Errorf("party %d: %d ledger charges; want one per round (3)", i+1, n)
				}
			}
		})
	}
}

// TestNoNoiseOnePartyMatchesTrain is the reference equivalence: one party
// without noise runs exactly the centralized EM of pctd.Train, so the
// models are identical.
func TestNoNoiseOnePartyMatchesTrain(t *testing.T) {
	parts, vocab := synthData(t, 5, 80, 300, 2)
	params := `{"no_noise":true,"topics":5,"rounds":6}`
	got := play(t, fedtest.InProc(inproc.Faults{}), params, parts[2:], vocab, 9)
	cfg, err := pctd.ParseConfig([]byte(params))
	if err != nil {
		t.Fatal(err)
	}
	want, err := pctd.Train(context.Background(), parts[2], vocab, cfg, 9, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.global.Phi, want.Phi) {
		t.Errorf("the federated one-party model differs from Train's")
	}
	if len(got.ledgers[0]) != 0 {
		t.Errorf("no-noise run charged %v; want nothing", got.ledgers[0])
	}
}

// TestWorkersDoNotChangeResult runs a noisy party with one and with four
// workers: the E-step is cut into fixed shards with their own streams, so
// the updates must be identical.
func TestWorkersDoNotChangeResult(t *testing.T) {
	parts, vocab := synthData(t, 4, 50, 200, 3)
	run := func(workers int) []byte {
		s := fed.Setup{Run: "w", Parties: []string{"a"}, Vocab: vocab, Seed: 4,
			Params: json.RawMessage(fmt.Sprintf(`{"topics":4,"variant":"unit","sigma":0.3,"workers":%d}`, workers))}
		agg, err := pctd.NewAggregator(s)
		if err != nil {
			t.Fatal(err)
		}
		l, err := pctd.NewLearner(s, 0, parts[2])
		if err != nil {
			t.Fatal(err)
		}
		init, _ := agg.Init()
		st, err := l.Learn(1, init.Payload)
		if err != nil {
			t.Fatal(err)
		}
		return st.Payload
	}
	if a, b := run(1), run(4); !slices.Equal(a, b) {
		t.Errorf("the update with 4 workers differs from the one with 1")
	}
}
