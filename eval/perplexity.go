package eval

import (
	"context"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// PerplexityResult is a held-out evaluation: the document-completion
// perplexity and the total held-out log-likelihood it comes from.
type PerplexityResult struct {
	// Perplexity is exp(−LogLikelihood / HeldOutTokens).
	Perplexity float64 `json:"perplexity"`
	// LogLikelihood is Σ over held-out tokens of log Σ_k θ_dk φ_kw, in
	// nats: the total held-out log-likelihood.
	LogLikelihood float64 `json:"log_likelihood"`
	// HeldOutTokens is the number of held-out tokens scored.
	HeldOutTokens int `json:"held_out_tokens"`
	// Docs is the number of documents with at least one held-out token.
	Docs int `json:"docs"`
}

// SplitCompletion splits every document of c for document completion
// (Wallach et al. 2009): the tokens at even positions 0, 2, 4, … form the
// observed half and those at odd positions 1, 3, 5, … the held-out half.
// Both results have c's documents in c's order (some possibly empty), with
// c's IDs and labels; semantic units are dropped.
func SplitCompletion(c *corpus.Corpus) (observed, heldOut *corpus.Corpus) {
	nd := c.NumDocs()
	half := func(parity int) *corpus.Corpus {
		h := &corpus.Corpus{
			Words:    make([]int32, 0, (c.NumTokens()+1-parity)/2),
			DocStart: make([]int, 1, nd+1),
			IDs:      c.IDs, Labels: c.Labels, V: c.V,
		}
		for d := range nd {
			doc := c.Doc(d)
			for i := parity; i < len(doc); i += 2 {
				h.Words = append(h.Words, doc[i])
			}
			h.DocStart = append(h.DocStart, len(h.Words))
		}
		return h
	}
	return half(0), half(1)
}

// HeldOutLikelihood scores the held-out tokens of heldOut under m with the
// document-topic proportions theta (row-major D×K, as topic.Infer returns
// them): each token w of document d contributes log Σ_k θ_dk φ_kw, summed
// in document and token order. It returns an error if the shapes disagree,
// a word id is outside the vocabulary, no token is held out, or a held-out
// token has probability zero (which would make the perplexity infinite).
func HeldOutLikelihood(m *topic.Model, theta []float64, heldOut *corpus.Corpus) (PerplexityResult, error) {
	nd := heldOut.NumDocs()
	if len(theta) != nd*m.K {
		return PerplexityResult{}, fmt.Errorf("eval: held-out likelihood: theta has %d entries, want documents×K = %d×%d", len(theta), nd, m.K)
	}
	var res PerplexityResult
	for d := range nd {
		doc := heldOut.Doc(d)
		if len(doc) == 0 {
			continue
		}
		th := theta[d*m.K : (d+1)*m.K]
		for i, w := range doc {
			if w < 0 || int(w) >= m.V {
				return PerplexityResult{}, fmt.Errorf("eval: held-out likelihood: %s token %d: word id %d outside the vocabulary [0, %d)", docName(heldOut, d), i, w, m.V)
			}
			p := 0.0
			for k, t := range th {
				p += t * m.Phi[k*m.V+int(w)]
			}
			if !(p > 0) {
				return PerplexityResult{}, fmt.Errorf("eval: held-out likelihood: %s: word %q has probability 0 under the model, so the perplexity is infinite", docName(heldOut, d), m.Vocab[w])
			}
			res.LogLikelihood += math.Log(p)
		}
		res.HeldOutTokens += len(doc)
		res.Docs++
	}
	if res.HeldOutTokens == 0 {
		return PerplexityResult{}, fmt.Errorf("eval: held-out likelihood: no held-out tokens (%d documents)", nd)
	}
	res.Perplexity = math.Exp(-res.LogLikelihood / float64(res.HeldOutTokens))
	return res, nil
}

// Perplexity computes the document-completion perplexity of m on test
// (Wallach et al. 2009): SplitCompletion, θ fitted on each document's
// observed half by m.Infer with cfg (Φ fixed, fold-in Gibbs), then
// HeldOutLikelihood on the held-out half. Documents of fewer than two
// tokens have nothing held out and do not count. The result is
// deterministic given cfg.Seed.
func Perplexity(ctx context.Context, m *topic.Model, test *corpus.Corpus, cfg topic.InferConfig) (PerplexityResult, error) {
	obs, held := SplitCompletion(test)
	theta, err := m.Infer(ctx, obs, cfg)
	if err != nil {
		return PerplexityResult{}, fmt.Errorf("eval: perplexity: %w", err)
	}
	return HeldOutLikelihood(m, theta, held)
}

// docName names document d of c for error messages.
func docName(c *corpus.Corpus, d int) string {
	if d < len(c.IDs) && c.IDs[d] != "" {
		return fmt.Sprintf("document %d (%s)", d, c.IDs[d])
	}
	return fmt.Sprintf("document %d", d)
}
