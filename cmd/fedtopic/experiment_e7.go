package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/fedlda"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/lda"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/topic"
)

// e7Method is one model E7 trains: a centralized baseline, FedLDA, or a
// federated FedNMF run with a server optimizer, with or without the MI
// term.
type e7Method struct {
	name      string
	serverOpt string // "" for the others
	model     string // lda, nmf, nmf-sgd, fedlda for the others
	mi        bool
}

// e7FedLDA is FedLDA's model name in e7Method.
const e7FedLDA = "fedlda"

// e7FedNMF lists the FedNMF runs: each server optimizer without and with
// the MI term.
func e7FedNMF() []e7Method {
	var ms []e7Method
	for _, opt := range fednmf.ServerOpts {
		ms = append(ms, e7Method{name: opt, serverOpt: opt}, e7Method{name: opt + "+mi", serverOpt: opt, mi: true})
	}
	return ms
}

// e7Methods lists E7's models in output order.
func e7Methods() []e7Method {
	ms := []e7Method{{name: "lda", model: "lda"}, {name: "nmf", model: fednmf.MethodNMF},
		{name: "nmf-sgd", model: fednmf.MethodNMFSGD}, {name: "nmf-sgd+mi", model: fednmf.MethodNMFSGD, mi: true},
		{name: e7FedLDA, model: e7FedLDA}}
	return append(ms, e7FedNMF()...)
}

// e7Setup is what every model of one E7 run shares.
type e7Setup struct {
	base          fednmf.Config
	lambda        float64
	ldaIters      int
	fedldaRounds  int
	fedldaMech    string
	embs          *eval.Embeddings
	cd            *classData
	topN          int
	rounds        int
	frac          float64
	scores        map[string]map[string]float64 // by method/K, of the current set
	withEmbedding bool
}

