package lda

import (
	"context"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// Chain is a topic-model sampler in progress: *MH or *Gibbs.
type Chain interface {
	// Run runs iterations sweeps, calling progress (if not nil) after each
	// with the sweeps and tokens done in this call.
	Run(ctx context.Context, iterations int, progress func(iter, tokensDone int)) error
	// Model returns the posterior-mean topic-word estimate (C_kw+β)/(C_k+Vβ)
	// of the current state, with Vocab left nil.
	Model() *topic.Model
	// LogLikelihood returns the collapsed joint log-likelihood log p(w, z).
	LogLikelihood() float64
	// Assignments returns the topic of every token (or sentence), read-only.
	Assignments() []uint16
	// DocTopicCounts returns how many tokens (sentences) of document d have
	// each topic.
	DocTopicCounts(d int) []int32
	// TopicWordCounts returns C_kw row-major K×V.
	TopicWordCounts() []float64
	// Iteration returns the number of sweeps done so far.
	Iteration() int
}

// New returns the sampler cfg.Sampler for cfg.Model on c, initialised but
// not yet run: *Gibbs for SamplerGibbs, *MH otherwise.
func New(c *corpus.Corpus, cfg Config) (Chain, error) {
	ch, err := newChain(c, cfg)
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// newChain is New with the methods Train averages by.
func newChain(c *corpus.Corpus, cfg Config) (posteriorChain, error) {
	if cfg.Sampler == SamplerGibbs {
		g, err := NewGibbs(c, cfg)
		if err != nil {
			return nil, err
		}
		return g, nil
	}
	m, err := NewMH(c, cfg)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// Train runs cfg.Iterations sweeps of the sampler cfg.Sampler for cfg.Model
// on c and returns the posterior-mean estimate of Φ, φ_kw = (C_kw + β)/(C_k +
// Vβ), averaged over the states after the last cfg.Average sweeps (see
// Config.Average), with α, β and provenance (method, parameters, seed,
// iterations) filled in; the caller sets Vocab and the rest of the
// provenance. progress, if not nil, is called after every sweep with the
// sweeps and tokens done so far. The result depends only on c and cfg
// (Workers excepted).
func Train(ctx context.Context, c *corpus.Corpus, cfg Config, progress func(iter, tokensDone int)) (*topic.Model, error) {
	ch, err := newChain(c, cfg)
	if err != nil {
		return nil, err
	}
	d := cfg.withDefaults()
	n, a := d.Iterations, d.Average
	var iters, tokens int // done before the current call of Run
	run := func(sweeps int) error {
		return ch.Run(ctx, sweeps, func(iter, tokensDone int) {
			if progress != nil {
				progress(iters+iter, tokens+tokensDone)
			}
			if iter == sweeps {
				iters, tokens = iters+iter, tokens+tokensDone
			}
		})
	}
	if err := run(n - a + 1); err != nil {
		return nil, err
	}
	if a == 1 {
		return ch.Model(), nil
	}
	// The mean of the last a states' posterior means of Φ.
	ps := ch.newSum()
	ch.addState(ps)
	for range a - 1 {
		if err := run(1); err != nil {
			return nil, err
		}
		ch.addState(ps)
	}
	return ch.modelOf(ps.phi(), a), nil
}

// posteriorChain is a Chain whose posterior means Train can average: *MH
// and *Gibbs.
type posteriorChain interface {
	Chain
	// newSum returns an empty sum of the chain's posterior means.
	newSum() *posteriorSum
	// addState adds the posterior mean of Φ given the current state to ps.
	addState(ps *posteriorSum)
	// modelOf returns the model of phi, row-major K×V, the average over
	// the last average states.
	modelOf(phi []float64, average int) *topic.Model
}
