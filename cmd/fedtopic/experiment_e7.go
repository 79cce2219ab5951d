package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/lda"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/topic"
)

// e7Method is one model E7 trains: a centralized baseline or a federated
// FedNMF run with a server optimizer, with or without the MI term.
type e7Method struct {
	name      string
	serverOpt string // "" for the centralized baselines
	model     string // lda, nmf, nmf-sgd for the baselines
	mi        bool
}

// e7Methods lists E7's models in output order.
func e7Methods() []e7Method {
	ms := []e7Method{{name: "lda", model: "lda"}, {name: "nmf", model: fednmf.MethodNMF},
		{name: "nmf-sgd", model: fednmf.MethodNMFSGD}, {name: "nmf-sgd+mi", model: fednmf.MethodNMFSGD, mi: true}}
	for _, opt := range fednmf.ServerOpts {
		ms = append(ms, e7Method{name: opt, serverOpt: opt}, e7Method{name: opt + "+mi", serverOpt: opt, mi: true})
	}
	return ms
}

func newE7Cmd(e *env) *cobra.Command {
	x := &experiment{name: "e7"}
	var (
		ks, embeddings    string
		rounds, ldaIters  int
		lambda, frac, clf float64
		topN              int
	)
	cmd := &cobra.Command{
		Use:   "e7 --corpus FILE",
		Short: "FedNMF: coherence and SVM classification for LDA, NMF, NMF-SGD (±MI) and FedNMF with each server optimizer (±MI) (FedNMF Tables III–IV)",
		Long: `e7 trains, for every K of --ks, on the experiment's training documents:

  lda                      LDA (the default sampler) on the pooled documents
  nmf                      NMF by HALS on the pooled tf-idf matrix
  nmf-sgd, nmf-sgd+mi      SGD NMF on the pooled documents, without and with
                           the MI term (λ = --mi-lambda)
  fedavg, fedadagrad,      FedNMF over the parties (--split, by default 10
  fedyogi, fedadam (+mi)   parties with Dirichlet(1·p) label mixes), sampling
                           --client-fraction of them a round

and scores each model's topics on the held-out documents: NPMI (their
document co-occurrence), topic diversity, embedding coherence with
--embeddings (word vectors, as fedtopic embed writes them), and a linear
SVM's accuracy and macro-F1 on the documents' topic proportions θ (the
labelled held-out documents, split in two: the SVM learns on one part and is
scored on the other). One JSON line per model and K, then the paper's claims:
the MI term improves coherence and classification, and the adaptive server
optimizers beat FedAvg on non-IID parties. Perplexity is not reported: NMF
has no likelihood. FedLDA and the sweeps of α and the number of parties are
not part of e7 yet.`,
		Example: `  fedtopic experiment e7 --corpus demo/wordnet-glosses.jsonl --ks 50 --rounds 20 --out e7.jsonl`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			kList, err := parseTopics(ks)
			if err != nil {
				return err
			}
			if rounds < 1 || ldaIters < 1 {
				return usagef("--rounds %d, --lda-iterations %d: want at least 1", rounds, ldaIters)
			}
			if clf <= 0 || clf >= 1 {
				return usagef("--classifier-test-fraction %g: want a fraction in (0, 1)", clf)
			}
			base := fednmf.Config{Rounds: rounds, ClientFraction: frac}
			for _, k := range kList {
				probe := base
				probe.K, probe.MILambda = k, lambda
				if err := probe.Validate(); err != nil {
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
			}
			cd, err := x.classify(clf, 0)
			if err != nil {
				return err
			}
			if err := x.emit(map[string]any{"plot": map[string]any{"title": "FedNMF: classification and coherence by method",
				"x": "method", "y": "svm_accuracy", "series": []string{"k"}, "also": []string{"svm_macro_f1", "npmi", "embedding_coherence"}}}); err != nil {
				return err
			}
			scores := map[string]map[string]float64{}
			for _, k := range kList {
				for _, meth := range e7Methods() {
					start := time.Now()
					m, err := x.e7Train(ctx, meth, k, base, lambda, ldaIters)
					if err != nil {
						return fmt.Errorf("e7: %s, K = %d: %w", meth.name, k, err)
					}
					s, err := x.e7Score(ctx, cd, m, embs, topN)
					if err != nil {
						return fmt.Errorf("e7: %s, K = %d: %w", meth.name, k, err)
					}
					line := map[string]any{"method": meth.name, "k": k, "mi": meth.mi, "seconds": time.Since(start).Seconds()}
					if meth.serverOpt != "" {
						line["server_opt"], line["rounds"], line["client_fraction"], line["parties"] = meth.serverOpt, rounds, frac, len(x.data.parts)
					}
					if meth.mi {
						line["mi_lambda"] = lambda
					}
					for key, v := range s {
						line[key] = v
					}
					if err := x.emit(line); err != nil {
						return err
					}
					scores[fmt.Sprintf("%s/%d", meth.name, k)] = s
					fmt.Fprintf(x.log, "e7: %s, K = %d: SVM accuracy %.4f, macro-F1 %.4f, NPMI %.4f (%.0fs)\n",
						meth.name, k, s["svm_accuracy"], s["svm_macro_f1"], s["npmi"], time.Since(start).Seconds())
				}
			}
			return x.e7Claims(kList, scores, embs != nil)
		},
	}
	x.register(cmd, "dirichlet=1:sizes=1,1,1,1,1,1,1,1,1,1")
	fs := cmd.Flags()
	fs.StringVar(&ks, "ks", "50,100,200", "numbers of topics K")
	fs.IntVar(&rounds, "rounds", 100, "FedNMF rounds; also the SGD baselines' rounds of one epoch")
	fs.IntVar(&ldaIters, "lda-iterations", 300, "sweeps of the LDA baseline")
	fs.Float64Var(&lambda, "mi-lambda", 0.1, "λ of the +mi models")
	fs.Float64Var(&frac, "client-fraction", fednmf.DefaultClientFraction, "C: the fraction of the parties sampled each round")
	fs.Float64Var(&clf, "classifier-test-fraction", 0.3, "share of the labelled held-out documents the SVM is scored on")
	fs.StringVar(&embeddings, "embeddings", "", "word vectors (word2vec/GloVe text, as fedtopic embed writes them) for embedding coherence")
	fs.IntVar(&topN, "top-n", eval.DefaultTopN, "top words per topic for coherence")
	return cmd
}

