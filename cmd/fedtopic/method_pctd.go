package main

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/spf13/pflag"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// pctdDefaultMaxDocLength is PC-TD's default clip of a document, in
// tokens: it is the sensitivity of a document, so the SSP noise grows with
// it. 30 keeps about 99% of the WordNet glosses whole (9 tokens on average).
const pctdDefaultMaxDocLength = 30

// pctdFlags are PC-TD's own simulate flags.
type pctdFlags struct {
	variant     string
	sigma       float64
	embeddings  string
	relationTau float64
	noisePath   string
}

func (f *pctdFlags) register(fs *pflag.FlagSet) []string {
	fs.StringVar(&f.variant, "variant", pctd.DefaultVariant, "pctd: ssp (Gaussian noise once per party and iteration on M_t; honest budgets) or unit (the paper's noise on every semantic unit's counts in every iteration)")
	fs.Float64Var(&f.sigma, "sigma", 0, "pctd: the noise instead of --epsilon: with --variant unit the standard deviation on every count (the paper's 0.25), with ssp the noise multiplier (standard deviation on M_t / √--max-doc-length)")
	fs.StringVar(&f.embeddings, "embeddings", "", "pctd: word2vec or GloVe text vectors for the word-relation step (fedtopic embed makes them); read by the coordinator")
	fs.Float64Var(&f.relationTau, "relation-tau", pctd.DefaultRelTau, "pctd: τ, the weight of the word-relation step (with --embeddings)")
	fs.StringVar(&f.noisePath, "noise-path", pctd.PathFast, "pctd: fast (exact in distribution, O(units·K²)) or literal (noise on all V entries of every unit, O(units·V·K); a reference for small vocabularies)")
	return []string{"variant", "sigma", "embeddings", "relation-tau", "noise-path"}
}

