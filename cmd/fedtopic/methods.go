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
	"github.com/fedtopic/fedtopic/sim/adlda"
)

// simSettings is what simulate knows, from its common flags, before a
// method builds its parameters.
type simSettings struct {
	cmd     *cobra.Command
	extra   string // --params: further parameters as a JSON object
	ks      []int  // --topics: one K, or one per party where the method allows it
	parties int
	rounds  int
	alpha   float64
	beta    float64
	workers int
}

// changed reports whether the user set the flag called name.
func (s simSettings) changed(name string) bool { return s.cmd.Flags().Changed(name) }

// method is a federated algorithm as the command line knows it: its own
// simulate flags, how its parameters are built, and what it costs each
// party in privacy, computed from the parameters alone. Every method lives
// in its own file (method_NAME.go) and is listed in methods.
type method struct {
	alg fed.Algorithm
	// summary is one line for --help.
	summary string
	// rounds is the default number of rounds.
	rounds int
	// maxK is the most topics; perPartyK allows --topics 40,50,60.
	maxK      int
	perPartyK bool
	// flags registers the method's own simulate flags on fs and returns
	// their names; flags shared by several methods (--epsilon,
	// --max-doc-length) are registered once by sharedFlags. nil: none.
	flags func(fs *pflag.FlagSet) []string
	// reads names the shared flags the method reads.
	reads []string
	// params builds the algorithm's JSON parameters and their provenance
	// strings.
	params func(s simSettings) (json.RawMessage, map[string]string, error)
	// cost returns what one party releases over a whole run with params,
	// at the document level, before any data is seen; nil for a method
	// that makes no noised release.
	cost func(params json.RawMessage, knobs costKnobs) ([]costPart, error)
	// statement adds what the method releases to a run's privacy
	// statement, for a shared vocabulary of v words.
	statement func(st *fed.Statement, params json.RawMessage, v int)
	// model names the model family in the run record ("lda", "slda").
	model func(params json.RawMessage) string
	// deploy completes and checks a deployment's params (the
	// configuration file's params map, read from path) the way params
	// does for simulate: every party's ledger counts per document. nil:
	// the params are used as given.
	deploy func(path string, params map[string]any) (json.RawMessage, error)
	// preflight returns notes on params for a shared vocabulary of v
	// words that simulate prints before the run starts (a setting that
	// makes the run slow, say). nil: none.
	preflight func(params json.RawMessage, v int) ([]string, error)
}

// costKnobs names the settings that lower a method's cost as the user
// sets them: flags for simulate, configuration fields for a deployment.
type costKnobs func(flag string) string

// flagKnobs names simulate's flags as they are.
func flagKnobs(flag string) string { return "--" + flag }

// methods lists every federated algorithm simulate, coordinator and party
// can run. The list is built anew for each command, since a method's
// flags are bound to its own variables.
func methods() []*method {
	return []*method{adldaMethod(), ftmMethod(), fedldaMethod(), pctdMethod(), fednmfMethod()}
}

// federatedAlgorithms lists the algorithms simulate, coordinator and party
// can run, by name.
func federatedAlgorithms() []fed.Algorithm {
	var algs []fed.Algorithm
	for _, m := range methods() {
		algs = append(algs, m.alg)
	}
	return algs
}

// lookupMethod returns the method called name among ms.
func lookupMethod(ms []*method, name string) (*method, error) {
	var names []string
	for _, m := range ms {
		if m.alg.Name == name {
			return m, nil
		}
		names = append(names, m.alg.Name)
	}
	return nil, usagef("--algorithm %q: unknown; choose one of %s", name, strings.Join(names, ", "))
}

// methodNames lists the methods' names.
func methodNames(ms []*method) []string {
	var names []string
	for _, m := range ms {
		names = append(names, m.alg.Name)
	}
	return names
}

// methodRounds says each method's default number of rounds: "50 for
// adlda, 5 for ftm".
func methodRounds(ms []*method) string {
	var s []string
	for _, m := range ms {
		s = append(s, fmt.Sprintf("%d for %s", m.rounds, m.alg.Name))
	}
	return strings.Join(s, ", ")
}

// methodHelp lists the methods' summaries for --help, wrapped at 76
// columns.
func methodHelp(ms []*method) string {
	var b strings.Builder
	for i, m := range ms {
		if i > 0 {
			b.WriteString("\n")
		}
		col := 0
		for j, w := range strings.Fields(m.summary) {
			switch {
			case j == 0:
				b.WriteString("  ")
				col = 2
			case col+1+len([]rune(w)) > 76:
				b.WriteString("\n    ")
				col = 4
			default:
				b.WriteString(" ")
				col++
			}
			b.WriteString(w)
			col += len([]rune(w))
		}
	}
	return b.String()
}

// lookupAlgorithm returns the algorithm called name.
func lookupAlgorithm(name string) (fed.Algorithm, error) {
	m, err := lookupMethod(methods(), name)
	if err != nil {
		return fed.Algorithm{}, err
	}
	return m.alg, nil
}