func newE7Cmd(e *env) *cobra.Command {
	x := &experiment{name: "e7"}
	var (
		ks, embeddings, alphas, counts string
		rounds, ldaIters, fedldaRounds int
		lambda, frac, clf              float64
		topN                           int
		fedldaMech                     string
	)
	cmd := &cobra.Command{
		Use:   "e7 --corpus FILE",
		Short: "FedNMF: coherence and SVM classification for LDA, NMF, NMF-SGD (±MI), FedLDA and FedNMF with each server optimizer (±MI) (FedNMF Tables III–IV)",
		Long: `e7 trains, for every K of --ks, on the experiment's training documents:

  lda                      LDA (the default sampler) on the pooled documents
  nmf                      NMF by HALS on the pooled tf-idf matrix
  nmf-sgd, nmf-sgd+mi      SGD NMF on the pooled documents, without and with
                           the MI term (λ = --mi-lambda)
  fedlda                   FedLDA over the parties (--fedlda-rounds
                           iterations; --fedlda-mechanism, by default none:
                           no privacy, as every other model here)
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
has no likelihood.

Then two sweeps of the FedNMF runs at the first K of --ks, each with the
same claims: the Dirichlet concentration α of the parties' label mixes
(--alphas, 10 equal parties) and the number of parties (--party-counts,
equal parties with α = 1). Their lines carry "sweep" ("alpha" or "parties")
and the value; the main run is the point α = 1, 10 parties of both.`,
		Example: `  fedtopic experiment e7 --corpus demo/wordnet-glosses.jsonl --ks 50 --rounds 20 --out e7.jsonl`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			kList, err := parseTopics(ks)
			if err != nil {
				return err
			}
			if rounds < 1 || ldaIters < 1 || fedldaRounds < 1 {
				return usagef("--rounds %d, --lda-iterations %d, --fedlda-rounds %d: want at least 1", rounds, ldaIters, fedldaRounds)
			}
			if clf <= 0 || clf >= 1 {
				return usagef("--classifier-test-fraction %g: want a fraction in (0, 1)", clf)
			}
			alphaList, err := e7Floats("--alphas", alphas)
			if err != nil {
				return err
			}
			var countList []int
			for _, v := range strings.Split(counts, ",") {
				if v = strings.TrimSpace(v); v == "" {
					continue
				}
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return usagef("--party-counts %q: want whole numbers of at least 1", counts)
				}
				countList = append(countList, n)
			}
			for _, a := range alphaList {
				if a <= 0 {
					return usagef("--alphas %q: want concentrations above 0", alphas)
				}
			}
			base := fednmf.Config{Rounds: rounds, ClientFraction: frac}
			for _, k := range kList {
				probe := base
				probe.K, probe.MILambda = k, lambda
				if err := probe.Validate(); err != nil {
					return usageError{err}
				}
				if err := (fedlda.Config{K: k, Rounds: fedldaRounds, Mechanism: fedldaMech}).Validate(); err != nil {
					return usageError{err}
				}
			}
			closer, err := x.open(ctx, e)
			if err != nil {
				return err
			}
			defer closer()
			st := &e7Setup{base: base, lambda: lambda, ldaIters: ldaIters, fedldaRounds: fedldaRounds, fedldaMech: fedldaMech,
				topN: topN, rounds: rounds, frac: frac}
			if embeddings != "" {
				if st.embs, err = eval.LoadEmbeddings(embeddings, x.data.vocab); err != nil {
					return err
				}
				st.withEmbedding = true
			}
			if st.cd, err = x.classify(clf, 0); err != nil {
				return err
			}
			if err := x.emit(map[string]any{"plot": map[string]any{"title": "FedNMF: classification and coherence by method",
				"x": "method", "y": "svm_accuracy", "series": []string{"k", "sweep"}, "also": []string{"svm_macro_f1", "npmi", "embedding_coherence"}}}); err != nil {
				return err
			}
			for _, k := range kList {
				st.scores = map[string]map[string]float64{}
				if err := x.e7Set(ctx, st, e7Methods(), k, nil); err != nil {
					return err
				}
				if err := x.e7Claims(st, k, true, nil); err != nil {
					return err
				}
			}
			main := x.data.parts
			defer func() { x.data.parts = main }()
			sweep := func(kind string, value any, spec string) error {
				parsed, err := corpus.ParseSplit(spec)
				if err != nil {
					return usageError{err}
				}
				if x.data.parts, err = corpus.Split(x.data.train, parsed, rng.Derive(x.seed, "experiment", "split", spec)); err != nil {
					return usageError{err}
				}
				extra := map[string]any{"sweep": kind, kind: value}
				st.scores = map[string]map[string]float64{}
				if err := x.e7Set(ctx, st, e7FedNMF(), kList[0], extra); err != nil {
					return err
				}
				return x.e7Claims(st, kList[0], false, extra)
			}
			for _, a := range alphaList {
				if err := sweep("alpha", a, fmt.Sprintf("dirichlet=%g:sizes=%s", a, e7Ones(10))); err != nil {
					return err
				}
			}
			for _, n := range countList {
				if err := sweep("parties", n, "dirichlet=1:sizes="+e7Ones(n)); err != nil {
					return err
				}
			}
			return nil
		},
	}
	x.register(cmd, "dirichlet=1:sizes="+e7Ones(10))
	fs := cmd.Flags()
	fs.StringVar(&ks, "ks", "50,100,200", "numbers of topics K")
	fs.IntVar(&rounds, "rounds", 100, "FedNMF rounds; also the SGD baselines' rounds of one epoch")
	fs.IntVar(&ldaIters, "lda-iterations", 300, "sweeps of the LDA baseline")
	fs.IntVar(&fedldaRounds, "fedlda-rounds", 100, "FedLDA's iterations (one round each)")
	fs.StringVar(&fedldaMech, "fedlda-mechanism", fedlda.MechanismNone, "FedLDA's perturbation of the sent words: none (no privacy, as the other models), krr, tkrr or rrp at FedLDA's default ε")
	fs.Float64Var(&lambda, "mi-lambda", 0.1, "λ of the +mi models")
	fs.Float64Var(&frac, "client-fraction", fednmf.DefaultClientFraction, "C: the fraction of the parties sampled each round")
	fs.Float64Var(&clf, "classifier-test-fraction", 0.3, "share of the labelled held-out documents the SVM is scored on")
	fs.StringVar(&embeddings, "embeddings", "", "word vectors (word2vec/GloVe text, as fedtopic embed writes them) for embedding coherence")
	fs.IntVar(&topN, "top-n", eval.DefaultTopN, "top words per topic for coherence")
	fs.StringVar(&alphas, "alphas", "0.1,10", "Dirichlet concentrations α of the sweep over label skew (10 parties; empty: no sweep)")
	fs.StringVar(&counts, "party-counts", "1,30,50", "numbers of parties of the sweep over the federation's size, the paper's besides the main run's 10 (α = 1; empty: no sweep)")
	return cmd
}

// e7Ones returns "1,1,…,1" with n ones: n equal party sizes.
func e7Ones(n int) string { return strings.TrimSuffix(strings.Repeat("1,", n), ",") }

// e7Floats parses a comma-separated list of numbers of flag name;
// empty means none.
func e7Floats(name, s string) ([]float64, error) {
	var out []float64
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, usagef("%s %q: %q is not a number", name, s, v)
		}
		out = append(out, f)
	}
	return out, nil
}

