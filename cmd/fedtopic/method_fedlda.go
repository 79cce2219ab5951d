package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fedlda"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// fedldaFlags are FedLDA's own simulate flags.
type fedldaFlags struct {
	mechanism   string
	sampleRatio float64
	sampler     string
	truncation  float64
	gamma       float64
	mhSteps     int
	collector   string
}

func (f *fedldaFlags) register(fs *pflag.FlagSet) []string {
	fs.StringVar(&f.mechanism, "mechanism", fedlda.DefaultMechanism, "fedlda: how each sent tuple's word is perturbed: krr (exact ε-LDP), tkrr (kRR over the truncated vocabulary, exact ε-LDP), rrp (the paper's RRP: (ε, 2δ) per tuple only under a Zipf assumption) or none (no privacy)")
	fs.Float64Var(&f.sampleRatio, "sample-ratio", fedlda.DefaultSampleRatio, "fedlda: r, the fraction of a user's M padded tuples sent per iteration (l = ⌈r·M⌉ tuples, each costing --epsilon)")
	fs.StringVar(&f.sampler, "sampler", fedlda.DefaultSampler, "fedlda: gibbs (collapsed Gibbs, O(K) per token) or mh (Metropolis–Hastings with alias tables, O(1) per token)")
	fs.Float64Var(&f.truncation, "truncation", fedlda.DefaultTruncation, "fedlda: δ, the tail mass of each topic (rrp) or of the word distribution (tkrr) never reported as a replacement word; rrp's guarantee is (ε, 2δ) per tuple")
	fs.Float64Var(&f.gamma, "gamma", fedlda.DefaultGamma, "fedlda: γ ≥ 1 of rrp's Zipf assumption (the paper's Theorem 1)")
	fs.IntVar(&f.mhSteps, "mh-steps", fedlda.DefaultMHSteps, "fedlda: Metropolis–Hastings steps per token with --sampler mh")
	fs.StringVar(&f.collector, "collector", fedlda.CollectorClip, "fedlda: when a tuple's −1 finds no count at (old topic, word): clip (clip the −1 at 0, apply the +1) or drop (drop the tuple, as the public FedLDA code does; its word was perturbed). Free in privacy; drop cannot run with --secure-aggregation")
	return []string{"mechanism", "sample-ratio", "sampler", "truncation", "gamma", "mh-steps", "collector"}
}

