package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/topic"
)

// e5Budget is the budget of E5's simulated parties: the paper's unit
// variant costs ε in the hundreds of thousands per document (every line
// states it), far above any budget a deployment would grant.
const e5Budget = 1e12

// e5Setting is one configuration of PC-TD that E5 runs.
type e5Setting struct {
	name string
	cfg  pctd.Config
}

// e5Run is the outcome of one E5 run: its final model and perplexity.
type e5Run struct {
	model *topic.Model
	perp  float64
}

func newE5Cmd(e *env) *cobra.Command {
	x := &experiment{name: "e5"}
	var (
		k, rounds, evalEvery, maxLen, ldaIters, topN int
		sigmas, epsilons, ks                         string
		embeddings                                   string
		tau                                          float64
	)
	cmd := &cobra.Command{
		Use:   "e5 --corpus FILE",
		Short: "PC-TD: perplexity against iterations for σ and the SSP variant's ε, federated against each party and the pooled EM; coherence against K, with and without the word-relation step (PC-TD Fig. 2-4)",
		Long: `e5 trains PC-TD on three parties and writes, as JSON lines:

  convergence  the held-out perplexity against iterations of the federated
               model with the paper's noise on every unit (--sigmas), with
               the SSP variant at each document-level ε (--epsilons) and
               without noise; of the non-private EM on the pooled data;
               and of the non-private EM of each party alone.
  coherence    for every K of --ks: NPMI and UMass (on the pooled training
               documents) and, with --embeddings, embedding coherence of
               the federated model without noise, with the paper's first
               σ and with the SSP variant at the largest ε, each with and
               without the word-relation step (with --embeddings), and of
               LDA on the pooled data.

σ = 0.3 converging more slowly than σ = 0.25 is judged by the first
measured iteration within 1% of the curve's last perplexity, and only when
both curves fall.

Every line states what its setting costs: ε per document (δ = 1e-5) and,
for the unit variant, ε per word occurrence, the paper's unit. The paper's
σ = 0.25 over 35 iterations is ε ≈ 380 per word occurrence: no protection.
The runs are simulated in process with the parties' ledgers, under a
budget no deployment would grant.

Embedding coherence uses the same vectors as the word-relation step, which
pulls each topic towards its words' neighbours in those vectors: it
favours the step by construction. NPMI and UMass count the documents and
do not.

The claims checked (closing claim lines, "held" true or false):
perplexity falls with iterations; σ = 0.3 converges more slowly than
σ = 0.25; σ = 0.25 ends close to the non-private EM (within 5%); the
federated model beats every party alone; coherence rises with K; PC-TD
without noise has the best coherence; perturbed PC-TD beats LDA at the
largest K; the word-relation step raises coherence.`,
		Example: `  fedtopic embed --corpus demo/wordnet-glosses.jsonl --out vectors.txt
  fedtopic experiment e5 --corpus demo/wordnet-glosses.jsonl --embeddings vectors.txt --out e5.jsonl`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			sigmaList, err := parseFloats("sigmas", sigmas)
			if err != nil {
				return err
			}
			epsList, err := parseFloats("epsilons", epsilons)
			if err != nil {
				return err
			}
			kList, err := parseTopics(ks)
			if err != nil {
				return err
			}
			if rounds < 1 || evalEvery < 1 || ldaIters < 1 || topN < 2 {
				return usagef("--rounds %d, --eval-every %d, --lda-iterations %d, --top-n %d: want at least 1, 1, 1 and 2", rounds, evalEvery, ldaIters, topN)
			}
			if len(sigmaList) == 0 || len(epsList) == 0 {
				return usagef("--sigmas and --epsilons: give at least one value each")
			}
			base := pctd.Config{Topics: k, Rounds: rounds, MaxDocTokens: maxLen, Workers: x.workers}
			var conv []e5Setting
			for _, s := range sigmaList {
				cfg := base
				cfg.Variant, cfg.Sigma, cfg.Unit = pctd.VariantUnit, s, pctd.UnitDocument
				conv = append(conv, e5Setting{fmt.Sprintf("unit σ=%g", s), cfg})
			}
			for _, eps := range epsList {
				cfg := base
				cfg.Variant, cfg.Epsilon = pctd.VariantSSP, eps
				conv = append(conv, e5Setting{fmt.Sprintf("ssp ε=%g", eps), cfg})
			}
			none := base
			none.NoNoise = true
			conv = append(conv, e5Setting{"no noise", none})
			for _, s := range conv {
				if err := s.cfg.Validate(); err != nil {
					return usageError{err}
				}
			}
			closer, err := x.open(ctx, e)
			if err != nil {
				return err
			}
			defer closer()
			var embs *eval.Embeddings
			if embeddings != "" {
				if embs, err = eval.LoadEmbeddings(embeddings, x.data.vocab); err != nil {
					return err
				}
				fmt.Fprintf(x.log, "e5: %d of %d words have a vector in %s\n", embs.Covered(), len(x.data.vocab), embeddings)
			}
			if err := x.emit(map[string]any{"plot": map[string]any{"title": "PC-TD: held-out perplexity against iterations",
				"x": "iteration", "y": "perplexity", "series": []string{"setting"}}}); err != nil {
				return err
			}
			// Convergence.
			curves := map[string][]ftmRound{}
			for _, s := range conv {
				_, rs, err := x.pctdFederated(ctx, s, evalEvery, map[string]any{"part": "convergence"})
				if err != nil {
					return err
				}
				curves[s.name] = rs
			}
			pooled, err := x.pctdCentral(ctx, "pooled", x.data.train, base, evalEvery, map[string]any{"part": "convergence"})
			if err != nil {
				return err
			}
			curves["pooled"] = pooled
			var parties []float64
			for i, p := range x.data.parts {
				name := "party p" + strconv.Itoa(i+1)
				rs, err := x.pctdCentral(ctx, name, p, base, evalEvery, map[string]any{"part": "convergence"})
				if err != nil {
					return err
				}
				curves[name] = rs
				parties = append(parties, rs[len(rs)-1].Perplex)
			}
			if err := x.e5ConvergenceClaims(conv, curves, sigmaList, parties); err != nil {
				return err
			}
			// Coherence against K.
			cohSettings := []e5Setting{{"no noise", none}, conv[0], conv[len(sigmaList)+len(epsList)-1]}
			relations := []bool{false}
			if embs != nil {
				relations = append(relations, true)
			}
			coh := map[string]map[int]float64{} // setting → K → NPMI
			for _, kk := range kList {
				for _, s := range cohSettings {
					for _, rel := range relations {
						s := s
						s.cfg.Topics = kk
						if rel {
							s.cfg.Embeddings, s.cfg.RelationTau = embeddings, tau
						}
						if err := s.cfg.Validate(); err != nil {
							return usageError{err}
						}
						run, _, err := x.pctdFederated(ctx, s, 0, nil)
						if err != nil {
							return err
						}
						name := s.name
						if rel {
							name += " +relation"
						}
						npmi, err := x.e5Coherence(run, name, kk, embs, topN, map[string]any{"relation": rel})
						if err != nil {
							return err
						}
						if coh[name] == nil {
							coh[name] = map[int]float64{}
						}
						coh[name][kk] = npmi
					}
				}
				m, err := x.trainLocal(ctx, x.data.train, "lda", kk, ldaIters)
				if err != nil {
					return err
				}
				_, perp, err := x.heldOut(ctx, m)
				if err != nil {
					return err
				}
				npmi, err := x.e5Coherence(e5Run{m, perp}, "lda", kk, embs, topN, map[string]any{"iterations": ldaIters})
				if err != nil {
					return err
				}
				if coh["lda"] == nil {
					coh["lda"] = map[int]float64{}
				}
				coh["lda"][kk] = npmi
			}
			return x.e5CoherenceClaims(coh, kList, cohSettings, embs != nil)
		},
	}
	x.register(cmd, "sizes=1,1,1")
	fs := cmd.Flags()
	fs.IntVar(&k, "topics", 20, "K of the convergence runs")
	fs.IntVar(&rounds, "rounds", 35, "T: EM iterations (the paper's 35)")
	fs.IntVar(&evalEvery, "eval-every", 5, "measure the convergence runs every N iterations")
	fs.IntVar(&maxLen, "max-doc-length", pctdDefaultMaxDocLength, "L: documents are clipped to Σ_w a_w² ≤ L (the sensitivity of a document)")
	fs.StringVar(&sigmas, "sigmas", "0.25,0.3", "σ of the unit variant's convergence runs (the paper's); the first also runs in the coherence sweep")
	fs.StringVar(&epsilons, "epsilons", "1,4,10", "ε per document (δ = 1e-5) of the SSP variant's convergence runs; the last also runs in the coherence sweep")
	fs.StringVar(&ks, "ks", "10,20,30,40,50", "K of the coherence sweep")
	fs.StringVar(&embeddings, "embeddings", "", "word2vec or GloVe text vectors (fedtopic embed makes them): adds runs with the word-relation step and embedding coherence")
	fs.Float64Var(&tau, "relation-tau", pctd.DefaultRelTau, "τ of the word-relation step")
	fs.IntVar(&ldaIters, "lda-iterations", 200, "sampler iterations of the LDA baseline of the coherence sweep")
	fs.IntVar(&topN, "top-n", 10, "top words per topic that coherence pairs")
	return cmd
}

