package main

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/topic"
)

// e1Flags configure experiment E1 (and the models E4 reuses).
type e1Flags struct {
	grid       string
	iterations int
	models     string
	debias     string
	epsilon    float64
	tau        float64
	rounds     int
	localIters int
}

func (f *e1Flags) register(cmd *cobra.Command, debias string) {
	fs := cmd.Flags()
	fs.StringVar(&f.grid, "topics-grid", "10,20,40", "numbers of topics tried for each party's own model; the best on the test documents is kept (tuned baselines) and used as the party's K_p in FTM")
	fs.IntVar(&f.iterations, "iterations", 300, "sweeps of each party's own sampler")
	fs.StringVar(&f.models, "models", "lda,slda", "model families: lda (FTM) and slda (iFTM's SentenceLDA)")
	fs.StringVar(&f.debias, "debias", debias, "FTM variants by debiasing: none, output, draw (comma-separated)")
	fs.Float64Var(&f.epsilon, "epsilon", ftm.DefaultEpsilon, "FTM's ε per word occurrence")
	fs.Float64Var(&f.tau, "tau", ftm.PaperTau, "FTM's threshold τ")
	fs.IntVar(&f.rounds, "rounds", ftm.DefaultRounds, "FTM rounds")
	fs.IntVar(&f.localIters, "local-iterations", ftm.DefaultLocalIterations, "FTM sweeps per party and round")
}

// partyModels trains each party's own non-private model for every K of the
// grid, emits a line per model, and returns each party's best model and K.
func (x *experiment) partyModels(ctx context.Context, model string, grid []int, iterations int) ([]*topic.Model, []int, error) {
	best := make([]*topic.Model, len(x.data.parts))
	ks := make([]int, len(x.data.parts))
	bestLL := make([]float64, len(x.data.parts))
	for p, part := range x.data.parts {
		bestLL[p] = math.Inf(-1)
		for _, k := range grid {
			start := time.Now()
			m, err := x.trainLocal(ctx, part, model, k, iterations)
			if err != nil {
				return nil, nil, fmt.Errorf("party p%d, K = %d: %w", p+1, k, err)
			}
			secs := time.Since(start).Seconds()
			ll, perp, err := x.heldOut(ctx, m)
			if err != nil {
				return nil, nil, err
			}
			fmt.Fprintf(x.log, "  p%d own %s K = %d: held-out log-likelihood %.6g (perplexity %.1f)\n", p+1, model, k, ll, perp)
			if err := x.emit(map[string]any{"method": "party", "model": model, "party": fmt.Sprintf("p%d", p+1), "k": k,
				"iterations": iterations, "docs": part.NumDocs(), "tokens": part.NumTokens(),
				"log_likelihood": ll, "perplexity": perp, "seconds": secs}); err != nil {
				return nil, nil, err
			}
			if ll > bestLL[p] {
				best[p], ks[p], bestLL[p] = m, k, ll
			}
		}
	}
	return best, ks, nil
}

// runFTM runs FTM over the parties and emits its global model's and local
// models' held-out likelihood; it returns the run and the global model's
// log-likelihood.
func (x *experiment) runFTM(ctx context.Context, method string, cfg ftm.Config, extra map[string]any) (*ftmRun, float64, error) {
	rounds := cfg.Rounds
	if rounds == 0 {
		rounds = ftm.DefaultRounds
	}
	run, err := x.simulate(ctx, ftm.Algorithm, cfg, x.data.parts, rounds, 0, 0, 1e6)
	if err != nil {
		return nil, 0, err
	}
	last := run.rounds[len(run.rounds)-1]
	topL, xi, iters := cfg.TopL, cfg.Xi, cfg.LocalIterations
	if topL == 0 {
		topL = ftm.DefaultTopL
	}
	if xi == 0 {
		xi = ftm.DefaultXi
	}
	if iters == 0 {
		iters = ftm.DefaultLocalIterations
	}
	line := map[string]any{"method": method, "model": cfg.Model, "topics": cfg.Topics, "global_topics": last.Topics,
		"epsilon": cfg.Epsilon, "tau": *cfg.Tau, "debias": debiasName(cfg.Debias), "rounds": rounds, "local_iterations": iters,
		"top_l": topL, "xi": xi, "log_likelihood": last.LogLik, "perplexity": last.Perplex, "seconds": run.seconds,
		"bytes_up": last.BytesUp, "bytes_down": last.BytesDown, "tokens": x.data.train.NumTokens()}
	if cfg.NoNoise {
		line["epsilon"] = "inf"
	}
	for k, v := range extra {
		line[k] = v
	}
	if err := x.emit(line); err != nil {
		return nil, 0, err
	}
	for p, l := range run.res.Locals {
		ll, perp, err := x.heldOut(ctx, l)
		if err != nil {
			return nil, 0, err
		}
		if err := x.emit(map[string]any{"method": method + "-local", "model": cfg.Model, "party": fmt.Sprintf("p%d", p+1),
			"k": l.K, "debias": cfg.Debias, "log_likelihood": ll, "perplexity": perp}); err != nil {
			return nil, 0, err
		}
	}
	return run, last.LogLik, nil
}

