package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/lda"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// experiment holds what every experiment (docs/experiments.md) shares: the
// corpus and how it is prepared, the seed, the output and the resources.
type experiment struct {
	name         string
	cf           corpusFlags
	vocabSize    int
	minDF        float64
	testFraction float64
	subsample    float64
	split        string
	seed         uint64
	workers      int
	outPath      string
	modelsDir    string

	out   io.Writer
	log   io.Writer
	enc   *json.Encoder
	start time.Time
	data  *expData
}

// expData is an experiment's corpus: the training documents, already cut
// into parties, the held-out test documents and the shared vocabulary.
type expData struct {
	train, test *corpus.Corpus
	parts       []*corpus.Corpus
	vocab       []string
	desc        string
}

// register adds the flags every experiment has.
func (x *experiment) register(cmd *cobra.Command, split string) {
	fs := cmd.Flags()
	x.cf.register(fs, "the corpus (the WordNet glosses of bench/wordnet_glosses.py, or any other)")
	fs.IntVar(&x.vocabSize, "vocab-size", 12000, "keep the words of highest document frequency, at most this many")
	fs.Float64Var(&x.minDF, "min-df", 2, "drop words in fewer documents than this")
	fs.Float64Var(&x.testFraction, "test-fraction", 0.1, "share of the documents held out for evaluation (seeded)")
	fs.Float64Var(&x.subsample, "subsample", 1, "share of the remaining documents to train on (seeded)")
	fs.StringVar(&x.split, "split", split, "how the training documents are divided among the parties (see simulate --split)")
	fs.Uint64Var(&x.seed, "seed", 1, "random seed of the splits, the samplers and the noise")
	fs.IntVar(&x.workers, "workers", runtime.GOMAXPROCS(0), "goroutines per sampler; never changes the results")
	fs.StringVarP(&x.outPath, "out", "o", "", "JSON lines file to write the results to (default standard output)")
}

// open prepares the output and the data.
func (x *experiment) open(ctx context.Context, e *env) (func() error, error) {
	x.log = e.stderr
	x.out = e.stdout
	closer := func() error { return nil }
	if x.outPath != "" {
		f, err := os.Create(x.outPath)
		if err != nil {
			return nil, err
		}
		x.out, closer = f, f.Close
	}
	x.enc = json.NewEncoder(x.out)
	x.start = time.Now()
	if x.testFraction <= 0 || x.testFraction >= 1 {
		return closer, usagef("--test-fraction %v: want a share in (0, 1)", x.testFraction)
	}
	if x.subsample <= 0 || x.subsample > 1 {
		return closer, usagef("--subsample %v: want a share in (0, 1]", x.subsample)
	}
	if x.workers < 1 {
		return closer, usagef("--workers %d: want at least 1", x.workers)
	}
	d, err := x.load(ctx)
	if err != nil {
		return closer, err
	}
	x.data = d
	return closer, nil
}

// load reads the corpus, builds the vocabulary, holds out the test
// documents, subsamples the rest and splits it among the parties.
func (x *experiment) load(ctx context.Context) (*expData, error) {
	tc, err := x.cf.tokenizerConfig(nil)
	if err != nil {
		return nil, err
	}
	pooled, v, _, err := x.cf.load(ctx, tc, vocab.BuildOptions{MinDF: x.minDF, MaxSize: x.vocabSize}, nil, x.log)
	if err != nil {
		return nil, err
	}
	n := pooled.NumDocs()
	perm := rng.Derive(x.seed, "experiment", "test").Perm(n)
	nTest := int(math.Round(x.testFraction * float64(n)))
	testIdx, trainIdx := slices.Clone(perm[:nTest]), perm[nTest:]
	slices.Sort(testIdx)
	if x.subsample < 1 {
		trainIdx = trainIdx[:int(math.Round(x.subsample*float64(len(trainIdx))))]
	}
	trainIdx = slices.Clone(trainIdx)
	slices.Sort(trainIdx)
	d := &expData{train: pooled.Subset(trainIdx), test: pooled.Subset(testIdx), vocab: v.Words()}
	if x.split != "" {
		spec, err := corpus.ParseSplit(x.split)
		if err != nil {
			return nil, usageError{err}
		}
		if d.parts, err = corpus.Split(d.train, spec, rng.Derive(x.seed, "experiment", "split")); err != nil {
			return nil, usageError{err}
		}
	}
	d.desc = fmt.Sprintf("%d training documents (%d tokens), %d test documents (%d tokens), V = %d",
		d.train.NumDocs(), d.train.NumTokens(), d.test.NumDocs(), d.test.NumTokens(), len(d.vocab))
	fmt.Fprintf(x.log, "%s: %s\n", x.name, d.desc)
	for i, p := range d.parts {
		fmt.Fprintf(x.log, "  p%d: %d documents, %d tokens\n", i+1, p.NumDocs(), p.NumTokens())
	}
	return d, nil
}

