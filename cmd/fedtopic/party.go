package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedgrpc"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/sim/vocabround"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// partyConfig is the file fedtopic party --config reads.
type partyConfig struct {
	Run         string                 `json:"run"`
	ID          string                 `json:"id"`
	Algorithm   string                 `json:"algorithm"`
	Parties     []string               `json:"parties,omitempty"`     // the federation, in the coordinator's order (needed by ftm)
	Coordinator string                 `json:"coordinator"`           // host:port
	ServerName  string                 `json:"server_name,omitempty"` // default: the coordinator's host
	TLS         tlsFiles               `json:"tls"`
	Corpus      []string               `json:"corpus"`
	Input       corpus.ReadOptions     `json:"input,omitzero"`
	Tokenizer   corpus.TokenizerConfig `json:"tokenizer,omitzero"`
	Vocab       string                 `json:"vocab,omitempty"`
	VocabRound  vocabRoundConfig       `json:"vocab_round,omitzero"`
	Params      map[string]any         `json:"params,omitempty"`
	Seed        *uint64                `json:"seed,omitempty"` // default: fresh from the OS (noise must not be predictable)
	Budget      accountant.Budget      `json:"budget"`
	StateDir    string                 `json:"state_dir"`
	Model       string                 `json:"model,omitempty"` // default STATE_DIR/model
	RetryMax    fed.Duration           `json:"retry_max,omitzero"`
	GiveUp      fed.Duration           `json:"give_up,omitzero"`
	// SecureAggregation must equal the coordinator's, or the party is
	// refused when it joins.
	SecureAggregation *fed.SecureAggregation `json:"secure_aggregation,omitempty"`
}

func (c *partyConfig) validate(path string) error {
	var errs []error
	need := func(name, v string) {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s: %s is required", path, name))
		}
	}
	need("run", c.Run)
	need("id", c.ID)
	need("algorithm", c.Algorithm)
	need("coordinator", c.Coordinator)
	need("state_dir", c.StateDir)
	need("tls.ca", c.TLS.CA)
	need("tls.cert", c.TLS.Cert)
	need("tls.key", c.TLS.Key)
	if len(c.Corpus) == 0 {
		errs = append(errs, fmt.Errorf("%s: corpus is required: the party's text files", path))
	}
	if len(c.Parties) > 0 {
		seen := make(map[string]bool, len(c.Parties))
		for _, id := range c.Parties {
			if seen[id] {
				errs = append(errs, fmt.Errorf("%s: parties lists %q twice", path, id))
			}
			seen[id] = true
		}
		if !seen[c.ID] {
			errs = append(errs, fmt.Errorf("%s: parties %v does not list the party's own id %q", path, c.Parties, c.ID))
		}
	}
	if c.Vocab == "" {
		if err := c.VocabRound.params().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: without vocab, vocab_round: %w", path, err))
		}
	}
	if err := c.Budget.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%s: budget: %w", path, err))
	}
	if err := c.Tokenizer.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%s: tokenizer: %w", path, err))
	}
	return errors.Join(errs...)
}

func newPartyCmd(e *env) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "party --config FILE",
		Short: "Take part in a federation: train on local text, send only what the algorithm releases",
		Long: `party runs one party of a federated run. It dials out to the coordinator over
gRPC with mutual TLS 1.3 (its certificate is its identity), trains on its
own text, and before every update leaves it charges its privacy ledger
(fsync) and caches the exact bytes, so a retried or restarted round resends
them instead of drawing new noise. It refuses a round its budget cannot pay
for and tells the coordinator so. Without a shared vocabulary file it first
takes part in the private vocabulary round.

Before it opens its ledger it checks the configuration (mistakes are named
by file and field) and what the whole run will cost it per document (the
vocabulary round plus the algorithm's releases; for ftm, params.epsilon per
word occurrence times params.max_doc_tokens), and refuses to start when
budget cannot cover it. While it waits it says for what; it exits with
status 0 when the coordinator ends the run, and with status 1 when the
coordinator stops the run early or stays unreachable longer than give_up.

It writes its final local model (model, default STATE_DIR/model) and keeps
its ledger and caches in STATE_DIR; restarted on the same STATE_DIR it
rejoins the run where it left off.

The configuration file is YAML or JSON (.json); docs/deploy.md has a
complete example for every algorithm (adlda, ftm, iFTM):

  run: demo
  id: p1                     # must be the name in its certificate
  algorithm: adlda
  coordinator: 127.0.0.1:7443
  server_name: coordinator   # a name in the coordinator's certificate
  tls: {ca: certs/ca.pem, cert: certs/p1.pem, key: certs/p1-key.pem}
  corpus: [data/p1.txt]
  vocab_round: {epsilon: 4, delta: 1.0e-6, max_words_per_doc: 1}   # or vocab: FILE
  params: {k: 10, rounds: 50}
  # parties: [p1, p2, p3]    # the federation in the coordinator's order; ftm needs it
  budget: {epsilon: 4, delta: 1.0e-5}
  state_dir: state/p1        # ledger, caches, local model: keep it private`,
		Example: `  fedtopic party --config p1.yaml`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var cfg partyConfig
			if err := readConfig(configPath, "party", &cfg); err != nil {
				return err
			}
			alg, err := deployAlgorithm(configPath, cfg.Algorithm)
			if err != nil {
				return err
			}
			if alg.NeedsParties && len(cfg.Parties) == 0 {
				return fmt.Errorf("%s: algorithm %s needs parties: the federation's party ids in the order of the coordinator's parties", configPath, alg.Name)
			}
			return runParty(c.Context(), e, configPath, &cfg, alg)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "party configuration, YAML or JSON (required)")
	return cmd
}