// sharedFlags are flags several methods read, each with its own default
// where the flag is not given.
func registerSharedFlags(fs *pflag.FlagSet) []string {
	fs.Float64("epsilon", 0, "ε of the method's noise, per its own unit: ftm per word occurrence (default 11); pctd per document over the whole run (default 10, the ssp variant); fedlda per tuple (default 10)")
	fs.Int("max-doc-length", 0, "truncate documents to this many tokens before any release, which bounds the cost per document: ftm default 30 (the cost per document is at most this times --epsilon); pctd default 30; fedlda: the padding length M, default 20")
	return []string{"epsilon", "max-doc-length"}
}

// methodFlags registers every method's flags on fs and returns, for each
// flag name, the methods that read it.
func methodFlags(fs *pflag.FlagSet, ms []*method) map[string][]string {
	owners := map[string][]string{}
	for _, name := range registerSharedFlags(fs) {
		owners[name] = nil
	}
	for _, m := range ms {
		for _, name := range m.reads {
			owners[name] = append(owners[name], m.alg.Name)
		}
		if m.flags == nil {
			continue
		}
		for _, name := range m.flags(fs) {
			owners[name] = append(owners[name], m.alg.Name)
		}
	}
	return owners
}

// checkMethodFlags refuses a flag given for a method that does not read
// it, naming the methods that do.
func checkMethodFlags(c *cobra.Command, owners map[string][]string, alg string) error {
	for _, name := range slices.Sorted(maps.Keys(owners)) {
		algs := owners[name]
		if c.Flags().Changed(name) && !slices.Contains(algs, alg) {
			return usagef("--%s applies to --algorithm %s only", name, strings.Join(algs, " or "))
		}
	}
	return nil
}

// commonParams merges the common settings into a method's JSON parameters:
// k and rounds always, the others only when given.
func commonParams(s simSettings) (json.RawMessage, map[string]string, error) {
	m := map[string]any{}
	if s.extra != "" {
		if err := json.Unmarshal([]byte(s.extra), &m); err != nil {
			return nil, nil, usagef("--params: not a JSON object: %v", err)
		}
	}
	m["k"], m["rounds"] = s.ks[0], s.rounds
	if s.changed("alpha") {
		m["alpha"] = s.alpha
	}
	if s.changed("beta") {
		m["beta"] = s.beta
	}
	if s.changed("workers") {
		m["workers"] = s.workers
	}
	return paramsJSON(m)
}

// paramsJSON encodes a parameter map and its provenance strings.
func paramsJSON(m map[string]any) (json.RawMessage, map[string]string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, nil, err
	}
	prov := map[string]string{}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		prov[key] = fmt.Sprint(m[key])
	}
	return b, prov, nil
}

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

// joinList formats xs as a comma-separated list.
func joinList[T int | float64](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// configParams returns a method's configuration as its JSON parameters
// (in the struct's field order) and their provenance strings.
func configParams(cfg any) (json.RawMessage, map[string]string, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, err
	}
	_, prov, err := paramsJSON(m)
	return b, prov, err
}

// checkedParams returns a deployment's params (read from path) as JSON
// once parse, the method's own config parser, accepts them.
func checkedParams[C any](path string, params map[string]any, parse func([]byte) (C, error)) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: params: %w", path, err)
	}
	if _, err := parse(raw); err != nil {
		return nil, fmt.Errorf("%s: params: %w", path, err)
	}
	return raw, nil
}

// checkDocumentUnit refuses a deployment's params of a noised method that
// cannot count per document, as every party's ledger does: the document
// clip params.max_doc_tokens is required, and params.unit may only be the
// document (the method's own unit is recorded beside it).
func checkDocumentUnit(path, alg string, maxDocTokens int, unit string, defaultLen int) error {
	switch {
	case maxDocTokens <= 0:
		return fmt.Errorf("%s: params.max_doc_tokens: required for %s: a party's ledger counts privacy per document, and documents are clipped to this many tokens, which bounds what one document costs. Set it, for example max_doc_tokens: %d (fedtopic simulate's default)", path, alg, defaultLen)
	case unit != "" && unit != "document":
		return fmt.Errorf("%s: params.unit: %q: a party's ledger counts privacy per document; leave unit out (the cost at the method's own unit is recorded beside it)", path, unit)
	}
	return nil
}

// adldaMethod is approximate distributed LDA, the non-private baseline.
func adldaMethod() *method {
	return &method{
		alg:     adlda.Algorithm,
		summary: "adlda (approximate distributed LDA, Newman et al. 2009: each party sweeps its documents against the global counts and sends count deltas every round; no privacy: the conventional baseline)",
		rounds:  50,
		maxK:    adlda.MaxK,
		params:  commonParams,
		statement: func(st *fed.Statement, _ json.RawMessage, _ int) {
			st.Released = append(st.Released, "topic-word count changes of every party in every round, exactly (AD-LDA is not private)")
			st.Notes = append(st.Notes, "AD-LDA is the non-private baseline: its count updates carry no noise and no privacy guarantee.")
		},
	}
}