// e5Costs returns the ε per document and, for the unit variant, per word
// occurrence that cfg costs over its run (δ = 1e-5); 0 without noise.
func e5Costs(cfg pctd.Config) (perDoc, perWord float64, err error) {
	ev, err := cfg.Events()
	if err != nil || ev == nil {
		return 0, 0, err
	}
	r := cfg.Resolved()
	c, err := accountant.Compose(ev, r.Delta)
	if err != nil {
		return 0, 0, err
	}
	if w := cfg.WordEvents(); w != nil {
		cw, err := accountant.Compose(w, r.Delta)
		if err != nil {
			return 0, 0, err
		}
		perWord = cw.Epsilon
	}
	return c.Epsilon, perWord, nil
}

// pctdFederated runs PC-TD with s over the experiment's parties, measuring
// every evalEvery iterations (0: the last only) and writing one line per
// measurement with extra (none when extra is nil).
func (x *experiment) pctdFederated(ctx context.Context, s e5Setting, evalEvery int, extra map[string]any) (e5Run, []ftmRound, error) {
	rounds := s.cfg.Resolved().Rounds
	perDoc, perWord, err := e5Costs(s.cfg)
	if err != nil {
		return e5Run{}, nil, err
	}
	params, err := json.Marshal(s.cfg)
	if err != nil {
		return e5Run{}, nil, err
	}
	var measured []ftmRound
	sc := sim.Scenario{Algorithm: pctd.Algorithm, Params: params, Corpora: x.data.parts, Vocab: x.data.vocab, Seed: x.seed,
		Budget: accountant.Budget{Epsilon: e5Budget, Delta: pctd.DefaultDelta}}
	sc.Metrics = func(round int, m *topic.Model) (map[string]float64, error) {
		if round != rounds && (evalEvery <= 0 || round%evalEvery != 0) {
			return nil, nil
		}
		// sim asks for the last round twice (its line and the summary).
		if n := len(measured); n > 0 && measured[n-1].Round == round {
			return map[string]float64{"perplexity": measured[n-1].Perplex}, nil
		}
		_, perp, err := x.heldOut(ctx, m)
		if err != nil {
			return nil, err
		}
		measured = append(measured, ftmRound{Round: round, Perplex: perp})
		return map[string]float64{"perplexity": perp}, nil
	}
	start := time.Now()
	res, err := sim.Run(ctx, sc)
	if err != nil {
		return e5Run{}, nil, fmt.Errorf("e5: %s: %w", s.name, err)
	}
	seconds := time.Since(start).Seconds()
	r := s.cfg.Resolved()
	for _, rd := range measured {
		if extra == nil {
			break
		}
		line := map[string]any{"setting": s.name, "method": "federated", "variant": r.Variant, "k": r.Topics,
			"iteration": rd.Round, "perplexity": rd.Perplex, "seconds": seconds}
		if !r.NoNoise {
			line["sigma"] = r.Sigma
			line["noise_std"] = r.NoiseStd()
			line["epsilon_per_document"] = perDoc
			line["max_doc_tokens"] = r.MaxDocTokens
		} else {
			line["variant"] = "none"
		}
		if perWord > 0 {
			line["epsilon_per_word"] = perWord
		}
		for key, v := range extra {
			line[key] = v
		}
		if err := x.emit(line); err != nil {
			return e5Run{}, nil, err
		}
	}
	last := measured[len(measured)-1]
	fmt.Fprintf(x.log, "e5: %s, K = %d: perplexity %.1f after %d iterations (%.1fs)\n", s.name, r.Topics, last.Perplex, last.Round, seconds)
	return e5Run{res.Global, last.Perplex}, measured, nil
}