// e7Train trains one of E7's models at K topics.
func (x *experiment) e7Train(ctx context.Context, meth e7Method, k int, base fednmf.Config, lambda float64, ldaIters int) (*topic.Model, error) {
	cfg := base
	cfg.K = k
	if meth.mi {
		cfg.MILambda = lambda
	}
	switch {
	case meth.model == "lda":
		m, err := lda.Train(ctx, x.data.train, lda.Config{K: k, Iterations: ldaIters, Seed: x.seed, Workers: x.workers}, nil)
		if err != nil {
			return nil, err
		}
		m.Vocab = x.data.vocab
		return m, nil
	case meth.model == fednmf.MethodNMF:
		res, err := fednmf.Train(ctx, x.data.train, fednmf.TrainConfig{K: k, Seed: x.seed})
		if err != nil {
			return nil, err
		}
		m, err := res.Model(x.data.vocab)
		if err != nil {
			return nil, err
		}
		m.Prov.Method = fednmf.MethodNMF
		return m, nil
	case meth.model == fednmf.MethodNMFSGD:
		res, err := fednmf.TrainSGD(x.data.train, x.data.vocab, cfg, x.seed)
		if err != nil {
			return nil, err
		}
		m, err := res.Model(x.data.vocab)
		if err != nil {
			return nil, err
		}
		m.Prov.Method = fednmf.MethodNMFSGD
		return m, nil
	}
	if len(x.data.parts) == 0 {
		return nil, usagef("--split is empty: the federated models need parties")
	}
	cfg.ServerOpt = meth.serverOpt
	params, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	res, err := sim.Run(ctx, sim.Scenario{Algorithm: fednmf.Algorithm, Params: params, Corpora: x.data.parts, Vocab: x.data.vocab, Seed: x.seed})
	if err != nil {
		return nil, err
	}
	return res.Global, nil
}

