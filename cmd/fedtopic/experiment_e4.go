package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/topic"
)

// classData is the labelled documents of a classification experiment: the
// held-out test documents (no topic model saw them), split into a
// classifier training and test set, with a base feature vector per
// document.
type classData struct {
	train, test *corpus.Corpus
	yTrain      []int
	yTest       []int
	classes     []string
	baseTrain   []float64 // rows of f0 features
	baseTest    []float64
	f0          int
}

// classify prepares classData from the experiment's test documents.
func (x *experiment) classify(testFraction float64, baseWords int) (*classData, error) {
	c := x.data.test
	if c.Labels == nil {
		return nil, errors.New("e4: the corpus has no labels (JSONL \"label\")")
	}
	var keep []int
	for d, l := range c.Labels {
		if l != "" {
			keep = append(keep, d)
		}
	}
	c = c.Subset(keep)
	tr, te, err := eval.Split(c.NumDocs(), testFraction, rng.Derive(x.seed, "e4", "split"))
	if err != nil {
		return nil, err
	}
	cd := &classData{train: c.Subset(tr), test: c.Subset(te)}
	cd.classes = slices.Compact(slices.Sorted(slices.Values(slices.Clone(c.Labels))))
	index := func(l string) int { i, _ := slices.BinarySearch(cd.classes, l); return i }
	for _, l := range cd.train.Labels {
		cd.yTrain = append(cd.yTrain, index(l))
	}
	for _, l := range cd.test.Labels {
		cd.yTest = append(cd.yTest, index(l))
	}
	// Base features: the relative frequencies of the baseWords words most
	// frequent in the classifier's training documents.
	freq := make([]int, c.V)
	for _, w := range cd.train.Words {
		freq[w]++
	}
	words := make([]int32, c.V)
	for w := range words {
		words[w] = int32(w)
	}
	slices.SortStableFunc(words, func(a, b int32) int { return cmp.Compare(freq[b], freq[a]) })
	words = words[:min(baseWords, len(words))]
	col := make(map[int32]int, len(words))
	for i, w := range words {
		col[w] = i
	}
	cd.f0 = len(words)
	bag := func(cc *corpus.Corpus) []float64 {
		out := make([]float64, cc.NumDocs()*cd.f0)
		for d := 0; d < cc.NumDocs(); d++ {
			doc := cc.Doc(d)
			for _, w := range doc {
				if j, ok := col[w]; ok {
					out[d*cd.f0+j] += 1 / float64(len(doc))
				}
			}
		}
		return out
	}
	cd.baseTrain, cd.baseTest = bag(cd.train), bag(cd.test)
	return cd, nil
}

// features appends to the base features of each document its θ under m
// (fold-in inference), or returns the base features alone for m nil.
func (x *experiment) features(ctx context.Context, cd *classData, m *topic.Model) (train, test []float64, f int, err error) {
	if m == nil {
		return cd.baseTrain, cd.baseTest, cd.f0, nil
	}
	join := func(base []float64, c *corpus.Corpus) ([]float64, error) {
		theta, err := m.Infer(ctx, c, topic.InferConfig{Seed: x.seed, Workers: x.workers})
		if err != nil {
			return nil, err
		}
		n, f := c.NumDocs(), cd.f0+m.K
		out := make([]float64, 0, n*f)
		for d := 0; d < n; d++ {
			out = append(out, base[d*cd.f0:(d+1)*cd.f0]...)
			out = append(out, theta[d*m.K:(d+1)*m.K]...)
		}
		return out, nil
	}
	if train, err = join(cd.baseTrain, cd.train); err != nil {
		return nil, nil, 0, err
	}
	if test, err = join(cd.baseTest, cd.test); err != nil {
		return nil, nil, 0, err
	}
	return train, test, cd.f0 + m.K, nil
}

