package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/pflag"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/ftm"
)

// defaultMaxDocLength is FTM's default clip of a document, in tokens: about
// the 95th percentile of the lengths of short texts (a WordNet gloss has 9
// tokens on average after stop words). Longer documents lose their tail;
// corpora of long documents should raise it and pay for it.
const defaultMaxDocLength = 30

// ftmFlags are FTM's and iFTM's own simulate flags.
type ftmFlags struct {
	tau        string
	model      string
	debias     string
	localIters int
	topL       int
	xi         float64
	noNoise    bool
}

func (f *ftmFlags) register(fs *pflag.FlagSet) []string {
	fs.StringVar(&f.tau, "tau", "auto", "ftm: threshold τ; privatized counts ≤ τ are set to zero. auto: ln(V/2)/ε within [0.2, 1 − 1/ε], which leaves about one noise entry per token; 0.2 is the papers' value")
	fs.StringVar(&f.model, "model", ftm.ModelLDA, "ftm: lda (FTM) or slda (iFTM's SentenceLDA: one topic per sentence)")
	fs.StringVar(&f.debias, "debias", "", "ftm: subtract the expected noise mass from the topic-word counts: output (the models sent and reported only) or draw (also before every Dirichlet draw; docs/methods.md)")
	fs.IntVar(&f.localIters, "local-iterations", ftm.DefaultLocalIterations, "ftm: sampler sweeps per party and round")
	fs.IntVar(&f.topL, "top-l", ftm.DefaultTopL, "ftm: L, the top words of a topic compared by the similarity ρ")
	fs.Float64Var(&f.xi, "xi", ftm.DefaultXi, "ftm: ξ, the similarity at which two topics are merged or substituted")
	fs.BoolVar(&f.noNoise, "no-noise", false, "ftm: no privatization (ε = ∞), for baselines only")
	return []string{"tau", "model", "debias", "local-iterations", "top-l", "xi", "no-noise"}
}

