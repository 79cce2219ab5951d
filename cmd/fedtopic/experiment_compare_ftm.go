package main

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/privacy"
)

// defaultFTMMaxNoise is compare's default cap on the expected number of
// noise entries a token's privatized count vector keeps (--ftm-max-noise).
// At FTM's default threshold and a small ε per word occurrence, a token of
// a 12,000-word vocabulary keeps about 5,000 entries that are pure noise,
// and a round takes minutes; 1,000 keeps a run on 100,000 short documents
// within minutes.
const defaultFTMMaxNoise = 1000

// ftmThreshold is the threshold τ compare runs FTM with, and what it
// leaves in a token's privatized vector.
type ftmThreshold struct {
	tau        float64 // τ
	defaultTau float64 // FTM's own default at the same ε and V (ftm.AutoTau)
	noise      float64 // expected noise entries per token: q·(V − 1)
}

// ftmTau chooses FTM's threshold for ε per word occurrence over a
// vocabulary of v words: FTM's default (ftm.AutoTau), raised where needed
// so that a token's vector keeps at most maxNoise noise entries in
// expectation. An entry with true count 0 survives with probability
// q ≈ ½·e^(−ε·τ), so the cap asks τ ≥ ln(V/(2·maxNoise))/ε; τ then rises
// by the mechanism's grid step until the mechanism's own q meets it
// exactly. τ depends only on ε, V and the cap, all fixed before any data
// is seen, and the mechanism's cost does not depend on τ (thresholding is
// post-processing of the Laplace noise), so the choice costs no privacy.
// τ is never lowered below FTM's default.
func ftmTau(eps float64, v int, maxNoise float64) (ftmThreshold, error) {
	if !(eps > 0) || math.IsInf(eps, 0) || v < 2 || !(maxNoise >= 1) || math.IsInf(maxNoise, 0) {
		return ftmThreshold{}, fmt.Errorf("ftm threshold: ε = %v per word, V = %d, cap %v: want ε > 0, V ≥ 2 and a finite cap ≥ 1", eps, v, maxNoise)
	}
	th := ftmThreshold{defaultTau: ftm.AutoTau(eps, v)}
	th.tau = th.defaultTau
	if need := math.Log(float64(v)/(2*maxNoise)) / eps; need > th.tau {
		th.tau = need
	}
	// Each step raises k₀ by one grid step and divides q by e^(ε·g) > 1;
	// the continuous estimate is within a step of the exact τ.
	for range 64 {
		m, err := privacy.NewThresholdedLaplace(privacy.ThresholdedLaplaceConfig{Epsilon: eps, Threshold: th.tau, Vocab: v})
		if err != nil {
			return ftmThreshold{}, fmt.Errorf("ftm threshold: %w", err)
		}
		th.noise = m.SurvivalProb() * float64(v-1)
		if th.noise <= maxNoise {
			return th, nil
		}
		th.tau += m.Granularity()
	}
	return ftmThreshold{}, fmt.Errorf("ftm threshold: no τ keeps %v noise entries per token at ε = %v per word, V = %d", maxNoise, eps, v)
}

// registerFTMMaxNoise registers --ftm-max-noise, the cap of ftmTau, on
// fs into p (compare and e8 share it).
func registerFTMMaxNoise(fs *pflag.FlagSet, p *float64) {
	fs.Float64Var(p, "ftm-max-noise", defaultFTMMaxNoise, "FTM: the most noise entries a token's privatized vector keeps in expectation; where FTM's default threshold τ leaves more (at a small ε per word occurrence), τ is raised to ln(V/(2·cap))/ε, a public setting that costs nothing")
}

// checkFTMMaxNoise checks --ftm-max-noise.
func checkFTMMaxNoise(v float64) error {
	if !(v >= 1) || math.IsInf(v, 0) {
		return usagef("--ftm-max-noise %v: want a finite number of entries ≥ 1", v)
	}
	return nil
}

// ftmParams builds FTM's parameters: the knob is ε per word occurrence,
// and τ is set by ftmTau from it, the vocabulary's size and
// --ftm-max-noise.
func ftmParams(c *compareRun, x float64, r int, noNoise bool) (any, error) {
	cfg := ftm.Config{Topics: []int{c.f.topics}, Epsilon: x, Rounds: r, MaxDocTokens: c.maxLen, Debias: ftm.DebiasOutput,
		Unit: ftm.UnitDocument, Workers: c.x.workers, NoNoise: noNoise}
	if noNoise {
		cfg.Epsilon, cfg.Unit, cfg.Debias = 0, "", ""
		return cfg, cfg.Validate()
	}
	th, err := ftmTau(x, len(c.x.data.vocab), c.f.ftmMaxNoise)
	if err != nil {
		return nil, err
	}
	cfg.Tau = &th.tau
	return cfg, cfg.Validate()
}

// ftmNote returns the fields an FTM line records beside its params: the
// threshold τ it ran with, FTM's default at the same ε, and the expected
// noise entries per token at τ. Nothing without noise.
func ftmNote(c *compareRun, params json.RawMessage) (map[string]any, error) {
	cfg, err := ftm.ParseConfig(params)
	if err != nil || cfg.NoNoise || cfg.Tau == nil {
		return nil, err
	}
	v := len(c.x.data.vocab)
	noise, err := ftmNoiseEntries(cfg.Epsilon, *cfg.Tau, v)
	if err != nil {
		return nil, err
	}
	return map[string]any{"tau": *cfg.Tau, "tau_default": ftm.AutoTau(cfg.Epsilon, v), "noise_entries_per_token": noise}, nil
}

// ftmNoiseEntries returns the expected number of entries of a token's
// privatized vector that are pure noise, q·(V − 1), at ε per word
// occurrence and threshold τ over v words.
func ftmNoiseEntries(eps, tau float64, v int) (float64, error) {
	m, err := privacy.NewThresholdedLaplace(privacy.ThresholdedLaplaceConfig{Epsilon: eps, Threshold: tau, Vocab: v})
	if err != nil {
		return 0, fmt.Errorf("ftm threshold: %w", err)
	}
	return m.SurvivalProb() * float64(v-1), nil
}
