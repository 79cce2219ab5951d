package main

import (
	"encoding/json"
	"slices"

	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/topic"
)

// pctdOptions are a PC-TD variant's settings besides the budget and the
// rounds: the noise schedule's growth and the number of last rounds whose
// sums the final topics average (pctd.Config.ScheduleGrowth and
// AverageLast; zero: none), which apply only with noise, and the prior on
// θ_d (ThetaPrior), which is part of the EM with or without.
type pctdOptions struct {
	growth     float64
	average    int
	thetaPrior float64
}

// pctdParamsFor builds PC-TD's parameters for a variant: the knob is the
// target ε per document from which PC-TD calibrates its noise. With secure,
// the noise is distributed among all the parties (t = n), as the variant
// runs under secure aggregation (thresholdFor).
func pctdParamsFor(variant string, secure bool, opt pctdOptions) func(c *compareRun, x float64, r int, noNoise bool) (any, error) {
	return func(c *compareRun, x float64, r int, noNoise bool) (any, error) {
		cfg := pctd.Config{Variant: variant, Epsilon: x, Delta: c.f.delta, Topics: c.f.topics, Rounds: r, MaxDocTokens: c.maxLen,
			Unit: pctd.UnitDocument, Workers: c.x.workers, NoNoise: noNoise, ThetaPrior: opt.thetaPrior}
		if noNoise {
			cfg.Epsilon, cfg.Delta, cfg.Unit = 0, 0, ""
		} else {
			cfg.ScheduleGrowth, cfg.AverageLast = opt.growth, min(opt.average, r)
			if secure {
				cfg.SecureThreshold = len(c.x.data.parts)
			}
		}
		return cfg, cfg.Validate()
	}
}

// pctdThreshold post-processes PC-TD's released topics: it recovers the
// summed, clipped M of the last round from each topic (the smallest entry
// of a topic is β over the topic's mass, since the noise clips some entry
// to zero), zeroes the entries at most t standard deviations of the summed
// noise, mixes each topic with weight λ with the word distribution of the
// thresholded M summed over topics, and normalizes. Only the released
// topics are read, so the cost is the run's.
func pctdThreshold(m *topic.Model, params json.RawMessage, parties int) ([]postModel, error) {
	cfg, err := pctd.ParseConfig(params)
	if err != nil {
		return nil, err
	}
	r := cfg.Resolved()
	// The noise on the sum the final topics come from: n parties' own
	// noise, or one party's distributed among t, over the rounds averaged.
	std := r.ReleaseNoiseStd(parties)
	counts := make([]float64, len(m.Phi))
	for k := range m.K {
		row := m.Phi[k*m.V : (k+1)*m.V]
		mass := r.Beta / slices.Min(row)
		for w, p := range row {
			counts[k*m.V+w] = max(p*mass-r.Beta, 0)
		}
	}
	var out []postModel
	// Thresholds in standard deviations of the summed noise; 0 and λ = 0
	// keep the topics as released.
	for _, t := range []float64{0, 1, 2, 3} {
		if t > 0 && std == 0 {
			break
		}
		kept := make([]float64, len(counts))
		uni := make([]float64, m.V)
		var uniSum float64
		for i, c := range counts {
			if c > t*std {
				kept[i] = c
				uni[i%m.V] += c
				uniSum += c
			}
		}
		for _, lambda := range []float64{0, 0.1, 0.3} {
			pm := &topic.Model{Phi: make([]float64, len(counts)), K: m.K, V: m.V, Vocab: m.Vocab, Alpha: m.Alpha, Beta: m.Beta, Prov: m.Prov}
			for k := range m.K {
				row := pm.Phi[k*m.V : (k+1)*m.V]
				var s float64
				for w := range row {
					row[w] = kept[k*m.V+w] + r.Beta
					s += row[w]
				}
				for w := range row {
					row[w] = (1-lambda)*row[w]/s + lambda*(uni[w]+r.Beta)/(uniSum+r.Beta*float64(m.V))
				}
			}
			out = append(out, postModel{setting: map[string]any{"threshold_std": t, "unigram_weight": lambda, "noise_std_sum": std}, model: pm})
		}
	}
	return out, nil
}
