package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/topic"
)

// integrated returns the global model Integrate makes from the parties'
// local models with weights docs.
func integrated(locals []*topic.Model, docs []int, l int, xi float64, vocab []string) *topic.Model {
	var topics []ftm.Topic
	for p, m := range locals {
		for k := 0; k < m.K; k++ {
			topics = append(topics, ftm.Topic{Row: m.Row(k), Weight: float64(docs[p])})
		}
	}
	global, _ := ftm.Integrate(topics, l, xi)
	m := &topic.Model{K: len(global), V: len(vocab), Vocab: vocab, Alpha: make([]float64, len(global)), Beta: ftm.DefaultBeta}
	for k, g := range global {
		m.Phi = append(m.Phi, g.Row...)
		m.Alpha[k] = ftm.DefaultAlphaSum / float64(len(global))
	}
	return m
}

func newDevCmd(e *env) *cobra.Command {
	x := &experiment{name: "dev"}
	var (
		ls, xis, ks, iters, steps string
		epsilon, tau              float64
		debias                    string
	)
	cmd := &cobra.Command{
		Use:   "dev --corpus FILE",
		Short: "The development measurements behind FTM's defaults",
		Long: `dev measures, on development data, what FTM's defaults rest on; run it
with another --seed than the experiments so that its held-out documents
are not the ones they report on.

  L and ξ: one round of FTM, then the global model that integrating the
  parties' local models with every (L, ξ) of the grid gives, and its
  held-out log-likelihood and number of topics;
  K, local iterations and MH steps: the held-out log-likelihood of the
  global model after one round, and the seconds it took.`,
		Example: `  fedtopic experiment dev --corpus wordnet.jsonl --seed 101 --subsample 0.3 --out dev.jsonl`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			lGrid, err := parseTopics(ls)
			if err != nil {
				return err
			}
			xiGrid, err := parseFloats("xis", xis)
			if err != nil {
				return err
			}
			kGrid, err := parseTopics(ks)
			if err != nil {
				return err
			}
			itGrid, err := parseTopics(iters)
			if err != nil {
				return err
			}
			stGrid, err := parseTopics(steps)
			if err != nil {
				return err
			}
			modes, err := debiasModes(debias)
			if err != nil {
				return err
			}
			closer, err := x.open(ctx, e)
			if err != nil {
				return err
			}
			defer closer()
			docs := make([]int, len(x.data.parts))
			for p, part := range x.data.parts {
				docs[p] = part.NumDocs()
			}
			for _, d := range modes {
				// L and ξ on one round's local models.
				cfg := ftmConfig(ftm.ModelLDA, []int{ftm.DefaultK}, epsilon, tau, 1, ftm.DefaultLocalIterations, d, x.workers)
				run, err := x.simulate(ctx, ftm.Algorithm, cfg, x.data.parts, 1, 0, 0, 1e6)
				if err != nil {
					return err
				}
				for _, l := range lGrid {
					for _, xi := range xiGrid {
						m := integrated(run.res.Locals, docs, l, xi, x.data.vocab)
						ll, perp, err := x.heldOut(ctx, m)
						if err != nil {
							return err
						}
						fmt.Fprintf(x.log, "dev: debias %s, L = %d, ξ = %g: %d topics, held-out log-likelihood %.6g\n", debiasName(d), l, xi, m.K, ll)
						if err := x.emit(map[string]any{"measure": "integration", "debias": debiasName(d), "top_l": l, "xi": xi,
							"global_topics": m.K, "log_likelihood": ll, "perplexity": perp}); err != nil {
							return err
						}
					}
				}
				// K, local iterations and MH steps on one round.
				for _, k := range kGrid {
					for _, it := range itGrid {
						for _, st := range stGrid {
							cfg := ftmConfig(ftm.ModelLDA, []int{k}, epsilon, tau, 1, it, d, x.workers)
							cfg.MHSteps = st
							if err := x.devRound(ctx, cfg); err != nil {
								return err
							}
						}
					}
				}
			}
			return nil
		},
	}
	x.register(cmd, "labels:sizes=1,2,3")
	fs := cmd.Flags()
	fs.StringVar(&ls, "top-l", "5,10,20,50", "values of L")
	fs.StringVar(&xis, "xi", "0.2,0.3,0.5,0.7", "values of ξ")
	fs.StringVar(&ks, "topics", "10,20,40", "values of K (all parties)")
	fs.StringVar(&iters, "local-iterations", "10,30,60", "values of the local iterations")
	fs.StringVar(&steps, "mh-steps", "1,2", "values of the MH steps per item and sweep")
	fs.Float64Var(&epsilon, "epsilon", ftm.DefaultEpsilon, "ε per word occurrence")
	fs.Float64Var(&tau, "tau", ftm.PaperTau, "threshold τ")
	fs.StringVar(&debias, "debias", "none,output", "FTM variants by debiasing (comma-separated)")
	return cmd
}

// devRound runs one round of FTM with cfg and emits the global model's
// held-out likelihood and the time.
func (x *experiment) devRound(ctx context.Context, cfg ftm.Config) error {
	run, err := x.simulate(ctx, ftm.Algorithm, cfg, x.data.parts, 1, 0, 0, 1e6)
	if err != nil {
		return err
	}
	r := run.rounds[len(run.rounds)-1]
	fmt.Fprintf(x.log, "dev: debias %s, K = %d, %d iterations, %d MH steps: held-out log-likelihood %.6g in %.1fs\n",
		debiasName(cfg.Debias), cfg.Topics[0], cfg.LocalIterations, cfg.MHSteps, r.LogLik, run.seconds)
	return x.emit(map[string]any{"measure": "round", "debias": debiasName(cfg.Debias), "k": cfg.Topics[0],
		"local_iterations": cfg.LocalIterations, "mh_steps": cfg.MHSteps, "global_topics": r.Topics,
		"log_likelihood": r.LogLik, "perplexity": r.Perplex, "seconds": run.seconds, "tokens": x.data.train.NumTokens()})
}
