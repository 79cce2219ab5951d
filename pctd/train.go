package pctd

import (
	"context"
	"errors"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// Train runs PC-TD's EM centrally on docs, without noise: the non-private
// baseline (the paper's "centralized" curve on pooled data, or a "single
// party" curve on one party's data). It starts from InitialTopics(seed)
// and runs cfg.Rounds iterations, with M_t and the topics rounded to
// float32 as the messages round them (M_t of the SSP variant also to the
// grid of SecureFracBits, as parties round it): exactly what a federation of one party
// with NoNoise computes; cfg's noise settings are ignored. onIter, if not
// nil, sees the model after each iteration.
func Train(ctx context.Context, docs *corpus.Corpus, vocab []string, cfg Config, seed uint64, onIter func(iter int, m *topic.Model) error) (*topic.Model, error) {
	cfg.NoNoise, cfg.Sigma, cfg.Epsilon = true, 0, 0
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if docs == nil || docs.NumTokens() == 0 {
		return nil, errors.New("pctd: train: no tokens")
	}
	if docs.V > len(vocab) {
		return nil, fmt.Errorf("pctd: train: corpus vocabulary of %d words, larger than the %d given", docs.V, len(vocab))
	}
	window, _ := windowOf(cfg.Units)
	e := newEM(buildUnits(docs, window, cfg.MaxDocTokens), cfg.Topics, len(vocab))
	e.alpha = cfg.ThetaPrior
	phi := onWire(InitialTopics(seed, cfg.Topics, len(vocab)), cfg.Topics, len(vocab))
	for it := 1; it <= cfg.Rounds; it++ {
		m, err := e.iterate(ctx, phi, noise{variant: cfg.Variant}, cfg.Workers)
		if err != nil {
			return nil, fmt.Errorf("pctd: train: iteration %d: %w", it, err)
		}
		if cfg.Variant == VariantSSP {
			onGrid(m) // as a party rounds its M_t (secure.go)
		}
		if m, err = decodeUpdate(encodeUpdate(m, cfg.Topics, len(vocab)), cfg.Topics, len(vocab)); err != nil {
			return nil, fmt.Errorf("pctd: train: iteration %d: %w", it, err)
		}
		phi = onWire(mStep(m, cfg.Topics, len(vocab), cfg.Beta, nil, 0), cfg.Topics, len(vocab))
		if onIter != nil {
			if err := onIter(it, newModel(cfg, phi, vocab, seed, it)); err != nil {
				return nil, err
			}
		}
	}
	return newModel(cfg, phi, vocab, seed, 0), nil
}
