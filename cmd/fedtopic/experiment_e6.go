package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fedlda"
	"github.com/fedtopic/fedtopic/topic"
)

// e6Mechanisms are the perturbations E6 compares, in output order.
var e6Mechanisms = []string{fedlda.MechanismNone, fedlda.MechanismRRP, fedlda.MechanismKRR, fedlda.MechanismTKRR}

func newE6Cmd(e *env) *cobra.Command {
	x := &experiment{name: "e6"}
	var (
		eps, trunc, ratio       float64
		k, rounds, evalEvery, m int
		epsilons, ks            string
		truncs, ratios          string
	)
	cmd := &cobra.Command{
		Use:   "e6 --corpus FILE",
		Short: "FedLDA: perplexity against iterations for RRP, kRR, t-kRR and no privacy, Gibbs and MH; sweeps of ε, K, δ and r (FedLDA Fig. 5)",
		Long: `e6 trains FedLDA on three parties (every document one user) and writes the
held-out perplexity of the collector's model:

  convergence  against iterations, for every mechanism (none, rrp, krr,
               tkrr) with the Gibbs and the MH sampler;
  sweeps       the final perplexity against ε per tuple, K, the truncation
               δ and the sample ratio r (Gibbs).

Every line carries the cost per user the configuration has, ε per tuple
times l tuples per iteration times T iterations, and for RRP the δ it
adds up to: at the paper's δ that is far above 1, no guarantee at all.
These runs compare the mechanisms at equal ε per tuple as the paper does;
they are made in process without the parties' ledgers (simulate refuses an
RRP run whose δ reaches 1).

The claims checked: RRP gives a lower perplexity than kRR and t-kRR at
equal ε; MH ends close to Gibbs (within 5%).

  classification  with labelled documents: θ of each mechanism's final
               Gibbs model as features of a logistic regression and a
               linear SVM, trained on 70% of the held-out documents and
               scored on the rest (accuracy, macro precision, recall and
               F1, and the macro one-vs-rest ROC AUC of the logistic
               regression's class probabilities and of the SVM's decision
               values, over the classes of the scored documents that the
               classifiers were trained on: auc_classes).`,
		Example: `  fedtopic experiment e6 --corpus demo/wordnet-glosses.jsonl --vocab-size 8000 --out e6.jsonl`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			epsList, err := parseFloats("epsilons", epsilons)
			if err != nil {
				return err
			}
			truncList, err := parseFloats("truncations", truncs)
			if err != nil {
				return err
			}
			ratioList, err := parseFloats("ratios", ratios)
			if err != nil {
				return err
			}
			kList, err := parseTopics(ks)
			if err != nil {
				return err
			}
			if rounds < 1 || evalEvery < 1 {
				return usagef("--rounds %d, --eval-every %d: want at least 1", rounds, evalEvery)
			}
			base := fedlda.Config{K: k, Rounds: rounds, Epsilon: eps, Truncation: trunc, SampleRatio: ratio, MaxDocTokens: m}
			if err := base.Validate(); err != nil {
				return usageError{err}
			}
			closer, err := x.open(ctx, e)
			if err != nil {
				return err
			}
			defer closer()
			if err := x.emit(map[string]any{"plot": map[string]any{"title": "FedLDA: held-out perplexity against iterations",
				"x": "iteration", "y": "perplexity", "series": []string{"mechanism", "sampler"}}}); err != nil {
				return err
			}
			// Convergence, every mechanism with both samplers.
			final := map[string]float64{}
			var models []*topic.Model // Gibbs, in e6Mechanisms order
			for _, sampler := range []string{fedlda.SamplerGibbs, fedlda.SamplerMH} {
				for _, mech := range e6Mechanisms {
					cfg := base
					cfg.Mechanism, cfg.Sampler = mech, sampler
					p, m, err := x.fedlda(ctx, cfg, evalEvery, map[string]any{"part": "convergence"})
					if err != nil {
						return err
					}
					final[sampler+"/"+mech] = p
					if sampler == fedlda.SamplerGibbs {
						models = append(models, m)
					}
				}
			}
			for _, mech := range e6Mechanisms {
				g, h := final["gibbs/"+mech], final["mh/"+mech]
				if err := x.emit(map[string]any{"claim": "MH ends within 5% of Gibbs", "mechanism": mech,
					"gibbs_perplexity": g, "mh_perplexity": h, "held": math.Abs(h-g) <= 0.05*g}); err != nil {
					return err
				}
			}
			if err := x.rrpClaim(final["gibbs/rrp"], final["gibbs/krr"], final["gibbs/tkrr"], "epsilon", eps); err != nil {
				return err
			}
			if err := x.e6Classify(ctx, models); err != nil {
				return err
			}
			// Sweeps (Gibbs, final perplexity only).
			sweep := func(param string, values []float64, set func(*fedlda.Config, float64), mechs []string) error {
				for _, v := range values {
					got := map[string]float64{}
					for _, mech := range mechs {
						cfg := base
						cfg.Mechanism, cfg.Sampler = mech, fedlda.SamplerGibbs
						set(&cfg, v)
						if err := cfg.Validate(); err != nil {
							return usageError{err}
						}
						p, _, err := x.fedlda(ctx, cfg, 0, map[string]any{"part": "sweep", "parameter": param, "value": v})
						if err != nil {
							return err
						}
						got[mech] = p
					}
					if _, ok := got[fedlda.MechanismKRR]; ok {
						if err := x.rrpClaim(got[fedlda.MechanismRRP], got[fedlda.MechanismKRR], got[fedlda.MechanismTKRR], param, v); err != nil {
							return err
						}
					}
				}
				return nil
			}
			kf := make([]float64, len(kList))
			for i, kk := range kList {
				kf[i] = float64(kk)
			}
			private := e6Mechanisms[1:]
			for _, s := range []struct {
				param  string
				values []float64
				set    func(*fedlda.Config, float64)
				mechs  []string
			}{
				{"epsilon", epsList, func(c *fedlda.Config, v float64) { c.Epsilon = v }, private},
				{"k", kf, func(c *fedlda.Config, v float64) { c.K = int(v) }, e6Mechanisms},
				{"truncation", truncList, func(c *fedlda.Config, v float64) { c.Truncation = v }, []string{fedlda.MechanismRRP, fedlda.MechanismTKRR}},
				{"sample_ratio", ratioList, func(c *fedlda.Config, v float64) { c.SampleRatio = v }, e6Mechanisms},
			} {
				if err := sweep(s.param, s.values, s.set, s.mechs); err != nil {
					return err
				}
			}
			return nil
		},
	}
	x.register(cmd, "sizes=1,1,1")
	fs := cmd.Flags()
	fs.Float64Var(&eps, "epsilon", 7.5, "ε per tuple of the convergence runs and the other sweeps (the paper's default)")
	fs.Float64Var(&trunc, "truncation", 0.05, "δ of RRP and t-kRR")
	fs.Float64Var(&ratio, "sample-ratio", fedlda.DefaultSampleRatio, "r: the sample ratio")
	fs.IntVar(&m, "max-doc-length", fedlda.DefaultMaxDocTokens, "M: the padding length")
	fs.IntVar(&k, "topics", 20, "K of the convergence runs and the other sweeps")
	fs.IntVar(&rounds, "rounds", 30, "T: iterations")
	fs.IntVar(&evalEvery, "eval-every", 3, "measure the convergence runs every N iterations")
	fs.StringVar(&epsilons, "epsilons", "2.5,5,7.5,10", "ε per tuple of the ε sweep")
	fs.StringVar(&ks, "ks", "10,20,50", "K of the K sweep")
	fs.StringVar(&truncs, "truncations", "0.01,0.05,0.1,0.2", "δ of the truncation sweep")
	fs.StringVar(&ratios, "ratios", "0.1,0.4,0.7,1", "r of the sample-ratio sweep")
	return cmd
}