// dial connects to the coordinator for one phase, with that phase's message limits.
func (cfg *partyConfig) dial(val fed.Validator) (*fedgrpc.Client, error) {
	name := cfg.ServerName
	if name == "" {
		host, _, err := net.SplitHostPort(cfg.Coordinator)
		if err != nil {
			return nil, fmt.Errorf("coordinator address %q: %w", cfg.Coordinator, err)
		}
		name = host
	}
	tc, err := fedgrpc.LoadClientTLS(cfg.TLS.CA, cfg.TLS.Cert, cfg.TLS.Key, name)
	if err != nil {
		return nil, err
	}
	return fedgrpc.Dial(cfg.Coordinator, fedgrpc.ClientConfig{TLS: tc, MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
}

func (cfg *partyConfig) fedConfig(run, alg, stateDir string) fed.PartyConfig {
	c := fed.PartyConfig{Run: run, ID: cfg.ID, Algorithm: alg, Parties: len(cfg.Parties), StateDir: stateDir, RetryMax: cfg.RetryMax, GiveUp: cfg.GiveUp}
	if alg != vocabround.Name { // the vocabulary round releases word sets, not a sum
		c.SecureAggregation = cfg.SecureAggregation
	}
	return c
}

// runParty checks the configuration read from path, reads the corpus,
// takes part in the vocabulary round if there is one, then in the training
// run. Every mistake the configuration can hold — a parameter, a privacy
// budget the run would exceed — is found before the ledger is opened, so a
// refused start never charges it.
func runParty(ctx context.Context, e *env, path string, cfg *partyConfig, alg fed.Algorithm) error {
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	params, err := setupParams(path, alg, cfg.Params)
	if err != nil {
		return err
	}
	plan, err := partyPlan(path, cfg, alg, params)
	if err != nil {
		return err
	}
	if err := plan.check(cfg.Budget, configBudget); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	seed := rng.NewSeed()
	if cfg.Seed != nil {
		seed = *cfg.Seed
	}
	// The learner sees the whole federation when the configuration lists
	// it, else only this party (the algorithm does not depend on the rest).
	parties := cfg.Parties
	if len(parties) == 0 {
		parties = []string{cfg.ID}
	}
	index := slices.Index(parties, cfg.ID)
	local, err := readPartyCorpus(ctx, cfg)
	if err != nil {
		return err
	}
	// A learner built on the local vocabulary finds what the parameters and
	// the corpus cannot do together (topics for another number of parties,
	// SentenceLDA without sentences) before the vocabulary round releases
	// anything. Building one draws no noise.
	if _, err := alg.NewLearner(fed.Setup{Run: cfg.Run, Parties: parties, Vocab: local.words, Seed: seed, Params: params}, index, local.docs); err != nil {
		return fmt.Errorf("%s: params: %w", path, err)
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return err
	}
	ledger, err := accountant.OpenLedger(filepath.Join(cfg.StateDir, "ledger"), cfg.Budget)
	if err != nil {
		return err
	}
	defer ledger.Close()
	if plan.private() {
		fmt.Fprintf(e.stdout, "%s: privacy: this run costs %s; the budget is ε = %s", cfg.ID, plan, fmtEps(cfg.Budget.Epsilon))
		if spent := ledger.Spent(); spent.Releases > 0 {
			fmt.Fprintf(e.stdout, " (ε = %s already charged)", fmtEps(spent.Epsilon))
		}
		fmt.Fprintln(e.stdout)
	}
	docs, words, err := partyCorpus(ctx, e, cfg, local, seed, ledger, log)
	if err != nil {
		return err
	}
	setup := fed.Setup{Run: cfg.Run, Parties: parties, Vocab: words, Seed: seed, Params: params}
	learner, err := alg.NewLearner(setup, index, docs)
	if err != nil {
		return err
	}
	val, err := alg.NewValidator(setup)
	if err != nil {
		return err
	}
	conn, err := cfg.dial(transportLimits(val, cfg.SecureAggregation, learner, fed.MaxSecAggParties))
	if err != nil {
		return err
	}
	defer conn.Close()
	p, err := fed.NewParty(cfg.fedConfig(cfg.Run, alg.Name, filepath.Join(cfg.StateDir, "training")), learner, ledger, conn, fed.PartyOptions{
		Logger: log,
		OnRound: func(r fed.PartyRound) {
			state := "accepted"
			if !r.Accepted {
				state = "not accepted: " + r.Err
			}
			if r.Resent {
				state += " (resent from cache)"
			}
			fmt.Fprintf(e.stdout, "round %d: sent %d bytes, %s\n", r.Round, r.Bytes, state)
		},
		OnWait: cfg.printWait(e.stderr, ""),
	})
	if err != nil {
		return err
	}
	res, err := p.Run(ctx)
	if err != nil {
		return cfg.runError(err)
	}
	spent := ledger.Spent()
	if m, ok := learner.(fed.Modeler); ok {
		lm, err := m.Model()
		if err != nil {
			return err
		}
		lm.Vocab = words
		lm.Prov.Method, lm.Prov.Rounds, lm.Prov.Version = alg.Name, res.Rounds, version
		if cfg.Seed != nil {
			lm.Prov.Seed = seed // a seed drawn fresh keys the party's noise: it is never recorded
		}
		lm.Prov.Privacy = []topic.PrivacySpend{{Party: cfg.ID, Epsilon: spent.Epsilon, Delta: spent.Delta, Unit: spent.Unit}}
		path := cfg.Model
		if path == "" {
			path = filepath.Join(cfg.StateDir, "model")
		}
		if err := topic.Save(path, lm); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote %s\n", path)
	}
	unit := spent.Unit
	if unit == "" {
		unit = "document"
	}
	fmt.Fprintf(e.stdout, "%s: run %s done after %d rounds; privacy spent ε = %s, δ = %.3g per %s; the coordinator ended the run, exiting\n",
		cfg.ID, cfg.Run, res.Rounds, fmtEps(spent.Epsilon), spent.Delta, unit)
	return nil
}

// partyPlan is what the run configured in path will cost the party, from
// the configuration alone: the vocabulary round, if there is one, and the
// method's releases (its cost in the method table), at the document level,
// with the configuration fields that set them.
func partyPlan(path string, cfg *partyConfig, alg fed.Algorithm, params json.RawMessage) (privacyPlan, error) {
	var parts []costPart
	if cfg.Vocab == "" {
		part, err := vocabRoundCost(cfg.VocabRound.params(), "vocab_round.epsilon")
		if err != nil {
			return privacyPlan{}, fmt.Errorf("%s: vocab_round: %w", path, err)
		}
		parts = append(parts, part)
	}
	m, err := lookupMethod(methods(), alg.Name)
	if err != nil {
		return privacyPlan{}, fmt.Errorf("%s: algorithm: %w", path, err)
	}
	if m.cost != nil {
		ps, err := m.cost(params, configKnobs)
		if err != nil {
			return privacyPlan{}, fmt.Errorf("%s: params: %w", path, err)
		}
		parts = append(parts, ps...)
	}
	plan, err := newPrivacyPlan(cfg.Budget.Delta, parts...)
	if err != nil {
		return plan, fmt.Errorf("%s: %w", path, err)
	}
	return plan, nil
}

// configKnobs names a method's settings as a deployment's configuration
// file sets them: simulate's flag names as fields of params.
func configKnobs(flag string) string {
	if flag == "max-doc-length" {
		return "params.max_doc_tokens"
	}
	return "params." + strings.ReplaceAll(flag, "-", "_")
}

// printWait returns the party's OnWait: a line on w for every wait longer
// than a moment, so a party never waits in silence. phase names the run's phase ("" for
// training).
func (cfg *partyConfig) printWait(w io.Writer, phase string) func(fed.PartyWait) {
	if phase != "" {
		phase += ": "
	}
	return func(pw fed.PartyWait) {
		switch pw.Kind {
		case fed.WaitJoined:
			fmt.Fprintf(w, "%s: %sjoined run %s (%d parties); waiting for round %d\n", cfg.ID, phase, cfg.Run, pw.Parties, pw.Round)
		case fed.WaitIdle:
			fmt.Fprintf(w, "%s: %swaiting for round %d (%s so far; the coordinator waits for other parties)\n", cfg.ID, phase, pw.Round, pw.Waited.Round(time.Second))
		case fed.WaitRetry:
			if pw.Waited+pw.Retry < time.Second {
				return // a coordinator between its phases, or a blip: say nothing yet
			}
			fmt.Fprintf(w, "%s: %sthe coordinator at %s does not answer (%v); retrying in %s, giving up in %s (give_up)\n",
				cfg.ID, phase, cfg.Coordinator, pw.Err, pw.Retry.Round(time.Millisecond), pw.GiveUp.Round(time.Second))
		}
	}
}

// runError explains why the party's run ended early.
func (cfg *partyConfig) runError(err error) error {
	switch {
	case errors.Is(err, fed.ErrRunStopped):
		return fmt.Errorf("%s: the coordinator ended run %s without finishing it: %w", cfg.ID, cfg.Run, err)
	case errors.Is(err, fed.ErrUnavailable):
		giveUp := time.Duration(cfg.GiveUp)
		if giveUp == 0 {
			giveUp = fed.DefaultGiveUp
		}
		return fmt.Errorf("%s: gave up: the coordinator at %s did not answer for %s (give_up); start the party again with the same configuration to rejoin: %w", cfg.ID, cfg.Coordinator, giveUp, err)
	}
	return err
}

// localCorpus is a party's corpus as read, before the vocabulary round.
type localCorpus struct {
	docs  *corpus.Corpus
	words []string // docs' vocabulary
	// shared is set when words is the configured shared vocabulary file.
	shared bool
}

// readPartyCorpus reads the party's corpus over the configured shared
// vocabulary, or else over its own words (the vocabulary round maps it to
// the federation's words, on every start alike).
func readPartyCorpus(ctx context.Context, cfg *partyConfig) (localCorpus, error) {
	if cfg.Vocab != "" {
		fixed, err := vocab.Load(cfg.Vocab)
		if err != nil {
			return localCorpus{}, err
		}
		c, _, _, err := vocab.Prepare(ctx, cfg.Corpus, cfg.Input, cfg.Tokenizer, vocab.BuildOptions{}, fixed)
		if err != nil {
			return localCorpus{}, err
		}
		return localCorpus{docs: c, words: fixed.Words(), shared: true}, nil
	}
	all, tv, _, err := vocab.Prepare(ctx, cfg.Corpus, cfg.Input, cfg.Tokenizer, vocab.BuildOptions{}, nil)
	if err != nil {
		return localCorpus{}, err
	}
	return localCorpus{docs: all, words: tv.Words()}, nil
}

// partyCorpus returns the party's corpus over the shared vocabulary and the
// vocabulary: local as it is when its vocabulary is the configured file,
// else mapped to the result of the vocabulary round — of an earlier start,
// kept in the state directory, or of a new round. A restarted party maps
// the corpus exactly as its first start did, so it trains on the same
// documents.
func partyCorpus(ctx context.Context, e *env, cfg *partyConfig, local localCorpus, seed uint64, ledger fed.Ledger, log *slog.Logger) (*corpus.Corpus, []string, error) {
	if local.shared {
		return local.docs, local.words, nil
	}
	kept := filepath.Join(cfg.StateDir, "vocab.txt")
	if v, err := vocab.Load(kept); err == nil {
		fmt.Fprintf(e.stdout, "vocabulary round: done before the restart (%d words in the shared vocabulary)\n", v.Len())
		c, err := sim.Remap(local.docs, local.words, v.Words())
		return c, v.Words(), err
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	tv, err := vocab.New(local.words)
	if err != nil {
		return nil, nil, err
	}
	p := cfg.VocabRound.params()
	var noise *rand.Rand
	if cfg.Seed != nil {
		noise = rng.Derive(seed, "vocabround", "party", cfg.ID)
	} else {
		noise = rng.Secure()
	}
	l, err := vocabround.NewLearner(p, docWords(local.docs, tv), noise)
	if err != nil {
		return nil, nil, err
	}
	params, err := json.Marshal(p)
	if err != nil {
		return nil, nil, err
	}
	run := cfg.Run + "-vocabulary"
	val, err := vocabround.Algorithm.NewValidator(fed.Setup{Run: run, Parties: []string{cfg.ID}, Params: params})
	if err != nil {
		return nil, nil, err
	}
	conn, err := cfg.dial(val)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	party, err := fed.NewParty(cfg.fedConfig(run, vocabround.Name, filepath.Join(cfg.StateDir, "vocabulary")), l, ledger, conn,
		fed.PartyOptions{Logger: log, OnWait: cfg.printWait(e.stderr, "vocabulary round")})
	if err != nil {
		return nil, nil, err
	}
	res, err := party.Run(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("vocabulary round: %w", cfg.runError(err))
	}
	words, err := vocabround.Decode(res.Final, p)
	if err != nil {
		return nil, nil, fmt.Errorf("vocabulary round: %w", err)
	}
	v, err := vocab.New(words)
	if err != nil {
		return nil, nil, err
	}
	if err := v.Save(kept); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(e.stdout, "vocabulary round: %d words in the shared vocabulary\n", len(words))
	c, err := sim.Remap(local.docs, local.words, words)
	return c, words, err
}
