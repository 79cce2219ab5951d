package main

import (
	"context"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/topic"
)

// nmfNoPerplexity is the sentence eval prints for an NMF model instead of
// its perplexity.
const nmfNoPerplexity = "perplexity is not computed: the model is NMF (%s), which defines no likelihood of the words, so perplexity is not meaningful for it; NPMI, UMass, embedding coherence and diversity are"

// inferTheta returns θ of c's documents (N×K) with m fixed: for an NMF
// model (nmf, nmf-sgd, fednmf) each document's non-negative least-squares
// weights with W fixed, normalized to sum to 1, on the features the model
// was trained on, at most ic.Sweeps HALS sweeps (0: fednmf's default);
// for every other model, fold-in Gibbs sampling. Burn-in means nothing to
// NMF and is refused for it.
func inferTheta(ctx context.Context, m *topic.Model, c *corpus.Corpus, ic topic.InferConfig) ([]float64, error) {
	features, ok := fednmf.ModelFeatures(m)
	if !ok {
		return m.Infer(ctx, c, ic)
	}
	if ic.BurnIn != 0 {
		return nil, usagef("--burn-in applies to fold-in Gibbs sampling; the model is NMF (%s), whose θ is fitted by least squares", m.Prov.Method)
	}
	return fednmf.Infer(ctx, m, c, features, ic.Sweeps)
}
