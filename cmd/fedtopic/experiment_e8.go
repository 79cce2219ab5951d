package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/eval/lm"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/sim/adlda"
	"github.com/fedtopic/fedtopic/topic"
)

// e8Flags configure experiment E8.
type e8Flags struct {
	compareFlags
	order       int
	lambda      float64
	lambdaGrid  string
	steps       int
	adldaRounds int
}

// e8Run is one E8 invocation: compare's data, calibration and runs, and
// the n-gram model every topic model adapts.
type e8Run struct {
	c       *compareRun
	f       *e8Flags
	ng      *lm.NGram
	lambdas []float64 // sorted, with 0 and f.lambda
	ngram   float64   // the n-gram model's perplexity alone
	parties []float64 // each party's adapted perplexity at f.lambda
}

// e8Model is one topic model E8 adapts the n-gram model with.
type e8Model struct {
	role, name string
	m          *topic.Model
	line       map[string]any // what describes it: method, K, ε spent …
}

// parseLambdas reads --lambda-grid and adds 0 and the claim's λ.
func parseLambdas(grid string, lambda float64) ([]float64, error) {
	if !(lambda > 0 && lambda < 1) {
		return nil, usagef("--lambda %v: want a weight in (0, 1)", lambda)
	}
	out := []float64{0, lambda}
	for _, f := range strings.Split(grid, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		l, err := strconv.ParseFloat(f, 64)
		if err != nil || !(l >= 0 && l < 1) {
			return nil, usagef("--lambda-grid %q: want weights in [0, 1), comma-separated", grid)
		}
		out = append(out, l)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// adapt scores the n-gram model adapted by t.m at every λ and emits one
// line per λ; it returns the perplexity at the claim's λ.
func (r *e8Run) adapt(ctx context.Context, t e8Model) (float64, error) {
	x := r.c.x
	scores, err := lm.Evaluate(ctx, r.ng, t.m, x.data.test, r.lambdas, r.f.steps)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", t.name, err)
	}
	topicPerp, err := r.c.perplexity(ctx, t.m, x.data.test)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", t.name, err)
	}
	var at float64
	for _, s := range scores {
		line := map[string]any{"role": t.role, "model": t.name}
		maps.Copy(line, t.line)
		line["k"], line["lambda"], line["perplexity"], line["log_likelihood"], line["tokens"] = t.m.K, s.Lambda, s.Perplexity, s.LogLikelihood, s.Tokens
		line["topic_perplexity"] = topicPerp
		if err := x.emit(line); err != nil {
			return 0, err
		}
		if s.Lambda == r.f.lambda {
			at = s.Perplexity
		}
	}
	fmt.Fprintf(x.log, "  %s: adapted perplexity %.1f at λ = %g (n-gram alone %.1f; topic model's document completion %.1f)\n", t.name, at, r.f.lambda, r.ngram, topicPerp)
	return at, nil
}

// claim emits whether the model t, adapted at the claim's λ to perplexity
// perp, beats the n-gram model adapted by every party's own model.
func (r *e8Run) claim(t e8Model, perp float64) error {
	best := slices.Min(r.parties)
	line := map[string]any{"claim": "the federated topic model adapts the n-gram model better than any party's own",
		"model": t.name, "claim_lambda": r.f.lambda, "adapted_perplexity": perp, "best_party_perplexity": best,
		"ngram_perplexity": r.ngram, "held": perp < best}
	for _, k := range []string{"method", "target_epsilon", "doc_epsilon"} {
		if v, ok := t.line[k]; ok {
			line[k] = v
		}
	}
	return r.c.x.emit(line)
}

// private calibrates the variant v to target for every candidate number of
// rounds, runs it, keeps the run of lowest development perplexity (after
// the variant's post-processing) and returns its global model; nil with
// the reason when the budget is out of reach.
func (r *e8Run) private(ctx context.Context, v compareVariant, meth *method, target float64) (*e8Model, string, error) {
	base := map[string]any{"method": v.name, "algorithm": v.method, "target_epsilon": epsilonValue(target)}
	line, res, reasons, err := r.c.tune(ctx, v, meth, target, base)
	if err != nil {
		return nil, "", err
	}
	if line == nil {
		return nil, strings.Join(reasons, "; "), nil
	}
	delete(line, "spent")
	m := &e8Model{role: "private", name: fmt.Sprintf("%s ε=%v", v.name, epsilonValue(target)), m: res.Global, line: line}
	if math.IsInf(target, 1) {
		m.role = "federated"
	}
	return m, "", nil
}