// rrpClaim emits whether RRP beat kRR and t-kRR at one setting.
func (x *experiment) rrpClaim(rrp, krr, tkrr float64, param string, v float64) error {
	return x.emit(map[string]any{"claim": "RRP gives a lower perplexity than kRR and t-kRR at equal ε per tuple", "parameter": param, "value": v,
		"rrp_perplexity": rrp, "krr_perplexity": krr, "tkrr_perplexity": tkrr, "held": rrp < krr && rrp < tkrr})
}

// fedlda trains FedLDA with cfg over the experiment's parties, in process
// and without ledgers, measuring the collector's model every evalEvery
// iterations (0: the last only); it writes one line per measurement, with
// extra, and returns the final perplexity.
func (x *experiment) fedlda(ctx context.Context, cfg fedlda.Config, evalEvery int, extra map[string]any) (float64, *topic.Model, error) {
	cfg.Workers = x.workers
	d := cfg.WithDefaults()
	params, err := json.Marshal(cfg)
	if err != nil {
		return 0, nil, err
	}
	ids := make([]string, len(x.data.parts))
	for i := range ids {
		ids[i] = "p" + strconv.Itoa(i+1)
	}
	s := fed.Setup{Run: "e6", Parties: ids, Vocab: x.data.vocab, Seed: x.seed, Params: params}
	agg, err := fedlda.NewAggregator(s)
	if err != nil {
		return 0, nil, err
	}
	val, err := fedlda.NewValidator(s)
	if err != nil {
		return 0, nil, err
	}
	learners := make([]*fedlda.Learner, len(ids))
	for i := range ids {
		if learners[i], err = fedlda.NewLearner(s, i, x.data.parts[i]); err != nil {
			return 0, nil, err
		}
	}
	l := d.Tuples()
	perUser := float64(d.Rounds*l) * d.Epsilon
	var perUserDelta float64
	if d.Mechanism == fedlda.MechanismRRP {
		perUserDelta = float64(d.Rounds*l) * 2 * d.Truncation
	}
	step, err := agg.Init()
	if err != nil {
		return 0, nil, err
	}
	var (
		perp float64
		last *topic.Model
	)
	for round := 1; !step.Done; round++ {
		var ups []fed.Update
		for i, ln := range learners {
			ls, err := ln.Learn(round, step.Payload)
			if err != nil {
				return 0, nil, err
			}
			if err := val.CheckUpdate(round, ls.Payload); err != nil {
				return 0, nil, fmt.Errorf("e6: party %s: round %d: %w", ids[i], round, err)
			}
			ups = append(ups, fed.Update{Party: i, ID: ids[i], Payload: ls.Payload, Spent: ls.Spent})
		}
		if step, err = agg.Aggregate(round, ups); err != nil {
			return 0, nil, err
		}
		if !step.Done && (evalEvery == 0 || round%evalEvery != 0) {
			continue
		}
		m, err := agg.Model()
		if err != nil {
			return 0, nil, err
		}
		last = m
		if _, perp, err = x.heldOut(ctx, m); err != nil {
			return 0, nil, err
		}
		line := map[string]any{"mechanism": d.Mechanism, "sampler": d.Sampler, "iteration": round, "perplexity": perp,
			"k": d.K, "epsilon_per_tuple": d.Epsilon, "tuples_per_iteration": l, "epsilon_per_user": perUser,
			"truncation": d.Truncation, "sample_ratio": d.SampleRatio}
		if d.Mechanism == fedlda.MechanismRRP {
			line["delta_per_user"] = perUserDelta
			line["eta"] = d.Eta()
		}
		if d.Mechanism == fedlda.MechanismNone {
			delete(line, "epsilon_per_user")
			delete(line, "epsilon_per_tuple")
		}
		for key, v := range extra {
			line[key] = v
		}
		if evalEvery == 0 {
			delete(line, "iteration")
			line["iterations"] = round
		}
		if err := x.emit(line); err != nil {
			return 0, nil, err
		}
		what := d.Mechanism + " " + d.Sampler
		if p, ok := extra["parameter"]; ok {
			what += fmt.Sprintf(", %s = %v", p, extra["value"])
		}
		fmt.Fprintf(x.log, "e6: %s: iteration %d: perplexity %.1f\n", what, round, perp)
	}
	return perp, last, nil
}