// config returns FTM's parameters from the flags and the common settings.
// With noise, parties report their spend per document (group privacy over
// --max-doc-length), the unit every party's ledger counts.
func (f *ftmFlags) config(s simSettings) (ftm.Config, error) {
	var cfg ftm.Config
	if len(s.ks) != 1 && len(s.ks) != s.parties {
		return cfg, usagef("--topics %s: %d values for %d parties; give one for all or one per party", joinList(s.ks), len(s.ks), s.parties)
	}
	if s.extra != "" {
		if err := json.Unmarshal([]byte(s.extra), &cfg); err != nil {
			return cfg, usagef("--params: not FTM parameters: %v", err)
		}
	}
	fs := s.cmd.Flags()
	eps, _ := fs.GetFloat64("epsilon")
	maxLen, _ := fs.GetInt("max-doc-length")
	if !s.changed("max-doc-length") {
		maxLen = defaultMaxDocLength
	}
	cfg.Topics, cfg.Rounds = s.ks, s.rounds
	cfg.Epsilon, cfg.Model, cfg.Debias = eps, f.model, f.debias
	if f.tau != "auto" {
		tau, err := strconv.ParseFloat(f.tau, 64)
		if err != nil {
			return cfg, usagef("--tau %q: want a number ≥ 0 or auto", f.tau)
		}
		cfg.Tau = &tau
	}
	cfg.LocalIterations, cfg.TopL, cfg.Xi = f.localIters, f.topL, f.xi
	cfg.MaxDocTokens, cfg.NoNoise = maxLen, f.noNoise
	if s.changed("alpha") {
		cfg.Alpha = s.alpha
	}
	if s.changed("beta") {
		cfg.Beta = s.beta
	}
	if s.changed("workers") {
		cfg.Workers = s.workers
	}
	if !cfg.NoNoise {
		cfg.Unit = ftm.UnitDocument // simulate checked --max-doc-length ≥ 1
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// ftmMethod is FTM and iFTM.
func ftmMethod() *method {
	var f ftmFlags
	parse := func(params json.RawMessage) ftm.Config {
		cfg, _ := ftm.ParseConfig(params)
		return cfg
	}
	return &method{
		alg: ftm.Algorithm,
		summary: "ftm (Federated Topic Modeling, Jiang et al. 2019, and with --model slda iFTM's SentenceLDA: each party privatizes its tokens once with thresholded " +
			"Laplace noise, trains locally by private Metropolis–Hastings and sends its topic-normalized model; the coordinator merges similar topics and " +
			"sends each party a composed model; --epsilon, --tau, --topics 40,50,60)",
		rounds: ftm.DefaultRounds,
		preflight: func(params json.RawMessage, v int) ([]string, error) {
			n, err := ftmNoiseNote(parse(params), v)
			if n == "" || err != nil {
				return nil, err
			}
			return []string{n}, nil
		},
		maxK:      ftm.MaxTopics,
		perPartyK: true,
		flags:     f.register,
		reads:     []string{"epsilon", "max-doc-length"},
		params: func(s simSettings) (json.RawMessage, map[string]string, error) {
			cfg, err := f.config(s)
			if err != nil {
				return nil, nil, err
			}
			return configParams(cfg)
		},
		cost: func(params json.RawMessage, knobs costKnobs) ([]costPart, error) {
			cfg, err := ftm.ParseConfig(params)
			if err != nil {
				return nil, err
			}
			p, err := ftmCost(cfg, knobs("epsilon"), knobs("max-doc-length"))
			if err != nil || p.events == nil {
				return nil, err
			}
			return []costPart{p}, nil
		},
		statement: func(st *fed.Statement, params json.RawMessage, v int) { ftmStatement(st, parse(params), v) },
		model: func(params json.RawMessage) string {
			if m := parse(params).Model; m != "" {
				return m
			}
			return ftm.ModelLDA
		},
		deploy: ftmDeployParams,
	}
}

// ftmDeployParams completes FTM's params of a deployment's configuration
// file as simulate does: with noise, the parties report per document.
func ftmDeployParams(path string, params map[string]any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: params: %w", path, err)
	}
	cfg, err := ftm.ParseConfig(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: params: %w", path, err)
	}
	if !cfg.NoNoise {
		if err := checkDocumentUnit(path, ftm.Name, cfg.MaxDocTokens, cfg.Unit, defaultMaxDocLength); err != nil {
			return nil, err
		}
		cfg.Unit = ftm.UnitDocument
	}
	return json.Marshal(cfg)
}

// ftmStatement adds what FTM releases to a run's privacy statement, for a
// shared vocabulary of v words.
func ftmStatement(st *fed.Statement, cfg ftm.Config, v int) {
	if cfg.NoNoise {
		st.Released = append(st.Released, "topic-normalized local topic-word counts of every party in every round, without noise (--no-noise: no privacy)")
		st.Notes = append(st.Notes, "--no-noise: FTM ran without privatization; its models carry no privacy guarantee.")
		return
	}
	eps := cfg.Epsilon
	if eps == 0 {
		eps = ftm.DefaultEpsilon
	}
	tau := ftm.AutoTau(eps, v)
	if cfg.Tau != nil {
		tau = *cfg.Tau
	}
	if st.Unit == "" {
		st.Unit = ftm.UnitWord
		st.Neighbouring = "one token's count vector gains or loses its word (the papers' include/exclude adjacency)"
	}
	st.Released = append(st.Released,
		fmt.Sprintf("nothing raw: every token's (or sentence's) count vector over the vocabulary is privatized once, before round 1, with Laplace(1/ε) noise on every entry and entries ≤ τ zeroed (ε = %g per word occurrence, τ = %.3g)", eps, tau),
		"topic-normalized local models (post-processing of the privatized counts) and each party's document count n_p, every round")
	if cfg.MaxDocTokens > 0 {
		st.Notes = append(st.Notes, fmt.Sprintf("documents were truncated to %d tokens before privatization: the cost per document is at most %s (%g per word occurrence × %d words, group privacy)", cfg.MaxDocTokens, fmtEps(eps*float64(cfg.MaxDocTokens)), eps, cfg.MaxDocTokens))
	}
	st.Notes = append(st.Notes, "not protected: the number of documents, tokens and sentences of each party and their lengths")
}

// ftmNoiseNote returns a pre-flight note for an FTM run with cfg over a
// shared vocabulary of v words when its threshold leaves a token's
// privatized vector more than defaultFTMMaxNoise noise entries in
// expectation (at a small ε per word occurrence, FTM's default τ leaves
// thousands): the sampler reads every entry, so each round is slow, and
// the entries swamp the token's own count. The note gives the expected
// entries and the --tau that keeps defaultFTMMaxNoise; τ is a public
// setting, so raising it costs no privacy. Empty when there is nothing to
// note.
func ftmNoiseNote(cfg ftm.Config, v int) (string, error) {
	if cfg.NoNoise || v < 2 {
		return "", nil
	}
	eps := cfg.Epsilon
	if eps == 0 {
		eps = ftm.DefaultEpsilon
	}
	tau, source := ftm.AutoTau(eps, v), "auto"
	if cfg.Tau != nil {
		tau, source = *cfg.Tau, "given"
	}
	noise, err := ftmNoiseEntries(eps, tau, v)
	if err != nil || noise <= defaultFTMMaxNoise {
		return "", err
	}
	th, err := ftmTau(eps, v, defaultFTMMaxNoise)
	if err != nil {
		return "", err
	}
	// The hint is rounded up, so that the τ a user types keeps no more.
	up := math.Pow(10, math.Floor(math.Log10(th.tau))-2)
	return fmt.Sprintf("ftm: at ε = %g per word occurrence and τ = %.3g (%s), each token's privatized vector keeps about %.0f noise entries of the %d words: every round samples all of them, so the run is slow and the counts are mostly noise; --tau %g keeps about %.0f (τ is a public setting: raising it costs no privacy)",
		eps, tau, source, noise, v, math.Ceil(th.tau/up)*up, th.noise), nil
}