// e7Score measures one model: NPMI on the held-out documents, diversity,
// embedding coherence (with embs) and a linear SVM on θ.
func (x *experiment) e7Score(ctx context.Context, cd *classData, m *topic.Model, embs *eval.Embeddings, topN int) (map[string]float64, error) {
	rep, err := eval.Evaluate(ctx, m, eval.Data{Reference: x.data.test, Embeddings: embs}, eval.Config{TopN: topN})
	if err != nil {
		return nil, err
	}
	out := map[string]float64{"npmi": rep.NPMI.Mean, "diversity": rep.Diversity}
	if rep.EmbeddingCoherence != nil {
		out["embedding_coherence"] = rep.EmbeddingCoherence.Mean
	}
	ic := topic.InferConfig{Seed: x.seed, Workers: x.workers}
	train, err := inferTheta(ctx, m, cd.train, ic)
	if err != nil {
		return nil, err
	}
	test, err := inferTheta(ctx, m, cd.test, ic)
	if err != nil {
		return nil, err
	}
	svm, err := eval.FitSVM(train, m.K, cd.yTrain, eval.SVMConfig{}, rng.Derive(x.seed, "e7", "svm"))
	if err != nil {
		return nil, err
	}
	pred := svm.Predict(test)
	if out["svm_accuracy"], err = eval.Accuracy(cd.yTest, pred); err != nil {
		return nil, err
	}
	prf, err := eval.MacroPRF(cd.yTest, pred)
	if err != nil {
		return nil, err
	}
	out["svm_macro_f1"] = prf.F1
	return out, nil
}

// e7Claims emits the paper's two claims for every K: MI improves coherence
// (embedding coherence when measured, else NPMI) and classification, per
// pair of runs that differ only in the MI term; and each adaptive server
// optimizer beats FedAvg (SVM accuracy), with and without MI.
func (x *experiment) e7Claims(ks []int, scores map[string]map[string]float64, withEmb bool) error {
	coh := "npmi"
	if withEmb {
		coh = "embedding_coherence"
	}
	pairs := []string{"nmf-sgd"}
	pairs = append(pairs, fednmf.ServerOpts...)
	for _, k := range ks {
		get := func(name string) map[string]float64 { return scores[fmt.Sprintf("%s/%d", name, k)] }
		for _, p := range pairs {
			plain, mi := get(p), get(p+"+mi")
			for _, metric := range []string{coh, "svm_accuracy", "svm_macro_f1"} {
				if err := x.emit(map[string]any{"claim": "the MI term improves " + strings.ReplaceAll(metric, "_", " "), "method": p, "k": k,
					"without_mi": plain[metric], "with_mi": mi[metric], "held": mi[metric] > plain[metric]}); err != nil {
					return err
				}
			}
		}
		for _, suffix := range []string{"", "+mi"} {
			avg := get(fednmf.OptFedAvg + suffix)
			for _, opt := range fednmf.ServerOpts[1:] {
				s := get(opt + suffix)
				if err := x.emit(map[string]any{"claim": "an adaptive server optimizer beats FedAvg on non-IID parties (SVM accuracy)", "server_opt": opt + suffix, "k": k,
					"fedavg": avg["svm_accuracy"], "adaptive": s["svm_accuracy"], "held": s["svm_accuracy"] > avg["svm_accuracy"]}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