// pctdCentral runs PC-TD's non-private EM (pctd.Train) on c, the pooled
// data or one party's, measuring every evalEvery iterations and the last,
// and writing a line per measurement with extra.
func (x *experiment) pctdCentral(ctx context.Context, name string, c *corpus.Corpus, cfg pctd.Config, evalEvery int, extra map[string]any) ([]ftmRound, error) {
	rounds := cfg.Resolved().Rounds
	var out []ftmRound
	start := time.Now()
	_, err := pctd.Train(ctx, c, x.data.vocab, cfg, x.seed, func(it int, m *topic.Model) error {
		if it != rounds && it%evalEvery != 0 {
			return nil
		}
		_, perp, err := x.heldOut(ctx, m)
		if err != nil {
			return err
		}
		out = append(out, ftmRound{Round: it, Perplex: perp})
		line := map[string]any{"setting": name, "method": "central", "variant": "none", "k": m.K,
			"iteration": it, "perplexity": perp, "documents": c.NumDocs(), "tokens": c.NumTokens()}
		for key, v := range extra {
			line[key] = v
		}
		return x.emit(line)
	})
	if err != nil {
		return nil, fmt.Errorf("e5: %s: %w", name, err)
	}
	fmt.Fprintf(x.log, "e5: %s (non-private EM): perplexity %.1f after %d iterations (%.1fs)\n", name, out[len(out)-1].Perplex, rounds, time.Since(start).Seconds())
	return out, nil
}

