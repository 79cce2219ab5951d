package fednmf

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/vocab"
)

// runOutcome is what a federated run over one transport leaves.
type runOutcome struct {
	final   []byte
	traffic []fed.Traffic
	rounds  int
}

// playRun runs FedNMF over tr: a coordinator and one party per corpus.
func playRun(tb testing.TB, tr fedtest.Transport, cfg Config, parts []*corpus.Corpus, vocab []string, seed uint64) *runOutcome {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ids := make([]string, len(parts))
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	params, err := json.Marshal(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	setup := fed.Setup{Run: "fednmf-test", Parties: ids, Vocab: vocab, Seed: seed, Params: params}
	agg, err := NewAggregator(setup)
	if err != nil {
		tb.Fatal(err)
	}
	val, err := NewValidator(setup)
	if err != nil {
		tb.Fatal(err)
	}
	coord, err := fed.NewCoordinator(fed.CoordinatorConfig{Run: setup.Run, Algorithm: Name, Parties: ids,
		RoundTimeout: fed.Duration(10 * time.Minute), PollTimeout: fed.Duration(time.Second)}, agg, val, fed.CoordinatorOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	dial, stop, err := tr.Connect(coord, ids, val)
	if err != nil {
		tb.Fatal(err)
	}
	defer stop()
	errs := make([]error, len(ids)+1)
	var wg sync.WaitGroup
	for i, id := range ids {
		l, err := NewLearner(setup, i, parts[i])
		if err != nil {
			tb.Fatal(err)
		}
		conn, err := dial(id)
		if err != nil {
			tb.Fatal(err)
		}
		ledger, _ := fedtest.OpenLedger(100, "")
		p, err := fed.NewParty(fed.PartyConfig{Run: setup.Run, ID: id, Algorithm: Name,
			RetryMin: fed.Duration(time.Millisecond), RetryMax: fed.Duration(50 * time.Millisecond)}, l, ledger, conn, fed.PartyOptions{})
		if err != nil {
			tb.Fatal(err)
		}
		wg.Go(func() { _, errs[i] = p.Run(ctx) })
	}
	var res *fed.Result
	wg.Go(func() { res, errs[len(ids)] = coord.Run(ctx) })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			tb.Fatalf("%s: participant %d: %v", tr, i, err)
		}
	}
	return &runOutcome{final: res.Final.Payload, traffic: res.Traffic, rounds: res.Rounds}
}

// TestTransportsAgree checks that a seeded FedNMF+MI run with an adaptive
// server optimizer ends with the same broadcast, bit for bit, in process
// and over gRPC (loopback, mutual TLS).
func TestTransportsAgree(t *testing.T) {
	c, vocab := planted(t, 4, 40, 300)
	parts, err := corpus.Split(c, corpus.SplitSpec{Parties: 5}, rng.Derive(2, "split"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{K: 4, Rounds: 6, ClientFraction: 0.4, MILambda: 0.1, ServerOpt: OptFedAdam, Batch: 16}
	want := playRun(t, fedtest.InProc(inproc.Faults{}), cfg, parts, vocab, 9)
	got := playRun(t, fedtest.Loopback(), cfg, parts, vocab, 9)
	if !slices.Equal(got.final, want.final) {
		t.Errorf("final broadcast over gRPC differs from in process (%d and %d bytes)", len(got.final), len(want.final))
	}
}

// BenchmarkFederatedRun times a whole FedNMF+MI run in process and over
// gRPC: 10 parties (an even split of the benchmark corpus over the
// vocabulary of benchVocab), K = 50, C = 0.2, λ = 0.1 (or
// FEDTOPIC_BENCH_MI_LAMBDA; 0 is plain FedNMF), FEDTOPIC_BENCH_ROUNDS
// rounds (default 100), and reports its seconds (wall and CPU, all
// goroutines) and the bytes per sampled party and round, up and down; it
// fails if the two transports' final models differ.
//
//	FEDTOPIC_BENCH_CORPUS=wordnet.jsonl go test -run '^$' -bench FederatedRun -benchtime 1x ./fednmf
func BenchmarkFederatedRun(b *testing.B) {
	path := os.Getenv("FEDTOPIC_BENCH_CORPUS")
	if path == "" {
		path = "../demo/wordnet-glosses.jsonl"
	}
	rounds := 100
	if s := os.Getenv("FEDTOPIC_BENCH_ROUNDS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		rounds = v
	}
	c, v, _, err := vocab.Prepare(context.Background(), []string{path}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, benchVocab(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	parts, err := corpus.Split(c, corpus.SplitSpec{Parties: 10}, rng.Derive(1, "split"))
	if err != nil {
		b.Fatal(err)
	}
	lambda := 0.1
	if s := os.Getenv("FEDTOPIC_BENCH_MI_LAMBDA"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			b.Fatal(err)
		}
		lambda = v
	}
	cfg := Config{K: 50, Rounds: rounds, ClientFraction: 0.2, MILambda: lambda}
	b.Logf("%d documents, %d tokens, %d words, %d rounds", c.NumDocs(), c.NumTokens(), c.V, rounds)
	var finals [][]byte
	for _, tr := range []fedtest.Transport{fedtest.InProc(inproc.Faults{}), fedtest.Loopback()} {
		b.Run(tr.String(), func(b *testing.B) {
			var out *runOutcome
			cpu0 := cpuSeconds(b)
			for range b.N {
				out = playRun(b, tr, cfg, parts, v.Words(), 1)
			}
			b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N), "cpu-s/run")
			var up, down int64
			for _, t := range out.traffic {
				up += t.Up
				down += t.Down
			}
			sampled := float64(out.rounds) * 2 // ⌊C·n⌋ = 2 parties a round
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/run")
			b.ReportMetric(float64(up)/sampled, "up-B/party-round")
			b.ReportMetric(float64(down)/sampled, "down-B/party-round")
			finals = append(finals, out.final)
		})
	}
	if len(finals) == 2 && !slices.Equal(finals[0], finals[1]) {
		b.Errorf("final models differ between transports")
	}
}