// ftmConfig returns FTM's configuration for an experiment.
func ftmConfig(model string, ks []int, eps, tau float64, rounds, localIters int, debias string, workers int) ftm.Config {
	t := tau
	return ftm.Config{Model: model, Topics: ks, Epsilon: eps, Tau: &t, Rounds: rounds, LocalIterations: localIters,
		Debias: debias, Workers: workers}
}

// debiasModes parses --debias: none means "".
func debiasModes(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		switch f = strings.TrimSpace(f); f {
		case "none":
			out = append(out, "")
		case ftm.DebiasOutput, ftm.DebiasDraw:
			out = append(out, f)
		default:
			return nil, usagef("--debias %q: want none, output or draw", f)
		}
	}
	return out, nil
}

func debiasName(d string) string {
	if d == "" {
		return "none"
	}
	return d
}

func newE1Cmd(e *env) *cobra.Command {
	x := &experiment{name: "e1"}
	var f e1Flags
	cmd := &cobra.Command{
		Use:   "e1 --corpus FILE",
		Short: "Data scarcity: FTM's global model against each party's own model (FTM Fig. 4, iFTM Fig. 5)",
		Long: `e1 splits the training documents among three parties of sizes 1:2:3 by label
groups (non-IID), trains each party's own non-private model for every K of
--topics-grid (keeping the best on the test documents, which favours the
baselines), then runs FTM with each party's best K as its K_p, and compares
held-out log-likelihoods. It does so for LDA and for SentenceLDA (iFTM).

The claim checked: the FTM global model beats every party's own model.`,
		Example: `  python3 bench/wordnet_glosses.py > wordnet.jsonl
  fedtopic experiment e1 --corpus wordnet.jsonl --out e1.jsonl --models-dir e1-models`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			grid, err := parseTopics(f.grid)
			if err != nil {
				return err
			}
			modes, err := debiasModes(f.debias)
			if err != nil {
				return err
			}
			closer, err := x.open(ctx, e)
			if err != nil {
				return err
			}
			defer closer()
			for _, model := range strings.Split(f.models, ",") {
				if model != ftm.ModelLDA && model != ftm.ModelSLDA {
					return usagef("--models: %q is not lda or slda", model)
				}
				best, ks, err := x.partyModels(ctx, model, grid, f.iterations)
				if err != nil {
					return err
				}
				bestParty := math.Inf(-1)
				for p, m := range best {
					ll, _, err := x.heldOut(ctx, m)
					if err != nil {
						return err
					}
					bestParty = math.Max(bestParty, ll)
					if err := x.save(fmt.Sprintf("%s-p%d", model, p+1), m); err != nil {
						return err
					}
				}
				for _, d := range modes {
					cfg := ftmConfig(model, ks, f.epsilon, f.tau, f.rounds, f.localIters, d, x.workers)
					run, ll, err := x.runFTM(ctx, "ftm", cfg, nil)
					if err != nil {
						return err
					}
					name := "ftm-" + model
					if d != "" {
						name += "-" + d
					}
					if err := x.save(name, run.res.Global); err != nil {
						return err
					}
					if err := x.emit(map[string]any{"claim": "the FTM global model beats every party's own model", "model": model,
						"debias": debiasName(d), "ftm_log_likelihood": ll, "best_party_log_likelihood": bestParty,
						"held": ll > bestParty, "ftm_seconds": run.seconds}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	x.register(cmd, "labels:sizes=1,2,3")
	f.register(cmd, "none,output")
	cmd.Flags().StringVar(&x.modelsDir, "models-dir", "", "save every party's best model and the FTM global models here (e4 can reuse them)")
	return cmd
}