// config returns PC-TD's parameters from the flags and the common
// settings. With noise, parties report their spend per document.
func (f *pctdFlags) config(s simSettings) (pctd.Config, error) {
	var cfg pctd.Config
	if len(s.ks) != 1 {
		return cfg, usagef("--topics %s: pctd takes one number of topics", joinList(s.ks))
	}
	if s.extra != "" {
		if err := json.Unmarshal([]byte(s.extra), &cfg); err != nil {
			return cfg, usagef("--params: not PC-TD parameters: %v", err)
		}
	}
	fs := s.cmd.Flags()
	cfg.Topics, cfg.Rounds, cfg.Variant = s.ks[0], s.rounds, f.variant
	if s.changed("epsilon") {
		cfg.Epsilon, _ = fs.GetFloat64("epsilon")
	}
	if s.changed("sigma") {
		if s.changed("epsilon") {
			return cfg, usagef("--sigma and --epsilon: give one (--epsilon calibrates the noise)")
		}
		cfg.Sigma = f.sigma
	}
	if f.variant == pctd.VariantUnit && cfg.Sigma == 0 && cfg.Epsilon == 0 {
		cfg.Sigma = pctd.PaperSigma
	}
	cfg.MaxDocTokens = pctdDefaultMaxDocLength
	if s.changed("max-doc-length") {
		cfg.MaxDocTokens, _ = fs.GetInt("max-doc-length")
	}
	if s.changed("units") {
		cfg.Units = pctd.UnitsCorpus // the corpus is cut as --units says
	}
	cfg.Embeddings, cfg.NoisePath = f.embeddings, f.noisePath
	if cfg.Embeddings != "" {
		cfg.RelationTau = f.relationTau
	}
	if s.changed("workers") {
		cfg.Workers = s.workers
	}
	if on, _ := fs.GetBool("secure-aggregation"); on {
		// Under secure aggregation the noise is distributed: each party
		// adds a t-th of its variance (pctd/secure.go).
		cfg.SecureThreshold = s.parties
		if t, _ := fs.GetInt("threshold"); s.changed("threshold") {
			cfg.SecureThreshold = t
		}
	}
	if !cfg.NoNoise {
		cfg.Unit = pctd.UnitDocument // simulate checked --max-doc-length ≥ 1
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// pctdMethod is PC-TD.
func pctdMethod() *method {
	var f pctdFlags
	parse := func(params json.RawMessage) pctd.Config {
		cfg, _ := pctd.ParseConfig(params)
		return cfg
	}
	return &method{
		alg: pctd.Algorithm,
		summary: "pctd (PC-TD, Shi et al. 2020: federated EM over semantic units, window:3 inside sentences by default; each party sends M_t every iteration " +
			"and the coordinator normalizes, with --embeddings a word-relation step; --variant ssp (default) adds Gaussian noise once to M_t at a " +
			"document-level --epsilon (default 10), --variant unit the paper's noise on every unit's counts, --sigma 0.25)",
		rounds: pctd.DefaultRounds,
		maxK:   pctd.MaxTopics,
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
			cfg, err := pctd.ParseConfig(params)
			if err != nil {
				return nil, err
			}
			p, err := pctdCost(cfg, knobs)
			if err != nil || p.events == nil {
				return nil, err
			}
			return []costPart{p}, nil
		},
		statement: func(st *fed.Statement, params json.RawMessage, _ int) { pctdStatement(st, parse(params)) },
		deploy:    pctdDeployParams,
		model:     func(json.RawMessage) string { return "pctd" },
	}
}

// pctdCost is PC-TD's part of a plan: Rounds Gaussian releases of M_t per
// party, at the document level; for the unit variant also ε per word
// occurrence, the paper's unit.
func pctdCost(cfg pctd.Config, knobs costKnobs) (costPart, error) {
	ev, err := cfg.Events()
	if err != nil || len(ev) == 0 {
		return costPart{}, err
	}
	r := cfg.Resolved()
	p := costPart{events: ev, knobs: []string{knobs("epsilon"), knobs("rounds"), knobs("max-doc-length")}}
	switch r.Variant {
	case pctd.VariantSSP:
		p.release = fmt.Sprintf("PC-TD SSP (noise std %.4g on M_t, %d iterations)", r.NoiseStd(), r.Rounds)
		if g := r.ScheduleGrowth; g != 0 && g != 1 {
			p.release = fmt.Sprintf("PC-TD SSP (noise std on M_t from %.4g in iteration 1 to %.4g in iteration %d, schedule growth %g)", r.NoiseStdAt(1), r.NoiseStdAt(r.Rounds), r.Rounds, g)
		}
	default:
		p.release = fmt.Sprintf("PC-TD noisy unit counts (σ = %.4g, %d iterations)", r.Sigma, r.Rounds)
		w, err := accountant.Compose(cfg.WordEvents(), r.Delta)
		if err != nil {
			return costPart{}, err
		}
		p.methodUnit, p.methodEpsilon, p.group = pctd.UnitWord, w.Epsilon, r.MaxDocTokens
	}
	return p, nil
}

// pctdStatement adds what PC-TD releases to a run's privacy statement.
func pctdStatement(st *fed.Statement, cfg pctd.Config) {
	r := cfg.Resolved()
	if r.NoNoise {
		st.Released = append(st.Released, "M_t of every party in every EM iteration, without noise (no privacy)")
		st.Notes = append(st.Notes, "no_noise: PC-TD ran without noise; its models carry no privacy guarantee.")
		return
	}
	switch r.Variant {
	case pctd.VariantSSP:
		sens := math.Sqrt(float64(r.MaxDocTokens))
		if t := r.SecureThreshold; t > 0 {
			st.Released = append(st.Released, fmt.Sprintf("every iteration, only the sum over the surviving parties (at least %d, secure aggregation) of their M_t = Σ_u N_u·r_uᵀ (V×K), each computed from exact counts on a grid of step 2^-%d, plus each party's share of distributed noise: a discrete Gaussian of standard deviation %.4g/√%d = %.4g on every entry, so the sum carries at least %.4g (σ = %.4g × sensitivity √%d)", t, pctd.SecureFracBits, r.NoiseStd(), t, r.NoiseStd()/math.Sqrt(float64(t)), r.NoiseStd(), r.Sigma, r.MaxDocTokens))
			st.Notes = append(st.Notes,
				fmt.Sprintf("distributed noise: each party is charged for the worst case it accepted, exactly %d survivors, whose sum carries noise of standard deviation %.4g: per iteration a discrete Gaussian release of sensitivity √%d = %.4g per document, %d iterations composed by RDP", t, r.NoiseStd(), r.MaxDocTokens, sens, r.Rounds),
				"the SSP variant protects documents (add or remove one): a word occurrence is protected only as part of its document")
			break
		}
		st.Released = append(st.Released, fmt.Sprintf("every iteration, each party's M_t = Σ_u N_u·r_uᵀ (V×K) computed from its exact counts, plus Gaussian noise of standard deviation %.4g on every entry (SSP variant: σ = %.4g × sensitivity √%d)", r.NoiseStd(), r.Sigma, r.MaxDocTokens))
		st.Notes = append(st.Notes,
			fmt.Sprintf("SSP variant: documents are clipped so that their word counts satisfy Σ a_w² ≤ %d (at most %d tokens); removing one changes M_t by at most √%d = %.4g in Frobenius norm, so %d iterations are μ = √%d·%.4g/%.4g = %.4g GDP per document", r.MaxDocTokens, r.MaxDocTokens, r.MaxDocTokens, sens, r.Rounds, r.Rounds, sens, r.NoiseStd(), math.Sqrt(float64(r.Rounds))*sens/r.NoiseStd()),
			"the SSP variant protects documents (add or remove one): a word occurrence is protected only as part of its document")
	default:
		mu := math.Sqrt(float64(r.Rounds)) / r.Sigma
		eps, _ := accountant.GaussianEpsilon(r.Delta, mu)
		st.Released = append(st.Released, fmt.Sprintf("every iteration, each party's M_t of Eq. 10 computed from its unit counts with fresh N(0, %.4g²) noise on all V entries of every unit (the paper's mechanism)", r.Sigma))
		st.Notes = append(st.Notes,
			fmt.Sprintf("per word occurrence (the paper's unit): %d iterations at σ = %.4g are μ = √%d/σ = %.4g GDP, ε = %s at δ = %.3g%s", r.Rounds, r.Sigma, r.Rounds, mu, fmtEps(eps), r.Delta, hugeNote(eps)),
			fmt.Sprintf("per document: a document of at most %d tokens changes the unit counts by at most %d in L2 norm per iteration (group privacy), μ = %.4g GDP; the units of a document (how many) are not protected", r.MaxDocTokens, r.MaxDocTokens, mu*float64(r.MaxDocTokens)))
	}
	st.Notes = append(st.Notes, pctdOptionNotes(r)...)
	st.Notes = append(st.Notes, "not protected: the number of documents, tokens and units of each party")
}

// pctdOptionNotes states the noise schedule and the final average of a
// resolved configuration: what each changes, and that the cost is the one
// stated.
func pctdOptionNotes(r pctd.Config) []string {
	var notes []string
	if g := r.ScheduleGrowth; g != 0 && g != 1 {
		notes = append(notes, fmt.Sprintf("noise schedule (growth %g): iteration t's noise multiplier is σ/√(T·w_t) with w_t = g^(t−1)/Σ_s g^(s−1), so the noise on M_t goes from %.4g (iteration 1) to %.4g (iteration %d); Σ_t 1/σ_t² = T/σ², so the run costs what %d iterations at σ = %.4g cost, by GDP and RDP alike", g, r.NoiseStdAt(1), r.NoiseStdAt(r.Rounds), r.Rounds, r.Rounds, r.Sigma))
	}
	if r.AverageLast > 1 {
		notes = append(notes, fmt.Sprintf("the final topics come from the average of the last %d iterations' released sums of M_t, each weighted by its precision: post-processing at the coordinator, no cost", r.AverageLast))
	}
	return notes
}

// hugeNote says plainly when an ε protects nothing.
func hugeNote(eps float64) string {
	if eps > 10 {
		return ": far beyond any meaningful protection"
	}
	return ""
}

// pctdDeployParams completes PC-TD's params of a deployment's configuration
// file as simulate does: with noise, the parties report per document.
func pctdDeployParams(path string, params map[string]any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: params: %w", path, err)
	}
	cfg, err := pctd.ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: params: %w", path, err)
	}
	if !cfg.NoNoise {
		if err := checkDocumentUnit(path, pctd.Name, cfg.MaxDocTokens, cfg.Unit, pctdDefaultMaxDocLength); err != nil {
			return nil, err
		}
		cfg.Unit = pctd.UnitDocument
	}
	return json.Marshal(cfg)
}