// e7Set trains and scores the models ms at K topics over the current
// parties, writing one line each (with extra) and keeping the scores in
// st.scores.
func (x *experiment) e7Set(ctx context.Context, st *e7Setup, ms []e7Method, k int, extra map[string]any) error {
	for _, meth := range ms {
		start := time.Now()
		m, err := x.e7Train(ctx, st, meth, k)
		if err != nil {
			return fmt.Errorf("e7: %s, K = %d: %w", meth.name, k, err)
		}
		s, err := x.e7Score(ctx, st.cd, m, st.embs, st.topN)
		if err != nil {
			return fmt.Errorf("e7: %s, K = %d: %w", meth.name, k, err)
		}
		line := map[string]any{"method": meth.name, "k": k, "mi": meth.mi, "seconds": time.Since(start).Seconds()}
		switch {
		case meth.serverOpt != "":
			line["server_opt"], line["rounds"], line["client_fraction"], line["parties"] = meth.serverOpt, st.rounds, st.frac, len(x.data.parts)
		case meth.model == e7FedLDA:
			line["rounds"], line["parties"], line["mechanism"] = st.fedldaRounds, len(x.data.parts), st.fedldaMech
		}
		if meth.mi {
			line["mi_lambda"] = st.lambda
		}
		for key, v := range s {
			line[key] = v
		}
		for key, v := range extra {
			line[key] = v
		}
		if err := x.emit(line); err != nil {
			return err
		}
		st.scores[meth.name] = s
		what := meth.name
		if kind, ok := extra["sweep"].(string); ok {
			what = fmt.Sprintf("%s (%s = %v)", meth.name, kind, extra[kind])
		}
		fmt.Fprintf(x.log, "e7: %s, K = %d: SVM accuracy %.4f, macro-F1 %.4f, NPMI %.4f (%.0fs)\n",
			what, k, s["svm_accuracy"], s["svm_macro_f1"], s["npmi"], time.Since(start).Seconds())
	}
	return nil
}

// e7Train trains one of E7's models at K topics.
func (x *experiment) e7Train(ctx context.Context, st *e7Setup, meth e7Method, k int) (*topic.Model, error) {
	cfg := st.base
	cfg.K = k
	if meth.mi {
		cfg.MILambda = st.lambda
	}
	switch {
	case meth.model == "lda":
		m, err := lda.Train(ctx, x.data.train, lda.Config{K: k, Iterations: st.ldaIters, Seed: x.seed, Workers: x.workers}, nil)
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
	alg := fednmf.Algorithm
	var params []byte
	var err error
	if meth.model == e7FedLDA {
		alg = fedlda.Algorithm
		params, err = json.Marshal(fedlda.Config{K: k, Rounds: st.fedldaRounds, Mechanism: st.fedldaMech, Workers: x.workers})
	} else {
		cfg.ServerOpt = meth.serverOpt
		params, err = json.Marshal(cfg)
	}
	if err != nil {
		return nil, err
	}
	res, err := sim.Run(ctx, sim.Scenario{Algorithm: alg, Params: params, Corpora: x.data.parts, Vocab: x.data.vocab, Seed: x.seed})
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

// e7Claims emits the paper's two claims at K over st.scores, with extra:
// MI improves coherence (embedding coherence when measured, else NPMI) and
// classification, per pair of runs that differ only in the MI term (the
// SGD baseline's pair with central set); and each adaptive server
// optimizer beats FedAvg (SVM accuracy), with and without MI.
func (x *experiment) e7Claims(st *e7Setup, k int, central bool, extra map[string]any) error {
	coh := "npmi"
	if st.withEmbedding {
		coh = "embedding_coherence"
	}
	var pairs []string
	if central {
		pairs = append(pairs, "nmf-sgd")
	}
	pairs = append(pairs, fednmf.ServerOpts...)
	emit := func(line map[string]any) error {
		line["k"] = k
		for key, v := range extra {
			line[key] = v
		}
		return x.emit(line)
	}
	get := func(name string) map[string]float64 { return st.scores[name] }
	for _, p := range pairs {
		plain, mi := get(p), get(p+"+mi")
		for _, metric := range []string{coh, "svm_accuracy", "svm_macro_f1"} {
			if err := emit(map[string]any{"claim": "the MI term improves " + strings.ReplaceAll(metric, "_", " "), "method": p,
				"without_mi": plain[metric], "with_mi": mi[metric], "held": mi[metric] > plain[metric]}); err != nil {
				return err
			}
		}
	}
	for _, suffix := range []string{"", "+mi"} {
		avg := get(fednmf.OptFedAvg + suffix)
		for _, opt := range fednmf.ServerOpts[1:] {
			s := get(opt + suffix)
			if err := emit(map[string]any{"claim": "an adaptive server optimizer beats FedAvg on non-IID parties (SVM accuracy)", "server_opt": opt + suffix,
				"fedavg": avg["svm_accuracy"], "adaptive": s["svm_accuracy"], "held": s["svm_accuracy"] > avg["svm_accuracy"]}); err != nil {
				return err
			}
		}
	}
	return nil
}
