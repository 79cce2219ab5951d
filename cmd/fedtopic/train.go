package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/lda"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// Train's --model values beside LDA's: PC-TD's non-private EM and NMF.
const (
	modelPCTD   = "pctd"
	modelNMF    = "nmf"
	modelNMFSGD = "nmf-sgd"
)

// nmfDefaultIterations are train's defaults for NMF: HALS sweeps (at
// most; it stops when the objective settles) and SGD rounds of FedNMF's
// local epochs over the pooled data, each of which updates the whole V×K
// matrix W once per batch.
func nmfDefaultIterations(model string) int {
	if model == modelNMF {
		return 200
	}
	return 10
}

// trainNMF fits NMF to c: by HALS (nmf) or by FedNMF's client SGD on
// the pooled data (nmf-sgd), and returns W's normalized columns as topics.
func trainNMF(ctx context.Context, c *corpus.Corpus, words []string, model string, k, iters int, features string, miLambda float64, seed uint64) (*topic.Model, error) {
	if miLambda != 0 && model != modelNMFSGD {
		return nil, usagef("--mi-lambda applies to --model nmf-sgd only")
	}
	var (
		res *fednmf.Result
		err error
	)
	params := map[string]string{"model": model, "features": features}
	if model == modelNMF {
		res, err = fednmf.Train(ctx, c, fednmf.TrainConfig{K: k, Iterations: iters, Features: features, Seed: seed})
	} else {
		res, err = fednmf.TrainSGD(c, words, fednmf.Config{K: k, Rounds: iters, Features: features, MILambda: miLambda}, seed)
		params["mi_lambda"] = strconv.FormatFloat(miLambda, 'g', -1, 64)
	}
	if err != nil {
		return nil, err
	}
	if model == modelNMF {
		params["iterations"] = strconv.Itoa(len(res.Objective))
	} else {
		params["iterations"] = strconv.Itoa(iters)
	}
	m, err := res.Model(words)
	if err != nil {
		return nil, err
	}
	m.Prov.Method = model
	m.Prov.Seed = seed
	m.Prov.Params = params
	params["average"] = "1"
	return m, nil
}