// e6Classify writes, when the held-out documents have labels, how well
// each mechanism's model serves as features of a classifier: θ of the
// held-out documents, split 70:30, a logistic regression and a linear SVM,
// measured by accuracy, macro precision, recall and F1, and the macro
// one-vs-rest ROC AUC of their class probabilities and decision values.
func (x *experiment) e6Classify(ctx context.Context, models []*topic.Model) error {
	if x.data.test.Labels == nil {
		fmt.Fprintln(x.log, "e6: the corpus has no labels: no classification")
		return nil
	}
	cd, err := x.classify(0.3, 0)
	if err != nil {
		return err
	}
	for i, m := range models {
		train, test, f, err := x.features(ctx, cd, m)
		if err != nil {
			return err
		}
		scores, err := x.scoreFeatures(cd, train, test, f, true)
		if err != nil {
			return err
		}
		line := map[string]any{"part": "classification", "mechanism": e6Mechanisms[i], "sampler": fedlda.SamplerGibbs, "k": m.K}
		for key, v := range scores {
			line[key] = v
		}
		if err := x.emit(line); err != nil {
			return err
		}
		fmt.Fprintf(x.log, "e6: classification with %s's topics: logistic macro-F1 %.3f, macro AUC %.3f; SVM macro-F1 %.3f, macro AUC %.3f\n",
			e6Mechanisms[i], scores["logistic_macro_f1"], scores["logistic_macro_auc"], scores["svm_macro_f1"], scores["svm_macro_auc"])
	}
	return nil
}