// e5Coherence measures a coherence run's model and writes its line; it
// returns the NPMI.
func (x *experiment) e5Coherence(run e5Run, name string, k int, embs *eval.Embeddings, topN int, extra map[string]any) (float64, error) {
	top := run.model.TopWordIDs(topN)
	npmi, err := eval.NPMI(top, x.data.train)
	if err != nil {
		return 0, err
	}
	umass, err := eval.UMass(top, x.data.train)
	if err != nil {
		return 0, err
	}
	line := map[string]any{"part": "coherence", "setting": name, "k": k, "npmi": npmi.Mean, "umass": umass.Mean,
		"diversity": eval.Diversity(top), "final_perplexity": run.perp, "top_n": topN}
	if embs != nil {
		ec, err := eval.EmbeddingCoherence(top, embs)
		if err != nil {
			return 0, err
		}
		line["embedding_coherence"] = ec.Mean
	}
	for key, v := range extra {
		line[key] = v
	}
	if err := x.emit(line); err != nil {
		return 0, err
	}
	fmt.Fprintf(x.log, "e5: coherence: %s, K = %d: NPMI %.4f, UMass %.3f\n", name, k, npmi.Mean, umass.Mean)
	return npmi.Mean, nil
}

// claim writes one claim line.
func (x *experiment) claim(text string, held bool, fields map[string]any) error {
	line := map[string]any{"claim": text, "held": held}
	for key, v := range fields {
		line[key] = v
	}
	return x.emit(line)
}

// convergedAt returns the first measured iteration whose perplexity is
// within 1% of the curve's last.
func convergedAt(rs []ftmRound) int {
	last := rs[len(rs)-1].Perplex
	for _, r := range rs {
		if math.Abs(r.Perplex-last) <= 0.01*last {
			return r.Round
		}
	}
	return rs[len(rs)-1].Round
}