func newTrainCmd(e *env) *cobra.Command {
	var (
		cf        corpusFlags
		cfg       lda.Config
		seed      string
		out       string
		force     bool
		vocabFile string
		saveVocab string
		bo        vocab.BuildOptions
		features  string
		miLambda  float64
	)
	cmd := &cobra.Command{
		Use:   "train --corpus FILE --topics K --out MODEL",
		Short: "Train an LDA or SentenceLDA model on one corpus (no federation, no privacy)",
		Long: `train fits a topic model to one corpus: the single-party and pooled-data
baseline of every federated method. The default sampler (--sampler mh) runs
on all cores and never depends on their number: a burn-in with the collapsed
AD-LDA kernel (all but the last 10 sweeps, or the last tenth if fewer), then
the partially collapsed chain, which draws Φ from its Dirichlet after every
sweep; tokens in documents of at most
--exact-len tokens are drawn exactly from their conditional, longer ones take
O(1) Metropolis-Hastings steps. At --topics 64 or fewer the burn-in draws
every token exactly from its collapsed conditional. --sampler gibbs is the
exact collapsed Gibbs sampler on one core; --model slda gives every
sentence one topic.
The model is the mean of the posterior means of Φ of the last tenth of the
sweeps (--average; --average 1 takes the final state's alone).`,
		Example: `  fedtopic train --corpus demo/wordnet-glosses.jsonl --topics 20 --iterations 200 --out demo.model
  fedtopic train --corpus docs.txt --tokenizer whitespace --topics 50 --iterations 500 --seed 1 --workers 2 --out m.model`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if out == "" {
				return usagef("--out is required: the path of the model file to write")
			}
			if err := checkOutFile(out, "--out", force); err != nil {
				return err
			}
			if cfg.K < 1 || cfg.K > lda.MaxK {
				return usagef("--topics %d: the number of topics must be between 1 and %d", cfg.K, lda.MaxK)
			}
			if cfg.Iterations < 1 {
				return usagef("--iterations %d: must be at least 1", cfg.Iterations)
			}
			if cfg.Average < 0 || cfg.Average > cfg.Iterations {
				return usagef("--average %d: must be between 1 and the %d iterations", cfg.Average, cfg.Iterations)
			}
			s, err := parseSeed(seed)
			if err != nil {
				return err
			}
			cfg.Seed = s
			lc := cfg
			if lc.Model == modelPCTD || lc.Model == modelNMF || lc.Model == modelNMFSGD {
				lc.Model = lda.ModelLDA // the shared checks; PC-TD's own come in pctd.Train
			}
			if err := lc.Validate(); err != nil {
				return usageError{err}
			}
			if err := bo.Validate(); err != nil {
				return usageError{err}
			}
			tc, err := cf.tokenizerConfig(nil)
			if err != nil {
				return err
			}
			var fixed *vocab.Vocabulary
			if vocabFile != "" {
				if fixed, err = vocab.Load(vocabFile); err != nil {
					return err
				}
			}
			c, v, _, err := cf.load(ctx, tc, bo, fixed, e.stderr)
			if err != nil {
				return err
			}
			if saveVocab != "" {
				if err := v.Save(saveVocab); err != nil {
					return err
				}
			}

			// The samplers report progress in tokens, SentenceLDA too.
			start := time.Now()
			var m *topic.Model
			switch cfg.Model {
			case modelNMF, modelNMFSGD:
				if !cmd.Flags().Changed("iterations") {
					cfg.Iterations = nmfDefaultIterations(cfg.Model)
				}
				m, err = trainNMF(ctx, c, v.Words(), cfg.Model, cfg.K, cfg.Iterations, features, miLambda, s)
				if err != nil {
					return err
				}
				if n, err := strconv.Atoi(m.Prov.Params["iterations"]); err == nil {
					cfg.Iterations = n // HALS may stop early
				}
			case modelPCTD:
				// PC-TD's EM without noise: the paper's "single party"
				// and "centralized" baselines.
				if !cmd.Flags().Changed("iterations") {
					cfg.Iterations = pctd.DefaultRounds
				}
				bar := newProgress(e.stderr, int64(cfg.Iterations), "EM", " iterations")
				m, err = pctd.Train(ctx, c, v.Words(), pctd.Config{Topics: cfg.K, Rounds: cfg.Iterations, Beta: cfg.Beta}, s,
					func(iter int, _ *topic.Model) error { bar.Set(int64(iter)); return nil })
				bar.Done()
				if err != nil {
					return err
				}
				m.Prov.Params = map[string]string{"model": modelPCTD, "iterations": strconv.Itoa(cfg.Iterations)}
				m.Prov.Params["average"] = "1"
			default:
				bar := newProgress(e.stderr, int64(cfg.Iterations)*int64(c.NumTokens()), "sampling", " tokens")
				m, err = lda.Train(ctx, c, cfg, func(iter, done int) { bar.Set(int64(done)) })
				bar.Done()
				if err != nil {
					return err
				}
			}
			elapsed := time.Since(start)

			m.Vocab = v.Words()
			if m.Prov.Params == nil {
				m.Prov.Params = map[string]string{}
			}
			tokenizerParams(tc, m.Prov.Params)
			m.Prov.Params["seed_source"] = seedSource(seed)
			m.Prov.Corpus = fmt.Sprintf("%s: %d documents, %d tokens", strings.Join(cf.paths, ","), c.NumDocs(), c.NumTokens())
			m.Prov.Created = time.Now().UTC().Format(time.RFC3339)
			m.Prov.Version = version
			if err := topic.Save(out, m); err != nil {
				return err
			}
			rate := float64(cfg.Iterations) * float64(c.NumTokens()) / elapsed.Seconds()
			estimate := "Φ of the final state"
			switch cfg.Model {
			case modelPCTD:
				estimate = "EM's final p(w|z)"
			case modelNMF, modelNMFSGD:
				estimate = "W's normalized columns"
			}
			if a := m.Prov.Params["average"]; a != "1" {
				estimate = "Φ averaged over the last " + a + " sweeps"
			}
			fmt.Fprintf(e.stdout, "wrote %s: %d topics over %d words, %s; %d iterations in %.1fs (%.3g tokens/s), seed %d\n",
				out, m.K, m.V, estimate, cfg.Iterations, elapsed.Seconds(), rate, cfg.Seed)
			return nil
		},
	}
	fs := cmd.Flags()
	cf.register(fs, "training text")
	fs.IntVarP(&cfg.K, "topics", "k", 0, "number of topics K (required)")
	fs.IntVar(&cfg.Iterations, "iterations", 1000, "sampler sweeps over the corpus")
	fs.StringVar(&cfg.Model, "model", lda.ModelLDA, "lda, slda (SentenceLDA: one topic per sentence), pctd (PC-TD's EM over windows of 3 words without noise: the baseline of --algorithm pctd; --iterations counts EM iterations, default 20), nmf (NMF by HALS on the tf-idf matrix; --iterations at most, default 200) or nmf-sgd (NMF by mini-batch SGD as each FedNMF client trains, with --mi-lambda its MI term; --iterations counts rounds of local epochs, default 10)")
	fs.StringVar(&features, "features", "tfidf", "nmf, nmf-sgd: the document matrix: tfidf or counts")
	fs.Float64Var(&miLambda, "mi-lambda", 0, "nmf-sgd: λ, the weight of the mutual-information term (FedNMF+MI); 0 is plain SGD NMF")
	fs.StringVar(&cfg.Sampler, "sampler", lda.SamplerMH, "mh (parallel: a collapsed AD-LDA burn-in, then the partially collapsed chain; exact draws in short documents, O(1) Metropolis-Hastings steps in long ones) or gibbs (exact collapsed Gibbs, O(K) per token, one core)")
	fs.Float64Var(&cfg.Alpha, "alpha", 0, "symmetric document-topic prior per topic (default 5/K)")
	fs.Float64Var(&cfg.Beta, "beta", 0, "symmetric topic-word prior (default 0.01)")
	fs.IntVar(&cfg.MHSteps, "mh-steps", 0, "Metropolis-Hastings steps per token and sweep (default 2)")
	fs.IntVar(&cfg.ExactLen, "exact-len", 0, "documents with at most this many tokens draw each topic exactly from its conditional instead of taking MH steps (default 256; -1: MH steps everywhere)")
	fs.IntVar(&cfg.Average, "average", 0, "average the model over the last this many sweeps, the mean of their posterior means of Φ (default: the last tenth of the sweeps; 1: the final state alone)")
	fs.IntVar(&cfg.Workers, "workers", 0, "sampling goroutines (default: all cores); never changes the result")
	fs.StringVar(&seed, "seed", "", "random seed (default: a fresh one from the OS, printed and recorded in the model)")
	fs.StringVarP(&out, "out", "o", "", "model file to write (required)")
	fs.BoolVar(&force, "force", false, "overwrite --out if it exists")
	fs.StringVar(&vocabFile, "vocab", "", "fixed vocabulary, one word per line: other tokens are dropped and unused words keep their prior mass")
	fs.StringVar(&saveVocab, "save-vocab", "", "write the vocabulary used to this file")
	fs.Float64Var(&bo.MinDF, "min-df", 0, "drop words in fewer documents (a count, or a fraction when < 1)")
	fs.Float64Var(&bo.MaxDF, "max-df", 0, "drop words in more documents (a fraction when ≤ 1, or a count)")
	fs.IntVar(&bo.MaxSize, "max-vocab", 0, "keep at most this many words, the most frequent by document frequency")
	return cmd
}

// parseSeed parses --seed; an empty value means a fresh seed from the OS.
func parseSeed(s string) (uint64, error) {
	if s == "" {
		return rng.NewSeed(), nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, usagef("--seed %q: want a non-negative integer", s)
	}
	return v, nil
}

func seedSource(s string) string {
	if s == "" {
		return "os"
	}
	return "flag"
}