// config returns FedLDA's parameters from the flags and the common
// settings: --epsilon is ε per tuple, --max-doc-length the padding length
// M (longer documents are truncated).
func (f *fedldaFlags) config(s simSettings) (fedlda.Config, error) {
	var cfg fedlda.Config
	if s.extra != "" {
		if err := json.Unmarshal([]byte(s.extra), &cfg); err != nil {
			return cfg, usagef("--params: not FedLDA parameters: %v", err)
		}
	}
	fs := s.cmd.Flags()
	eps, _ := fs.GetFloat64("epsilon")
	m, _ := fs.GetInt("max-doc-length")
	if s.changed("max-doc-length") && m < 1 {
		return cfg, usagef("--max-doc-length %d: want the padding length M ≥ 1 (default %d)", m, fedlda.DefaultMaxDocTokens)
	}
	cfg.K, cfg.Rounds = s.ks[0], s.rounds
	cfg.Epsilon, cfg.MaxDocTokens = eps, m
	cfg.Mechanism, cfg.SampleRatio, cfg.Sampler = f.mechanism, f.sampleRatio, f.sampler
	cfg.Truncation, cfg.Gamma, cfg.MHSteps, cfg.Collector = f.truncation, f.gamma, f.mhSteps, f.collector
	if secure, _ := fs.GetBool("secure-aggregation"); secure && cfg.Collector == fedlda.CollectorDrop {
		return cfg, usagef("--collector %s needs every tuple, and with --secure-aggregation the collector sees only summed counts: use --collector %s", fedlda.CollectorDrop, fedlda.CollectorClip)
	}
	if s.changed("alpha") {
		cfg.Alpha = s.alpha
	}
	if s.changed("beta") {
		cfg.Beta = s.beta
	}
	if s.changed("workers") {
		cfg.Workers = s.workers
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// fedldaMethod is FedLDA.
func fedldaMethod() *method {
	var f fedldaFlags
	parse := func(params json.RawMessage) fedlda.Config {
		cfg, _ := fedlda.ParseConfig(params)
		return cfg
	}
	return &method{
		alg: fedlda.Algorithm,
		summary: "fedlda (FedLDA, Wang et al. 2020: local differential privacy, every document one user; each user re-samples its topics against the collector's φ, " +
			"pads its topic-change tuples to --max-doc-length, sends l = ⌈r·M⌉ of them with the word perturbed by --mechanism krr, tkrr or rrp; " +
			"--epsilon per tuple, T·l·ε per user)",
		rounds: fedlda.DefaultRounds,
		maxK:   fedlda.MaxK,
		flags:  f.register,
		reads:  []string{"epsilon", "max-doc-length"},
		params: func(s simSettings) (json.RawMessage, map[string]string, error) {
			cfg, err := f.config(s)
			if err != nil {
				return nil, nil, err
			}
			return configParams(cfg)
		},
		cost: func(params json.RawMessage, knobs costKnobs) ([]costPart, error) {
			cfg, err := fedlda.ParseConfig(params)
			if err != nil {
				return nil, err
			}
			p, err := fedldaCost(cfg, knobs)
			if err != nil || p.events == nil {
				return nil, err
			}
			return []costPart{p}, nil
		},
		statement: func(st *fed.Statement, params json.RawMessage, v int) { fedldaStatement(st, parse(params), v) },
		model:     func(json.RawMessage) string { return "lda" },
		deploy: func(path string, params map[string]any) (json.RawMessage, error) {
			return checkedParams(path, params, fedlda.ParseConfig)
		},
	}
}

// fedldaCost is FedLDA's part of a plan: every iteration's events
// (fedlda.Config.Events, the same the learners charge), T times. The unit
// is the user, who holds one document, so the ledger's document unit is
// exact. RRP's per-tuple δ adds up over the T·l tuples too; a run whose
// total δ reaches 1 has no guarantee and is refused.
func fedldaCost(cfg fedlda.Config, knobs costKnobs) (costPart, error) {
	ev, err := cfg.Events()
	if err != nil || len(ev) == 0 {
		return costPart{}, err
	}
	d := cfg.WithDefaults()
	for i := range ev {
		ev[i].Count *= d.Rounds
	}
	c, err := accountant.Compose(ev, 0)
	if err != nil {
		return costPart{}, err
	}
	if c.Delta >= 1 {
		return costPart{}, fmt.Errorf("fedlda: rrp: the run's δ = T·l·2δ = %d·%d·2·%g = %.3g ≥ 1: by basic composition RRP gives no guarantee at this setting; lower %s (a total δ of at most 1e-5 needs δ ≤ %.2g), or use --mechanism krr",
			d.Rounds, d.Tuples(), d.Truncation, c.Delta, knobs("truncation"), 1e-5/float64(2*d.Rounds*d.Tuples()))
	}
	return costPart{release: fmt.Sprintf("perturbed tuples (%s per tuple × l = %d tuples × T = %d iterations)", fmtEps(d.Epsilon), d.Tuples(), d.Rounds),
		events: ev, knobs: []string{knobs("epsilon"), knobs("sample-ratio"), knobs("max-doc-length"), knobs("rounds")}}, nil
}

// fedldaStatement adds what FedLDA releases to a run's privacy statement.
func fedldaStatement(st *fed.Statement, cfg fedlda.Config, v int) {
	d := cfg.WithDefaults()
	l := d.Tuples()
	if d.Mechanism == fedlda.MechanismNone {
		st.Released = append(st.Released, "every user's topic-change tuples (word, old topic, new topic) in every iteration, without perturbation (--mechanism none: no privacy)")
		st.Notes = append(st.Notes, "--mechanism none: FedLDA ran without perturbation; its model carries no privacy guarantee.")
		return
	}
	if st.Unit == "" {
		st.Unit = "document"
		st.Neighbouring = "one user (one document) replaced by any other: local differential privacy, each user's tuples perturbed before they leave"
	}
	var how string
	switch d.Mechanism {
	case fedlda.MechanismKRR:
		how = fmt.Sprintf("kRR over the %d words (exact ε-LDP per tuple)", v)
	case fedlda.MechanismTKRR:
		how = fmt.Sprintf("kRR over the words covering 1 − %g of the collector's word distribution (exact ε-LDP per tuple)", d.Truncation)
	case fedlda.MechanismRRP:
		how = fmt.Sprintf("RRP (η = %.3g, δ = %g, γ = %g: (ε, 2δ) per tuple, conditional on the Zipf assumption)", d.Eta(), d.Truncation, d.Gamma)
	}
	st.Released = append(st.Released,
		fmt.Sprintf("every user, every iteration: l = %d tuples (word, old topic, new topic) sampled from its changes padded to M = %d, each word perturbed by %s at ε = %g per tuple", l, d.MaxDocTokens, how, d.Epsilon))
	st.Notes = append(st.Notes,
		fmt.Sprintf("per user (one document): ε = %g per tuple, %s per iteration (l·ε), %s over the run (T·l·ε, basic composition); the paper divides by l within an iteration only", d.Epsilon, fmtEps(float64(l)*d.Epsilon), fmtEps(float64(d.Rounds*l)*d.Epsilon)),
		"not protected: the tuples' topics (old and new) travel in the clear, as in the paper, so the collector sees which sent tuples are padding and how many of a user's topics changed; documents are truncated to M tokens")
	if d.Mechanism == fedlda.MechanismRRP {
		st.Notes = append(st.Notes, "RRP's guarantee is conditional: "+privacy.RRPAssumption)
	}
}
