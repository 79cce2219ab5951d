package main

import "github.com/fedtopic/fedtopic/ftm"

// ftmParams builds FTM's parameters: the knob is ε per word occurrence.
func ftmParams(c *compareRun, x float64, r int, noNoise bool) (any, error) {
	cfg := ftm.Config{Topics: []int{c.f.topics}, Epsilon: x, Rounds: r, MaxDocTokens: c.maxLen, Debias: ftm.DebiasOutput,
		Unit: ftm.UnitDocument, Workers: c.x.workers, NoNoise: noNoise}
	if noNoise {
		cfg.Epsilon, cfg.Unit, cfg.Debias = 0, "", ""
	}
	return cfg, cfg.Validate()
}
