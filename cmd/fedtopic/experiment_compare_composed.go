package main

import (
	"context"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/topic"
)

// composedWeights are the candidate scales of the federated topics' prior
// in a party's composed model, chosen on the development documents.
var composedWeights = []float64{0.05, 0.25, 1, 4}

// compose returns a party's composed model: its own topics beside the
// federated model's topics, each set keeping its prior, the federated
// topics' scaled by w. A document draws its words from both sets, so
// inference puts it on the party's own topics where they fit and on the
// federated ones where the party has seen nothing like it. The composed
// model is post-processing of the federated release and the party's own
// data: it costs no privacy and never leaves the party.
func compose(own, global *topic.Model, w float64) (*topic.Model, error) {
	if own.V != global.V {
		return nil, fmt.Errorf("compose: own model over %d words, federated over %d", own.V, global.V)
	}
	m := &topic.Model{K: own.K + global.K, V: own.V, Vocab: own.Vocab, Beta: own.Beta, Prov: own.Prov}
	m.Phi = append(append(make([]float64, 0, len(own.Phi)+len(global.Phi)), own.Phi...), global.Phi...)
	m.Alpha = append(append(make([]float64, 0, m.K), priorOf(own)...), priorOf(global)...)
	for k := own.K; k < m.K; k++ {
		m.Alpha[k] *= w
	}
	m.Prov.Method = "composed"
	return m, m.Validate()
}

// priorOf returns m's document-topic prior: its Alpha, or for a model
// without one (NMF's) the 1/K per topic inference gives it.
func priorOf(m *topic.Model) []float64 {
	if len(m.Alpha) == m.K {
		return m.Alpha
	}
	a := make([]float64, m.K)
	for k := range a {
		a[k] = 1 / float64(m.K)
	}
	return a
}

// uniformTopic is one topic spread evenly over v words: what a composed
// model adds when the federated topics carry nothing.
func uniformTopic(v int, vocab []string) *topic.Model {
	m := &topic.Model{K: 1, V: v, Phi: make([]float64, v), Alpha: []float64{1}, Vocab: vocab}
	for w := range m.Phi {
		m.Phi[w] = 1 / float64(v)
	}
	return m
}

// bestComposed composes own with global at every weight and returns the
// model of lowest development perplexity, its weight and that perplexity.
func (c *compareRun) bestComposed(ctx context.Context, own, global *topic.Model) (*topic.Model, float64, float64, error) {
	var best *topic.Model
	bestDev, bestW := math.Inf(1), 0.0
	for _, w := range composedWeights {
		m, err := compose(own, global, w)
		if err != nil {
			return nil, 0, 0, err
		}
		dev, err := c.perplexity(ctx, m, c.dev)
		if err != nil {
			return nil, 0, 0, err
		}
		if dev < bestDev {
			best, bestDev, bestW = m, dev, w
		}
	}
	return best, bestW, bestDev, nil
}

// smoothed emits, for every party, its own topics beside one uniform
// topic, the weight chosen on the development documents: a party can do
// this alone, so a composed model must beat it too before joining can be
// said to pay. A party's own topics give a word it never saw almost no
// probability; any extra topic that spreads mass over the vocabulary
// lowers perplexity, whatever it learned.
func (c *compareRun) smoothed(ctx context.Context) error {
	d := c.x.data
	uni := uniformTopic(len(d.vocab), d.vocab)
	for p, own := range c.locals {
		m, w, dev, err := c.bestComposed(ctx, own, uni)
		if err != nil {
			return err
		}
		perp, err := c.perplexity(ctx, m, d.test)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("p%d", p+1)
		c.smooth = append(c.smooth, perp)
		fmt.Fprintf(c.x.log, "  %s alone with a uniform topic beside its own: perplexity %.1f (its prior × %g)\n", id, perp, w)
		if err := c.x.emit(map[string]any{"role": "smoothed", "method": "lda+uniform", "party": id, "global_weight": w,
			"weights": joinList(composedWeights), "dev_perplexity": dev, "perplexity": perp, "k": m.K}); err != nil {
			return err
		}
	}
	return nil
}

// composed emits, for every party, its composed model with global, the
// federated model of the private line priv: the party's own non-private
// model beside the federated topics, with the weight of lowest
// development perplexity. It is what joining the federation gives a
// party that keeps its own model: its line says how it compares with the
// party alone.
func (c *compareRun) composed(ctx context.Context, priv map[string]any, global *topic.Model) error {
	for p, own := range c.locals {
		best, bestW, bestDev, err := c.bestComposed(ctx, own, global)
		if err != nil {
			return err
		}
		id := fmt.Sprintf("p%d", p+1)
		line := map[string]any{"role": "composed", "method": priv["method"], "party": id, "target_epsilon": priv["target_epsilon"],
			"global_weight": bestW, "weights": joinList(composedWeights), "dev_perplexity": bestDev, "k": best.K, "own_k": own.K}
		for _, k := range []string{"doc_epsilon", "doc_delta", "spent", "rounds"} {
			if v, ok := priv[k]; ok {
				line[k] = v
			}
		}
		// Held-out perplexity only: the composed topics' quality is that of
		// the two models, measured on their own lines.
		perp, err := c.perplexity(ctx, best, c.x.data.test)
		if err != nil {
			return err
		}
		line["perplexity"] = perp
		if p < len(c.smooth) {
			line["smoothed_perplexity"] = c.smooth[p]
		}
		fmt.Fprintf(c.x.log, "    %s's own topics with %s's: perplexity %.1f (federated topics' prior × %g)\n", id, priv["method"], line["perplexity"], bestW)
		if err := c.x.emit(line); err != nil {
			return err
		}
	}
	return nil
}
