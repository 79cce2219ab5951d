package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/ftm"
)

// parseTopics reads --topics: one number of topics, or one per party
// separated by commas ("40,50,60").
func parseTopics(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		s = "0"
	}
	var ks []int
	for _, f := range strings.Split(s, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > ftm.MaxTopics {
			return nil, usagef("--topics %s: the number of topics must be between 1 and %d (one value, or one per party for ftm: 40,50,60)", s, ftm.MaxTopics)
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// joinInts formats ks as a comma-separated list.
func joinInts(ks []int) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = strconv.Itoa(k)
	}
	return strings.Join(s, ",")
}

// defaultMaxDocLength is FTM's default clip of a document, in tokens: about
// the 95th percentile of the lengths of short texts (a WordNet gloss has 9
// tokens on average after stop words). Longer documents lose their tail;
// corpora of long documents should raise it and pay for it.
const defaultMaxDocLength = 30

// ftmFlags are the flags that configure FTM and iFTM (simulate and the
// experiments).
type ftmFlags struct {
	epsilon      float64
	tau          string
	model        string
	debias       string
	localIters   int
	topL         int
	xi           float64
	maxDocLength int
	noNoise      bool
	flags        *pflag.FlagSet
}

// ftmFlagNames lists the flags only FTM reads.
var ftmFlagNames = []string{"epsilon", "tau", "model", "debias", "local-iterations", "top-l", "xi", "max-doc-length", "no-noise"}

func (f *ftmFlags) register(fs *pflag.FlagSet) {
	f.flags = fs
	fs.Float64Var(&f.epsilon, "epsilon", ftm.DefaultEpsilon, "ftm: ε per word occurrence of the thresholded Laplace privatization (Laplace scale 1/ε)")
	fs.StringVar(&f.tau, "tau", "auto", "ftm: threshold τ; privatized counts ≤ τ are set to zero. auto: ln(V/2)/ε within [0.2, 1 − 1/ε], which leaves about one noise entry per token; 0.2 is the papers' value")
	fs.StringVar(&f.model, "model", ftm.ModelLDA, "ftm: lda (FTM) or slda (iFTM's SentenceLDA: one topic per sentence)")
	fs.StringVar(&f.debias, "debias", "", "ftm: subtract the expected noise mass from the topic-word counts: output (the models sent and reported only) or draw (also before every Dirichlet draw, as ALGORITHMS.md §1 describes)")
	fs.IntVar(&f.localIters, "local-iterations", ftm.DefaultLocalIterations, "ftm: sampler sweeps per party and round")
	fs.IntVar(&f.topL, "top-l", ftm.DefaultTopL, "ftm: L, the top words of a topic compared by the similarity ρ")
	fs.Float64Var(&f.xi, "xi", ftm.DefaultXi, "ftm: ξ, the similarity at which two topics are merged or substituted")
	fs.IntVar(&f.maxDocLength, "max-doc-length", defaultMaxDocLength, "ftm: truncate documents to this many tokens before privatization; the cost per document is then at most this times --epsilon (group privacy)")
	fs.BoolVar(&f.noNoise, "no-noise", false, "ftm: no privatization (ε = ∞), for baselines only")
}

// check refuses FTM flags given for another algorithm.
func (f *ftmFlags) check(alg string) error {
	if alg == ftm.Name {
		return nil
	}
	for _, n := range ftmFlagNames {
		if f.flags.Changed(n) {
			return usagef("--%s applies to --algorithm ftm only", n)
		}
	}
	return nil
}

// config returns FTM's parameters from the flags and the common ones.
// With noise, parties report their spend per document (group privacy over
// --max-doc-length), the unit every party's ledger counts.
func (f *ftmFlags) config(c *cobra.Command, extra string, ks []int, parties, rounds int, alpha, beta float64, workers int) (ftm.Config, error) {
	var cfg ftm.Config
	if len(ks) != 1 && len(ks) != parties {
		return cfg, usagef("--topics %s: %d values for %d parties; give one for all or one per party", joinInts(ks), len(ks), parties)
	}
	if extra != "" {
		if err := json.Unmarshal([]byte(extra), &cfg); err != nil {
			return cfg, usagef("--params: not FTM parameters: %v", err)
		}
	}
	cfg.Topics, cfg.Rounds = ks, rounds
	cfg.Epsilon, cfg.Model, cfg.Debias = f.epsilon, f.model, f.debias
	if f.tau != "auto" {
		tau, err := strconv.ParseFloat(f.tau, 64)
		if err != nil {
			return cfg, usagef("--tau %q: want a number ≥ 0 or auto", f.tau)
		}
		cfg.Tau = &tau
	}
	cfg.LocalIterations, cfg.TopL, cfg.Xi = f.localIters, f.topL, f.xi
	cfg.MaxDocTokens, cfg.NoNoise = f.maxDocLength, f.noNoise
	changed := c.Flags().Changed
	if changed("alpha") {
		cfg.Alpha = alpha
	}
	if changed("beta") {
		cfg.Beta = beta
	}
	if changed("workers") {
		cfg.Workers = workers
	}
	if !cfg.NoNoise {
		if cfg.MaxDocTokens <= 0 {
			return cfg, usagef("--max-doc-length %d: want at least 1: the cost per document is --epsilon times the longest document's length, so documents must be truncated (try %d)", cfg.MaxDocTokens, defaultMaxDocLength)
		}
		cfg.Unit = ftm.UnitDocument
	}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

// params returns the JSON parameters and their provenance strings.
func ftmParams(cfg ftm.Config) (json.RawMessage, map[string]string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, err
	}
	prov := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		prov[key] = fmt.Sprint(m[key])
	}
	return b, prov, nil
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