// emit writes one JSON line with the experiment's name and seed.
func (x *experiment) emit(line map[string]any) error {
	line["experiment"] = x.name
	line["seed"] = x.seed
	return x.enc.Encode(line)
}

// heldOut returns the document-completion held-out log-likelihood and
// perplexity of m on the test documents.
func (x *experiment) heldOut(ctx context.Context, m *topic.Model) (ll, perp float64, err error) {
	r, err := eval.Perplexity(ctx, m, x.data.test, topic.InferConfig{Seed: x.seed, Workers: x.workers})
	if err != nil {
		return 0, 0, err
	}
	return r.LogLikelihood, r.Perplexity, nil
}

// trainLocal trains a non-private model on one corpus (a party's own LDA or
// SentenceLDA) with the MH sampler.
func (x *experiment) trainLocal(ctx context.Context, c *corpus.Corpus, model string, k, iterations int) (*topic.Model, error) {
	m, err := lda.Train(ctx, c, lda.Config{K: k, Iterations: iterations, Seed: x.seed, Workers: x.workers, Model: model}, nil)
	if err != nil {
		return nil, err
	}
	m.Vocab = x.data.vocab
	return m, nil
}

// ftmRun is the outcome of one FTM simulation.
type ftmRun struct {
	res     *sim.Result
	seconds float64
	rounds  []ftmRound
}

// ftmRound is what one round of a run measured.
type ftmRound struct {
	Round     int     `json:"round"`
	LogLik    float64 `json:"log_likelihood"`
	Perplex   float64 `json:"perplexity"`
	BytesUp   int64   `json:"bytes_up"`   // all parties, cumulative
	BytesDown int64   `json:"bytes_down"` // all parties, cumulative
	Topics    int     `json:"topics"`
}

// simulate runs alg over the parties with params, measuring the global
// model on the test documents after every one of the first evalFirst
// rounds, every evalEvery-th round (0: none) and the last.
func (x *experiment) simulate(ctx context.Context, alg fed.Algorithm, params any, parts []*corpus.Corpus, rounds, evalFirst, evalEvery int, budget float64) (*ftmRun, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	run := &ftmRun{}
	sc := sim.Scenario{Algorithm: alg, Params: b, Corpora: parts, Vocab: x.data.vocab, Seed: x.seed,
		Budget: accountant.Budget{Epsilon: budget, Delta: sim.DefaultDelta}}
	sc.Metrics = func(round int, m *topic.Model) (map[string]float64, error) {
		if round != rounds && round > evalFirst && (evalEvery <= 0 || round%evalEvery != 0) {
			return nil, nil
		}
		// sim asks for the last round twice (its line and the summary).
		if n := len(run.rounds); n > 0 && run.rounds[n-1].Round == round {
			r := run.rounds[n-1]
			return map[string]float64{"log_likelihood": r.LogLik, "perplexity": r.Perplex}, nil
		}
		ll, perp, err := x.heldOut(ctx, m)
		if err != nil {
			return nil, err
		}
		// The round's bytes are added from the run record afterwards.
		run.rounds = append(run.rounds, ftmRound{Round: round, LogLik: ll, Perplex: perp, Topics: m.K})
		fmt.Fprintf(x.log, "  %s round %d: held-out log-likelihood %.6g (perplexity %.1f, %d topics)\n", alg.Name, round, ll, perp, m.K)
		return map[string]float64{"log_likelihood": ll, "perplexity": perp}, nil
	}
	var rec recordBytes
	sc.Record = &rec
	start := time.Now()
	res, err := sim.Run(ctx, sc)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", alg.Name, err)
	}
	run.res, run.seconds = res, time.Since(start).Seconds()
	// Attach the cumulative bytes from the run record.
	for i := range run.rounds {
		run.rounds[i].BytesUp, run.rounds[i].BytesDown = rec.upTo(run.rounds[i].Round)
	}
	return run, nil
}