// e5ConvergenceClaims writes the claim lines of the convergence part.
func (x *experiment) e5ConvergenceClaims(conv []e5Setting, curves map[string][]ftmRound, sigmas, parties []float64) error {
	for _, s := range conv {
		rs := curves[s.name]
		first, last := rs[0], rs[len(rs)-1]
		if err := x.claim("perplexity falls with iterations", last.Perplex < first.Perplex, map[string]any{"setting": s.name,
			"first_iteration": first.Round, "first_perplexity": first.Perplex, "last_iteration": last.Round, "last_perplexity": last.Perplex}); err != nil {
			return err
		}
	}
	pooled := curves["pooled"]
	pooledLast := pooled[len(pooled)-1].Perplex
	if len(sigmas) >= 2 {
		a, b := curves[conv[0].name], curves[conv[1].name]
		// A curve that does not fall has not converged to anything: its
		// "convergence" point would be noise. Both must fall.
		ia, ib := convergedAt(a), convergedAt(b)
		fell := a[len(a)-1].Perplex < a[0].Perplex && b[len(b)-1].Perplex < b[0].Perplex
		if err := x.claim(fmt.Sprintf("σ = %g converges more slowly than σ = %g", sigmas[1], sigmas[0]), fell && (ib > ia || (ib == ia && b[len(b)-1].Perplex > a[len(a)-1].Perplex)),
			map[string]any{"converged_at_" + conv[0].name: ia, "converged_at_" + conv[1].name: ib,
				"perplexity_" + conv[0].name: a[len(a)-1].Perplex, "perplexity_" + conv[1].name: b[len(b)-1].Perplex}); err != nil {
			return err
		}
	}
	a := curves[conv[0].name]
	aLast := a[len(a)-1].Perplex
	if err := x.claim(fmt.Sprintf("%s ends within 5%% of the non-private pooled EM", conv[0].name), math.Abs(aLast-pooledLast) <= 0.05*pooledLast,
		map[string]any{"perplexity": aLast, "pooled_perplexity": pooledLast}); err != nil {
		return err
	}
	for _, s := range conv {
		rs := curves[s.name]
		last := rs[len(rs)-1].Perplex
		held := true
		for _, p := range parties {
			held = held && last < p
		}
		if err := x.claim("the federated model beats every party alone", held, map[string]any{"setting": s.name,
			"perplexity": last, "party_perplexities": parties}); err != nil {
			return err
		}
	}
	return nil
}

// e5CoherenceClaims writes the claim lines of the coherence sweep (NPMI).
func (x *experiment) e5CoherenceClaims(coh map[string]map[int]float64, ks []int, settings []e5Setting, relation bool) error {
	lo, hi := ks[0], ks[len(ks)-1]
	names := []string{"lda"}
	for _, s := range settings {
		names = append(names, s.name)
		if relation {
			names = append(names, s.name+" +relation")
		}
	}
	if lo != hi {
		for _, n := range names {
			if err := x.claim("coherence (NPMI) rises with K", coh[n][hi] > coh[n][lo], map[string]any{"setting": n,
				"k_low": lo, "npmi_low": coh[n][lo], "k_high": hi, "npmi_high": coh[n][hi]}); err != nil {
				return err
			}
		}
	}
	for _, k := range ks {
		best := true
		for _, n := range names {
			best = best && coh[settings[0].name][k] >= coh[n][k]
		}
		if err := x.claim("PC-TD without noise has the best coherence (NPMI)", best, map[string]any{"k": k,
			"npmi_no_noise": coh[settings[0].name][k]}); err != nil {
			return err
		}
	}
	for _, s := range settings[1:] {
		if err := x.claim("perturbed PC-TD beats LDA in coherence (NPMI) at the largest K", coh[s.name][hi] > coh["lda"][hi],
			map[string]any{"setting": s.name, "k": hi, "npmi": coh[s.name][hi], "npmi_lda": coh["lda"][hi]}); err != nil {
			return err
		}
	}
	if relation {
		for _, s := range settings {
			for _, k := range ks {
				with, without := coh[s.name+" +relation"][k], coh[s.name][k]
				if err := x.claim("the word-relation step raises coherence (NPMI)", with > without, map[string]any{"setting": s.name, "k": k,
					"npmi_with": with, "npmi_without": without}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
