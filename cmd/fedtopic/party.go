package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"

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

It writes its final local model (model, default STATE_DIR/model) and keeps
its ledger and caches in STATE_DIR; restarted on the same STATE_DIR it
rejoins the run where it left off.

The configuration file is YAML or JSON (.json); see fed/README.md:

  run: demo
  id: p1                     # must be the name in its certificate
  algorithm: adlda
  coordinator: 127.0.0.1:7443
  server_name: coordinator   # a name in the coordinator's certificate
  tls: {ca: certs/ca.pem, cert: certs/p1.pem, key: certs/p1-key.pem}
  corpus: [data/p1.txt]
  tokenizer: {mode: whitespace}
  vocab: vocab.txt           # or vocab_round: {epsilon: 4, delta: 1e-6, max_words_per_doc: 10}
  params: {k: 20, rounds: 50}
  # parties: [p1, p2, p3]    # the federation in the coordinator's order; ftm needs it
  budget: {epsilon: 10, delta: 1e-5}
  state_dir: state/p1`,
		Example: `  fedtopic party --config p1.yaml`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var cfg partyConfig
			if err := readConfig(configPath, "party", &cfg); err != nil {
				return err
			}
			alg, err := lookupAlgorithm(cfg.Algorithm)
			if err != nil {
				return err
			}
			if alg.NeedsParties && len(cfg.Parties) == 0 {
				return fmt.Errorf("%s: algorithm %s needs parties: the federation's party ids in the order of the coordinator's parties", configPath, alg.Name)
			}
			return runParty(c.Context(), e, &cfg, alg)
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
	return fed.PartyConfig{Run: run, ID: cfg.ID, Algorithm: alg, Parties: len(cfg.Parties), StateDir: stateDir, RetryMax: cfg.RetryMax, GiveUp: cfg.GiveUp}
}

// runParty reads the corpus, takes part in the vocabulary round if there
// is one, then in the training run.
func runParty(ctx context.Context, e *env, cfg *partyConfig, alg fed.Algorithm) error {
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return err
	}
	seed := rng.NewSeed()
	if cfg.Seed != nil {
		seed = *cfg.Seed
	}
	ledger, err := accountant.OpenLedger(filepath.Join(cfg.StateDir, "ledger"), cfg.Budget)
	if err != nil {
		return err
	}
	defer ledger.Close()
	docs, words, err := partyCorpus(ctx, e, cfg, seed, ledger, log)
	if err != nil {
		return err
	}
	params, err := json.Marshal(cfg.Params)
	if err != nil {
		return err
	}
	// The learner sees the whole federation when the configuration lists
	// it, else only this party (the algorithm does not depend on the rest).
	parties := cfg.Parties
	if len(parties) == 0 {
		parties = []string{cfg.ID}
	}
	setup := fed.Setup{Run: cfg.Run, Parties: parties, Vocab: words, Seed: seed, Params: params}
	learner, err := alg.NewLearner(setup, slices.Index(parties, cfg.ID), docs)
	if err != nil {
		return err
	}
	val, err := alg.NewValidator(setup)
	if err != nil {
		return err
	}
	conn, err := cfg.dial(val)
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
	})
	if err != nil {
		return err
	}
	res, err := p.Run(ctx)
	if err != nil {
		return err
	}
	spent := ledger.Spent()
	fmt.Fprintf(e.stdout, "%s: run %s done after %d rounds; privacy spent ε = %.4g, δ = %.3g (%s)\n", cfg.ID, cfg.Run, res.Rounds, spent.Epsilon, spent.Delta, spent.Accountant)
	if m, ok := learner.(fed.Modeler); ok {
		lm, err := m.Model()
		if err != nil {
			return err
		}
		lm.Vocab = words
		lm.Prov.Method, lm.Prov.Rounds, lm.Prov.Seed, lm.Prov.Version = alg.Name, res.Rounds, seed, version
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
	return nil
}

// partyCorpus returns the party's corpus over the shared vocabulary and the
// vocabulary: from the configured file, from an earlier vocabulary round,
// or from a new one.
func partyCorpus(ctx context.Context, e *env, cfg *partyConfig, seed uint64, ledger fed.Ledger, log *slog.Logger) (*corpus.Corpus, []string, error) {
	vocabPath := cfg.Vocab
	if vocabPath == "" {
		vocabPath = filepath.Join(cfg.StateDir, "vocab.txt")
		if _, err := os.Stat(vocabPath); errors.Is(err, fs.ErrNotExist) {
			vocabPath = ""
		}
	}
	if vocabPath != "" {
		fixed, err := vocab.Load(vocabPath)
		if err != nil {
			return nil, nil, err
		}
		c, _, _, err := vocab.Prepare(ctx, cfg.Corpus, cfg.Input, cfg.Tokenizer, vocab.BuildOptions{}, fixed)
		if err != nil {
			return nil, nil, err
		}
		return c, fixed.Words(), nil
	}
	all, tv, _, err := vocab.Prepare(ctx, cfg.Corpus, cfg.Input, cfg.Tokenizer, vocab.BuildOptions{}, nil)
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
	l, err := vocabround.NewLearner(p, docWords(all, tv), noise)
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
	party, err := fed.NewParty(cfg.fedConfig(run, vocabround.Name, filepath.Join(cfg.StateDir, "vocabulary")), l, ledger, conn, fed.PartyOptions{Logger: log})
	if err != nil {
		return nil, nil, err
	}
	res, err := party.Run(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("vocabulary round: %w", err)
	}
	words, err := vocabround.Decode(res.Final, p)
	if err != nil {
		return nil, nil, fmt.Errorf("vocabulary round: %w", err)
	}
	v, err := vocab.New(words)
	if err != nil {
		return nil, nil, err
	}
	if err := v.Save(filepath.Join(cfg.StateDir, "vocab.txt")); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(e.stdout, "vocabulary round: %d words in the shared vocabulary\n", len(words))
	c, err := sim.Remap(all, tv.Words(), words)
	return c, words, err
}