// recordBytes reads a run record as it is written and keeps the bytes of
// every committed round.
type recordBytes struct {
	up, down map[int]int64
	buf      []byte
}

func (r *recordBytes) Write(p []byte) (int, error) {
	r.buf = append(r.buf, p...)
	for {
		i := slices.Index(r.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		var l fed.RoundLine
		if json.Unmarshal(r.buf[:i], &l) == nil && l.Type == fed.TypeRound && l.Committed {
			if r.up == nil {
				r.up, r.down = map[int]int64{}, map[int]int64{}
			}
			for _, t := range l.Bytes {
				r.up[l.Round] += t.Up
				r.down[l.Round] += t.Down
			}
		}
		r.buf = r.buf[i+1:]
	}
}

// upTo returns the bytes sent up and down over rounds 1..round.
func (r *recordBytes) upTo(round int) (up, down int64) {
	for k, v := range r.up {
		if k <= round {
			up += v
			down += r.down[k]
		}
	}
	return up, down
}

// modelPath returns where a model of this experiment is saved, or "" when
// --models-dir is not set.
func (x *experiment) modelPath(name string) string {
	if x.modelsDir == "" {
		return ""
	}
	return filepath.Join(x.modelsDir, name+".model")
}

// save writes m to the models directory, if one is set.
func (x *experiment) save(name string, m *topic.Model) error {
	p := x.modelPath(name)
	if p == "" {
		return nil
	}
	if err := os.MkdirAll(x.modelsDir, 0o755); err != nil {
		return err
	}
	return topic.Save(p, m)
}

func newExperimentCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "experiment e1|e2|e3|e4|e5|e6|e7|e8|dev|attacks|compare",
		Short: "Run the experiments that check the papers' claims (docs/experiments.md) and write JSON lines",
		Long: `experiment runs one of the experiments that check the papers' claims on real
text, and writes one JSON line per measured model or round.

  e1   data scarcity (FTM Fig. 4, iFTM Fig. 5): three parties with unequal,
       non-IID data; the FTM global model against each party's own
       non-private model, for LDA and SentenceLDA.
  e2   privacy–utility grid (FTM Fig. 5, iFTM Fig. 6): ε × τ.
  e3   likelihood against rounds and bytes (FTM Fig. 6, iFTM Fig. 7): FTM
       against AD-LDA on the pooled data, with 3 and 4 parties.
  e4   classification with topic features (iFTM Table 3).
  e5   PC-TD (PC-TD Fig. 2-4): perplexity against iterations for σ and the
       SSP variant's ε, federated against each party and the pooled EM;
       coherence against K with and without the word-relation step.
  e6   FedLDA (FedLDA Fig. 5, Table 2): perplexity against iterations for
       RRP, kRR, t-kRR and no privacy, with Gibbs and MH; sweeps of ε, K,
       the truncation δ and the sample ratio.
  e7   FedNMF (FedNMF Tables III-IV): coherence and SVM accuracy for LDA,
       NMF, NMF-SGD (±MI) and the four server optimizers (±MI), over K.
  e8   topic-adapted language model (FTM/iFTM): a Kneser–Ney trigram alone
       and adapted by each party's, the pooled, AD-LDA's and each private
       method's topics; held-out per-word perplexity against λ.
  dev  the development measurements behind FTM's defaults (L, ξ, K,
       local iterations, MH steps).
  attacks
       the word-presence attack against every private method's release:
       an empirical lower bound on ε beside the ε the method claims
       (docs/attacks.md).
  compare
       which method at which budget: every private method calibrated to one
       document-level ε, against each party alone and the pooled data,
       and each party's own topics beside the federated ones
       (docs/compare.md).

The corpus is the WordNet glosses (python3 bench/wordnet_glosses.py > FILE,
from Debian's wordnet-base) or any labelled JSONL corpus. Held-out
likelihood is document-completion (docs/experiments.md).`,
	}
	cmd.AddCommand(newE1Cmd(e), newE2Cmd(e), newE3Cmd(e), newE4Cmd(e), newE5Cmd(e), newE6Cmd(e), newE7Cmd(e), newE8Cmd(e), newDevCmd(e), newAttacksCmd(e), newCompareCmd(e))
	return cmd
}