// scoreFeatures fits a linear SVM and a logistic regression and returns
// their accuracy and macro precision, recall and F1 on the test features;
// with auc also each one's macro one-vs-rest ROC AUC (the logistic
// regression's class probabilities, the SVM's decision values) and the
// number of classes it is taken over.
func (x *experiment) scoreFeatures(cd *classData, train, test []float64, f int, auc bool) (map[string]float64, error) {
	svm, err := eval.FitSVM(train, f, cd.yTrain, eval.SVMConfig{}, rng.Derive(x.seed, "e4", "svm"))
	if err != nil {
		return nil, err
	}
	lr, err := eval.FitLogistic(train, f, cd.yTrain, eval.LogisticConfig{})
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, c := range []struct {
		name string
		c    eval.Classifier
	}{{"logistic", lr}, {"svm", svm}} {
		a, err := eval.Assess(c.c, test, cd.yTest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		out[c.name+"_accuracy"], out[c.name+"_macro_precision"], out[c.name+"_macro_recall"] = a.Accuracy, a.Macro.Precision, a.Macro.Recall
		out[c.name+"_macro_f1"] = a.Macro.F1
		if auc {
			out[c.name+"_macro_auc"], out["auc_classes"] = a.AUC.AUC, float64(a.AUC.Classes)
		}
	}
	return out, nil
}

// e4Models returns the models E4 compares, loaded from --models-dir when an
// e1 run saved them there, else trained as e1 trains them (and saved when
// --models-dir is set).
func (x *experiment) e4Models(ctx context.Context, f *e1Flags, modes []string) (names []string, models []*topic.Model, err error) {
	grid, err := parseTopics(f.grid)
	if err != nil {
		return nil, nil, err
	}
	for _, model := range strings.Split(f.models, ",") {
		var parties []*topic.Model
		var ks []int
		for p := range x.data.parts {
			m, err := x.loadSaved(fmt.Sprintf("%s-p%d", model, p+1))
			if err != nil {
				return nil, nil, err
			}
			if m == nil {
				parties = nil
				break
			}
			parties = append(parties, m)
			ks = append(ks, m.K)
		}
		if parties == nil {
			fmt.Fprintf(x.log, "e4: training each party's own %s (no saved models)\n", model)
			if parties, ks, err = x.partyModels(ctx, model, grid, f.iterations); err != nil {
				return nil, nil, err
			}
			for p, m := range parties {
				if err := x.save(fmt.Sprintf("%s-p%d", model, p+1), m); err != nil {
					return nil, nil, err
				}
			}
		}
		for p, m := range parties {
			names, models = append(names, fmt.Sprintf("%s-p%d", model, p+1)), append(models, m)
		}
		for _, debias := range modes {
			name := ftmModelName(model, debias)
			g, err := x.loadSaved(name)
			if err != nil {
				return nil, nil, err
			}
			if g == nil {
				fmt.Fprintf(x.log, "e4: running FTM (%s, debias %s, no saved model)\n", model, debiasName(debias))
				run, _, err := x.runFTM(ctx, "ftm", ftmConfig(model, ks, f.epsilon, f.tau, f.rounds, f.localIters, debias, x.workers), nil)
				if err != nil {
					return nil, nil, err
				}
				g = run.res.Global
				if err := x.save(name, g); err != nil {
					return nil, nil, err
				}
			}
			names, models = append(names, name), append(models, g)
		}
	}
	return names, models, nil
}

// ftmModelName names FTM's global model of a family and debiasing mode.
func ftmModelName(model, debias string) string {
	if debias == "" {
		return "ftm-" + model
	}
	return "ftm-" + model + "-" + debias
}

// loadSaved loads a saved model, or returns nil when there is none.
func (x *experiment) loadSaved(name string) (*topic.Model, error) {
	p := x.modelPath(name)
	if p == "" {
		return nil, nil
	}
	m, err := topic.Load(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if m.V != len(x.data.vocab) {
		return nil, fmt.Errorf("e4: %s has %d words, the corpus vocabulary %d: was it made with other flags?", p, m.V, len(x.data.vocab))
	}
	return m, nil
}

func newE4Cmd(e *env) *cobra.Command {
	x := &experiment{name: "e4"}
	var (
		f         e1Flags
		classTest float64
		baseWords int
	)
	cmd := &cobra.Command{
		Use:   "e4 --corpus FILE",
		Short: "Classification with topic features (iFTM Table 3)",
		Long: `e4 classifies the held-out labelled documents (which no topic model was
trained on) with a linear SVM and a logistic regression on base features
(the relative frequencies of the most frequent words), alone and extended
with each document's topic proportions θ under: each party's own LDA and
SentenceLDA, and the FTM global models (LDA and SentenceLDA). The
classifier's documents are split seeded into training and test; it
reports accuracy, macro precision and macro-F1.

With --models-dir of an e1 run on the same corpus, flags and seed, it
reuses that run's models; otherwise it trains them the same way. --debias
lists the FTM variants to compare (none, output, draw).

The claims checked: topic features help; FTM's help more than any single
party's; SentenceLDA's more than LDA's.`,
		Example: `  fedtopic experiment e4 --corpus wordnet.jsonl --models-dir e1-models --out e4.jsonl`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			modes, err := debiasModes(f.debias)
			if err != nil {
				return err
			}
			closer, err := x.open(ctx, e)
			if err != nil {
				return err
			}
			defer closer()
			cd, err := x.classify(classTest, baseWords)
			if err != nil {
				return err
			}
			fmt.Fprintf(x.log, "e4: %d classes, %d training and %d test documents, %d base features\n", len(cd.classes), cd.train.NumDocs(), cd.test.NumDocs(), cd.f0)
			names, models, err := x.e4Models(ctx, &f, modes)
			if err != nil {
				return err
			}
			names, models = append([]string{"none"}, names...), append([]*topic.Model{nil}, models...)
			scores := map[string]map[string]float64{}
			for i, m := range models {
				tr, te, nf, err := x.features(ctx, cd, m)
				if err != nil {
					return err
				}
				s, err := x.scoreFeatures(cd, tr, te, nf, false)
				if err != nil {
					return err
				}
				scores[names[i]] = s
				line := map[string]any{"method": names[i], "features": nf, "classes": len(cd.classes),
					"train_docs": cd.train.NumDocs(), "test_docs": cd.test.NumDocs()}
				if m != nil {
					line["k"] = m.K
				}
				for k, v := range s {
					line[k] = v
				}
				fmt.Fprintf(x.log, "  %s: SVM accuracy %.4f macro-F1 %.4f; logistic accuracy %.4f macro-F1 %.4f\n", names[i], s["svm_accuracy"], s["svm_macro_f1"], s["logistic_accuracy"], s["logistic_macro_f1"])
				if err := x.emit(line); err != nil {
					return err
				}
			}
			for _, d := range modes {
				for _, model := range strings.Split(f.models, ",") {
					best := math.Inf(-1)
					for p := range x.data.parts {
						best = math.Max(best, scores[fmt.Sprintf("%s-p%d", model, p+1)]["svm_accuracy"])
					}
					fa := scores[ftmModelName(model, d)]["svm_accuracy"]
					if err := x.emit(map[string]any{"claim": "FTM's topic features beat every single party's and no topic features (SVM accuracy)",
						"model": model, "debias": debiasName(d), "ftm": fa, "best_party": best, "none": scores["none"]["svm_accuracy"],
						"held": fa > best && fa > scores["none"]["svm_accuracy"]}); err != nil {
						return err
					}
				}
				sl, okS := scores[ftmModelName(ftm.ModelSLDA, d)]
				l, okL := scores[ftmModelName(ftm.ModelLDA, d)]
				if okS && okL {
					if err := x.emit(map[string]any{"claim": "FTM-SentenceLDA's features beat FTM-LDA's (SVM accuracy)", "debias": debiasName(d),
						"ftm_slda": sl["svm_accuracy"], "ftm_lda": l["svm_accuracy"], "held": sl["svm_accuracy"] > l["svm_accuracy"]}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	x.register(cmd, "labels:sizes=1,2,3")
	f.register(cmd, "none")
	fl := cmd.Flags()
	fl.StringVar(&x.modelsDir, "models-dir", "", "reuse (or save) the models of e1 here")
	fl.Float64Var(&classTest, "class-test-fraction", 0.3, "share of the labelled held-out documents the classifier is tested on")
	fl.IntVar(&baseWords, "base-words", 500, "base features: relative frequencies of this many most frequent words")
	return cmd
}
