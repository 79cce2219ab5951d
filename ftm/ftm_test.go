package ftm_test

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
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/lda"
	"github.com/fedtopic/fedtopic/topic"
)

// synthData returns a synthetic LDA corpus with sentences, split into
// parties of relative sizes 1:2:3 (documents in order) and a test set of
// the last test documents.
func synthData(t testing.TB, k, v, docs, test int, seed uint64) (parts []*corpus.Corpus, held *corpus.Corpus, vocab []string) {
	t.Helper()
	d, err := synth.Generate(synth.Config{K: k, V: v, Docs: docs + test, DocLen: 40, SentLen: 6, WordsOnly: true}, rng.Derive(seed, "synth"))
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
	held = c.Subset(idx(docs, docs+test))
	vocab = make([]string, c.V)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%03d", w)
	}
	return parts, held, vocab
}

// outcome is what a federation run produced.
type outcome struct {
	final   []byte
	global  *topic.Model
	locals  []*topic.Model
	ledgers [][]fedtest.LedgerEntry
}

// play runs FTM over tr: a coordinator and one party per corpus, each with
// an in-memory ledger of budget 100.
func play(t *testing.T, tr fedtest.Transport, params string, parts []*corpus.Corpus, vocab []string, seed uint64) *outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ids := make([]string, len(parts))
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	setup := fed.Setup{Run: "ftm-test", Parties: ids, Vocab: vocab, Seed: seed, Params: json.RawMessage(params)}
	agg, err := ftm.NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	val, err := ftm.NewValidator(setup)
	if err != nil {
		t.Fatal(err)
	}
	coord, err := fed.NewCoordinator(fed.CoordinatorConfig{Run: setup.Run, Algorithm: ftm.Name, Parties: ids,
		RoundTimeout: fed.Duration(time.Minute), PollTimeout: fed.Duration(time.Second)}, agg, val, fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dial, stop, err := tr.Connect(coord, ids, val)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	learners := make([]*ftm.Learner, len(ids))
	ledgers := make([]*fedtest.Ledger, len(ids))
	errs := make([]error, len(ids)+1)
	var wg sync.WaitGroup
	for i, id := range ids {
		if learners[i], err = ftm.NewLearner(setup, i, parts[i]); err != nil {
			t.Fatal(err)
		}
		conn, err := dial(id)
		if err != nil {
			t.Fatal(err)
		}
		ledgers[i], _ = fedtest.OpenLedger(100, "")
		p, err := fed.NewParty(fed.PartyConfig{Run: setup.Run, ID: id, Algorithm: ftm.Name,
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

// TestTransportsAgree checks simulation parity for FTM: a seeded three-party
// run in process and over gRPC with mutual TLS on loopback gives identical
// global models, local models and ledger entries.
func TestTransportsAgree(t *testing.T) {
	parts, _, vocab := synthData(t, 6, 300, 300, 0, 1)
	params := `{"topics":[4,6,5],"rounds":3,"local_iterations":5,"epsilon":4,"block_size":500}`
	want := play(t, fedtest.InProc(inproc.Faults{}), params, parts, vocab, 5)
	got := play(t, fedtest.Loopback(), params, parts, vocab, 5)
	if !bytes.Equal(got.final, want.final) {
		t.Errorf("the final global model over gRPC differs from the in-process one")
	}
	if !slices.Equal(got.global.Phi, want.global.Phi) {
		t.Errorf("global models differ")
	}
	for i := range want.locals {
		if !slices.Equal(got.locals[i].Phi, want.locals[i].Phi) {
			t.Errorf("party %d: local models differ", i+1)
		}
		if d := cmp.Diff(want.ledgers[i], got.ledgers[i]); d != "" {
			t.Errorf("party %d: ledger entries differ (-inproc +grpc):\n%s", i+1, d)
		}
		if n := len(want.ledgers[i]); n != 1 || len(want.ledgers[i][0].Events) != 1 || want.ledgers[i][0].Events[0].Epsilon != 4 {
			t.Errorf("party %d: ledger %+v; want one charge of one event of ε = 4 (the privatization)", i+1, want.ledgers[i])
		}
	}
}

// TestNoNoiseOnePartyMatchesCentralized is a reference equivalence: with
// ε = ∞ (no noise) and a single party, FTM is the partially collapsed
// sampler on the true tokens, and its global model must reach the
// held-out quality of the centralized MH sampler trained as long (rounds ×
// local iterations sweeps; the topics are re-initialized from the composed
// model between rounds, as FTM does). Perplexities of two seeded chains on
// 1,200 documents differ by a few percent; the test allows 10%, and checks
// that both are far below the unigram baseline, so that a broken sampler
// cannot pass.
func TestNoNoiseOnePartyMatchesCentralized(t *testing.T) {
	parts, held, vocab := synthData(t, 8, 400, 1200, 200, 2)
	pooled := parts[0]
	for _, p := range parts[1:] {
		pooled = appendCorpus(pooled, p)
	}
	const rounds, iters = 2, 40
	params := fmt.Sprintf(`{"no_noise":true,"topics":[8],"rounds":%d,"local_iterations":%d}`, rounds, iters)
	out := play(t, fedtest.InProc(inproc.Faults{}), params, []*corpus.Corpus{pooled}, vocab, 3)
	ctx := context.Background()
	central, err := lda.Train(ctx, pooled, lda.Config{K: 8, Iterations: rounds * iters, Seed: 3, Workers: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	central.Vocab = vocab
	perp := func(m *topic.Model) float64 {
		r, err := eval.Perplexity(ctx, m, held, topic.InferConfig{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return r.Perplexity
	}
	pf, pc := perp(out.global), perp(central)
	unigram := unigramPerplexity(pooled, held)
	t.Logf("held-out perplexity: FTM ε=∞ one party %.1f (K* = %d), centralized MH %.1f, unigram %.1f", pf, out.global.K, pc, unigram)
	if pf > 1.1*pc {
		t.Errorf("FTM with no noise and one party: perplexity %.1f; want within 10%% of the centralized sampler's %.1f", pf, pc)
	}
	if pc > 0.8*unigram || pf > 0.8*unigram {
		t.Errorf("perplexities %.1f (FTM) and %.1f (centralized) are not clearly below the unigram model's %.1f", pf, pc, unigram)
	}
}

// appendCorpus returns the documents of a followed by those of b.
func appendCorpus(a, b *corpus.Corpus) *corpus.Corpus {
	c := &corpus.Corpus{V: max(a.V, b.V), Words: slices.Concat(a.Words, b.Words), DocStart: slices.Clone(a.DocStart)}
	for _, s := range b.DocStart[1:] {
		c.DocStart = append(c.DocStart, len(a.Words)+s)
	}
	return c
}

// unigramPerplexity is the perplexity of the held-out documents' second
// halves under the training corpus's smoothed word frequencies.
func unigramPerplexity(train, held *corpus.Corpus) float64 {
	m := &topic.Model{K: 1, V: train.V, Phi: make([]float64, train.V), Alpha: []float64{1}}
	for _, w := range train.Words {
		m.Phi[w]++
	}
	for w := range m.Phi {
		m.Phi[w] = (m.Phi[w] + 0.01) / (float64(len(train.Words)) + 0.01*float64(train.V))
	}
	r, err := eval.Perplexity(context.Background(), m, held, topic.InferConfig{Seed: 1})
	if err != nil {
		panic(err)
	}
	return r.Perplexity
}
