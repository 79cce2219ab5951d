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

// composed emits, for every party, its composed model with global, the
// federated model of the private line priv: the party's own non-private
// model beside the federated topics, with the weight of lowest
// development perplexity. It is what joining the federation gives a
// party that keeps its own model: its line says how it compares with the
// party alone.
func (c *compareRun) composed(ctx context.Context, priv map[string]any, global *topic.Model) error {
	for p, own := range c.locals {
		var best *topic.Model
		bestDev, bestW := math.Inf(1), 0.0
		for _, w := range composedWeights {
			m, err := compose(own, global, w)
			if err != nil {
				return err
			}
			dev, err := c.perplexity(ctx, m, c.dev)
			if err != nil {
				return err
			}
			if dev < bestDev {
				best, bestDev, bestW = m, dev, w
			}
		}
		id := fmt.Sprintf("p%d", p+1)
		line := map[string]any{"role": "composed", "method": priv["method"], "party": id, "target_epsilon": priv["target_epsilon"],
			"global_weight": bestW, "weights": joinFloats(composedWeights), "dev_perplexity": bestDev, "k": best.K, "own_k": own.K}
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
		fmt.Fprintf(c.x.log, "    %s's own topics with %s's: perplexity %.1f (federated topics' prior × %g)\n", id, priv["method"], line["perplexity"], bestW)
		if err := c.x.emit(line); err != nil {
			return err
		}
	}
	return nil
}

// joinFloats writes xs comma-separated.
func joinFloats(xs []float64) string {
	s := ""
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprint(x)
	}
	return s
}