// adlda runs AD-LDA (every party sweeps its documents against the shared
// counts each round, no privacy), the non-private federated reference.
func (r *e8Run) adlda(ctx context.Context) (*e8Model, error) {
	c := r.c
	d := c.x.data
	params, err := json.Marshal(adlda.Params{K: c.f.topics, Rounds: r.f.adldaRounds, Workers: c.x.workers})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	res, err := sim.Run(ctx, sim.Scenario{Algorithm: adlda.Algorithm, Params: params, Corpora: d.parts, Vocab: d.vocab, Seed: c.x.seed})
	if err != nil {
		return nil, fmt.Errorf("adlda: %w", err)
	}
	if res.Global == nil {
		return nil, errors.New("adlda made no global model")
	}
	res.Global.Vocab = d.vocab
	line := map[string]any{"method": "adlda", "rounds": r.f.adldaRounds, "seconds": time.Since(start).Seconds()}
	spent(line, res)
	delete(line, "spent")
	return &e8Model{role: "federated", name: "adlda", m: res.Global, line: line}, nil
}

// run trains the n-gram model and every topic model, and scores each
// adapted model on the test documents.
func (r *e8Run) run(ctx context.Context, vs []compareVariant, grid []int, targets []float64) error {
	c, x, d := r.c, r.c.x, r.c.x.data
	heldIn := concatCorpora(d.parts)
	var err error
	if r.ng, err = lm.Train(ctx, heldIn, lm.Config{Order: r.f.order}); err != nil {
		return err
	}
	alone, err := lm.Evaluate(ctx, r.ng, nil, d.test, []float64{0}, 0)
	if err != nil {
		return err
	}
	r.ngram = alone[0].Perplexity
	if err := x.enc.Encode(map[string]any{"plot": map[string]any{"title": "Held-out per-word perplexity of the n-gram model adapted by each topic model",
		"x": "lambda", "y": "perplexity", "series": []string{"model"}, "x_label": "λ, the topic model's weight (0: the n-gram model alone)", "y_label": "Held-out per-word perplexity"}}); err != nil {
		return err
	}
	var discounts []string
	for n, ds := range r.ng.Discounts() {
		discounts = append(discounts, fmt.Sprintf("order %d: %.3g %.3g %.3g", n+1, ds[0], ds[1], ds[2]))
	}
	if err := x.emit(map[string]any{"role": "ngram", "model": fmt.Sprintf("kn%d", r.ng.Order()),
		"method": "interpolated modified Kneser–Ney", "order": r.ng.Order(), "discounts": strings.Join(discounts, "; "),
		"data": d.desc, "train_docs": heldIn.NumDocs(), "train_tokens": heldIn.NumTokens(), "dev_docs": c.dev.NumDocs(),
		"lambda": 0.0, "perplexity": r.ngram, "log_likelihood": alone[0].LogLikelihood, "tokens": alone[0].Tokens,
		"fold_in": fmt.Sprintf("EM over the prefix with the topics fixed, %d passes per word", r.steps())}); err != nil {
		return err
	}
	fmt.Fprintf(x.log, "e8: %d-gram model on %d held-in documents: test perplexity %.1f (%s)\n", r.ng.Order(), heldIn.NumDocs(), r.ngram, strings.Join(discounts, "; "))

	// Each party alone and the pooled data, non-private, K by development
	// perplexity.
	for p, part := range d.parts {
		m, dev, secs, err := c.bestLocal(ctx, part, grid)
		if err != nil {
			return fmt.Errorf("experiment e8: party p%d: %w", p+1, err)
		}
		name := fmt.Sprintf("p%d", p+1)
		perp, err := r.adapt(ctx, e8Model{role: "party", name: name + " alone", m: m,
			line: map[string]any{"method": "lda", "party": name, "k_grid": joinList(grid), "dev_perplexity": dev, "seconds": secs}})
		if err != nil {
			return err
		}
		r.parties = append(r.parties, perp)
	}
	pooled, dev, secs, err := c.bestLocal(ctx, heldIn, grid)
	if err != nil {
		return fmt.Errorf("experiment e8: pooled: %w", err)
	}
	pm := e8Model{role: "pooled", name: "pooled", m: pooled, line: map[string]any{"method": "lda", "k_grid": joinList(grid), "dev_perplexity": dev, "seconds": secs}}
	perp, err := r.adapt(ctx, pm)
	if err != nil {
		return err
	}
	if err := r.claim(pm, perp); err != nil {
		return err
	}
	if r.f.adldaRounds > 0 {
		am, err := r.adlda(ctx)
		if err != nil {
			return fmt.Errorf("experiment e8: %w", err)
		}
		perp, err := r.adapt(ctx, *am)
		if err != nil {
			return err
		}
		if err := r.claim(*am, perp); err != nil {
			return err
		}
	}
	ms := methods()
	for _, v := range vs {
		meth, err := lookupMethod(ms, v.method)
		if err != nil {
			return err
		}
		for _, target := range targets {
			t, reason, err := r.private(ctx, v, meth, target)
			if err != nil {
				return fmt.Errorf("experiment e8: %s at ε = %v: %w", v.name, epsilonValue(target), err)
			}
			if t == nil {
				fmt.Fprintf(x.log, "  %s at ε = %v: unreachable: %s\n", v.name, epsilonValue(target), reason)
				if err := x.emit(map[string]any{"role": "private", "method": v.name, "target_epsilon": epsilonValue(target),
					"status": "unreachable", "reason": reason}); err != nil {
					return err
				}
				continue
			}
			perp, err := r.adapt(ctx, *t)
			if err != nil {
				return err
			}
			if err := r.claim(*t, perp); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *e8Run) steps() int {
	if r.f.steps == 0 {
		return lm.DefaultSteps
	}
	return r.f.steps
}

func newE8Cmd(e *env) *cobra.Command {
	x := &experiment{name: "e8"}
	var f e8Flags
	cmd := &cobra.Command{
		Use:   "e8 --corpus FILE",
		Short: "Topic-adapted language model: an n-gram model alone and adapted by each party's, the pooled and each federated topic model (FTM §4.5, iFTM §4.5)",
		Long: `e8 checks the topic-adapted language model of the FTM and iFTM papers:

  P(w|C) = λ·Σ_z P(w|z)·P(z|C) + (1 − λ)·P_ngram(w|C)

The n-gram model is an interpolated modified Kneser–Ney model (three
discounts per order, estimated from the counts of counts; --order 2 or 3)
over the shared vocabulary, trained on the held-in documents: every
party's training documents pooled, one n-gram model for every topic model.
P(z|C) is the topic mixture of the document's words before w, folded in
with the topics fixed by EM (--fold-in-steps passes over the prefix after
each word), never seeing the word predicted.

The topic models: each party's own non-private LDA and the pooled one
(K from --party-topics by development perplexity), AD-LDA over the parties
without privacy (--adlda-rounds, 0 to skip), and every private method
(--methods) calibrated to each target ε per document of --doc-epsilon as
'experiment compare' calibrates them (ε = inf: without noise), with the
number of rounds chosen on the development documents.

Held-out per-word perplexity is exp(−Σ log P(w_i|w_1 … w_{i−1}) / N) over
every token of the test documents, at every λ of --lambda-grid (0 is the
n-gram model alone). The claim checked, at λ = --lambda: the federated
topic model adapts the language model better than any party's own.

Documents are the vocabulary words of each text in order: the tokenizer
drops stop words and the vocabulary drops rare words, so the n-gram model
predicts the next content word.`,
		Example: `  fedtopic experiment e8 --corpus demo/wordnet-glosses.jsonl --doc-epsilon 4,inf --out e8.jsonl
  fedtopic report . --out e8.html`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			targets, err := parseEpsilons(f.epsilons)
			if err != nil {
				return err
			}
			grid, err := parseTopics(f.partyGrid)
			if err != nil {
				return err
			}
			lambdas, err := parseLambdas(f.lambdaGrid, f.lambda)
			if err != nil {
				return err
			}
			switch {
			case f.topics < 1:
				return usagef("--topics %d: want at least 1", f.topics)
			case !(f.delta > 0 && f.delta < 1):
				return usagef("--delta %v: want a value in (0, 1)", f.delta)
			case f.maxDocLen < 1:
				return usagef("--max-doc-length %d: want at least 1: every private method's cost per document grows with it", f.maxDocLen)
			case !(f.devFraction > 0 && f.devFraction < 1):
				return usagef("--dev-fraction %v: want a share in (0, 1)", f.devFraction)
			case f.iterations < 1:
				return usagef("--iterations %d: want at least 1", f.iterations)
			case f.order != 2 && f.order != 3:
				return usagef("--order %d: want 2 (bigram) or 3 (trigram)", f.order)
			case f.steps < 1:
				return usagef("--fold-in-steps %d: want at least 1", f.steps)
			case f.adldaRounds < 0:
				return usagef("--adlda-rounds %d: want ≥ 0 (0 skips AD-LDA)", f.adldaRounds)
			}
			if err := checkFTMMaxNoise(f.ftmMaxNoise); err != nil {
				return err
			}
			all := compareVariants()
			if err := parseRounds(f.rounds, all); err != nil {
				return err
			}
			vs, err := selectVariants(f.variants, all)
			if err != nil {
				return err
			}
			closer, err := x.open(ctx, e)
			if err != nil {
				return err
			}
			defer closer()
			if len(x.data.parts) < 2 {
				return usagef("--split %s: e8 needs at least two parties", x.split)
			}
			c := &compareRun{x: x, f: &f.compareFlags, maxLen: f.maxDocLen}
			if err := c.holdDev(); err != nil {
				return err
			}
			r := &e8Run{c: c, f: &f, lambdas: lambdas}
			if err := r.run(ctx, vs, grid, targets); err != nil {
				return err
			}
			return closer()
		},
	}
	x.register(cmd, "labels:sizes=1,2,3")
	fs := cmd.Flags()
	fs.IntVar(&f.topics, "topics", 20, "K of AD-LDA and every private method")
	fs.StringVar(&f.partyGrid, "party-topics", "10,20,40", "K tried for each party's own model and the pooled model; the best on the development documents is kept")
	fs.StringVar(&f.epsilons, "doc-epsilon", "4", "target ε per document of each party, comma-separated; inf runs each method without noise")
	fs.Float64Var(&f.delta, "delta", 1e-5, "target δ per document of each party")
	fs.IntVar(&f.maxDocLen, "max-doc-length", 20, "documents are clipped to this many tokens by every private method (a fixed public setting)")
	fs.Float64Var(&f.devFraction, "dev-fraction", 0.1, "share of each party's documents held out as development documents, which choose K and the rounds")
	fs.StringVar(&f.variants, "methods", "", "comma-separated methods or variants to run (default all): "+variantNames())
	fs.StringVar(&f.rounds, "rounds", "", "candidate rounds per method or variant, chosen on the development documents: pctd=5|10|20,fednmf=30 (defaults: ftm 5, pctd 5|10|20, fedlda 20, fednmf 30)")
	fs.IntVar(&f.iterations, "iterations", 300, "sweeps of the parties' and the pooled model's samplers")
	fs.Float64Var(&f.nmfClip, "fednmf-clip", 1, "DP-FedNMF: S, the L2 norm each party's update is clipped to")
	registerFTMMaxNoise(fs, &f.ftmMaxNoise)
	fs.IntVar(&f.adldaRounds, "adlda-rounds", 100, "rounds of AD-LDA, the non-private federated reference (one sweep each); 0 skips it")
	fs.IntVar(&f.order, "order", 3, "n-gram order: 2 (bigram) or 3 (trigram)")
	fs.Float64Var(&f.lambda, "lambda", lm.DefaultLambda, "λ, the topic model's weight, at which the claim is checked")
	fs.StringVar(&f.lambdaGrid, "lambda-grid", "0.05,0.2,0.3,0.5", "more weights λ to measure (0 and --lambda are always measured)")
	fs.IntVar(&f.steps, "fold-in-steps", lm.DefaultSteps, "EM passes over the document's prefix after each word, to infer P(z|C)")
	return cmd
}
