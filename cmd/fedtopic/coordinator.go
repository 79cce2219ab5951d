package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedgrpc"
	"github.com/fedtopic/fedtopic/internal/atomicfile"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/sim/vocabround"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// tlsFiles names the PEM files of one end of the federation's mutual TLS.
type tlsFiles struct {
	CA   string `json:"ca"`   // the federation CA's certificate
	Cert string `json:"cert"` // this end's certificate
	Key  string `json:"key"`  // this end's private key
}

// vocabRoundConfig configures the private vocabulary round; coordinator
// and parties must agree on it.
type vocabRoundConfig struct {
	Epsilon        float64 `json:"epsilon"`
	Delta          float64 `json:"delta"`
	MaxWordsPerDoc int     `json:"max_words_per_doc,omitempty"`
}

func (v *vocabRoundConfig) params() vocabround.Params {
	return vocabround.Params{Selection: privacy.PartitionSelectionConfig{Epsilon: v.Epsilon, Delta: v.Delta, MaxWordsPerDoc: v.MaxWordsPerDoc}}
}

// coordinatorConfig is the file fedtopic coordinator --config reads.
type coordinatorConfig struct {
	Run           string           `json:"run"`
	Algorithm     string           `json:"algorithm"`
	Listen        string           `json:"listen"`
	Parties       []string         `json:"parties"`
	MinParties    int              `json:"min_parties,omitempty"`
	RoundTimeout  fed.Duration     `json:"round_timeout,omitzero"`
	JoinTimeout   fed.Duration     `json:"join_timeout,omitzero"`
	PollTimeout   fed.Duration     `json:"poll_timeout,omitzero"`
	LingerTimeout fed.Duration     `json:"linger_timeout,omitzero"`
	MaxAttempts   int              `json:"max_attempts,omitempty"`
	StateDir      string           `json:"state_dir"`
	Out           string           `json:"out"`
	TLS           tlsFiles         `json:"tls"`
	Vocab         string           `json:"vocab,omitempty"`
	VocabRound    vocabRoundConfig `json:"vocab_round,omitzero"`
	Params        map[string]any   `json:"params,omitempty"`
	Seed          uint64           `json:"seed,omitempty"`
	Delta         float64          `json:"delta,omitempty"` // δ at which Gaussian releases are reported
	// SecureAggregation runs training under secure aggregation; every
	// party must configure the same threshold.
	SecureAggregation *fed.SecureAggregation `json:"secure_aggregation,omitempty"`
}

// readConfig reads the --config file of the command name into cfg and
// validates it.
func readConfig(path, name string, cfg interface{ validate(string) error }) error {
	if path == "" {
		return usagef("--config is required: a YAML or JSON file (see fedtopic %s --help)", name)
	}
	if err := loadConfig(path, cfg); err != nil {
		return err
	}
	return cfg.validate(path)
}

// loadConfig reads a YAML or JSON configuration file into v, refusing
// unknown fields. YAML is read through its JSON form, so both formats use
// the same field names.
func loadConfig(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	js := data
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".json" {
		var doc any
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if js, err = json.Marshal(doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && bytes.Equal(js, data) {
			line := 1 + bytes.Count(data[:se.Offset], []byte("\n"))
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func (c *coordinatorConfig) validate(path string) error {
	var errs []error
	need := func(name, v string) {
		if v == "" {
			errs = append(errs, fmt.Errorf("%s: %s is required", path, name))
		}
	}
	need("run", c.Run)
	need("algorithm", c.Algorithm)
	need("listen", c.Listen)
	need("state_dir", c.StateDir)
	need("out", c.Out)
	need("tls.ca", c.TLS.CA)
	need("tls.cert", c.TLS.Cert)
	need("tls.key", c.TLS.Key)
	if c.Vocab == "" {
		if err := c.VocabRound.params().Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: without vocab, vocab_round: %w", path, err))
		}
	}
	if sa := c.SecureAggregation; sa != nil {
		if n := len(c.Parties); 2*sa.Threshold <= n || sa.Threshold > n {
			errs = append(errs, fmt.Errorf("%s: secure_aggregation.threshold = %d with %d parties: need more than half of the parties and at most all of them", path, sa.Threshold, n))
		}
		if c.MinParties != 0 && c.MinParties != sa.Threshold {
			errs = append(errs, fmt.Errorf("%s: min_parties = %d, but with secure_aggregation the quorum is its threshold %d (leave min_parties out)", path, c.MinParties, sa.Threshold))
		}
	}
	return errors.Join(errs...)
}

// secureSized raises a validator's message bounds to fit secure
// aggregation's messages; the transport sizes its limits from it.
type secureSized struct {
	fed.Validator
	min int
}

func (v secureSized) MaxUpdateSize() int    { return max(v.Validator.MaxUpdateSize(), v.min) }
func (v secureSized) MaxBroadcastSize() int { return max(v.Validator.MaxBroadcastSize(), v.min) }

// transportLimits returns val, raised to fit secure aggregation's
// messages for a federation of n parties when sa is set and the algorithm
// declares its vector (half is its SumAggregator or SumLearner).
func transportLimits(val fed.Validator, sa *fed.SecureAggregation, half any, n int) fed.Validator {
	if sa == nil {
		return val
	}
	var spec fed.SumSpec
	switch h := half.(type) {
	case fed.SumAggregator:
		spec = h.SumSpec()
	case fed.SumLearner:
		spec = h.SumSpec()
	default:
		return val // the engine refuses the run with a clear error
	}
	return secureSized{Validator: val, min: fed.SecAggMaxMessage(n, spec.Len)}
}

// crashHook returns the coordinator's crash hook for fault-injection tests:
// with FEDTOPIC_CRASH_AT=POINT:ROUND (a fed.CrashPoint name such as
// after-persist) the process kills itself with SIGKILL when it reaches that
// point of that round — a real kill -9 at an exact boundary.
func crashHook() func(fed.CrashPoint, int) error {
	spec := os.Getenv("FEDTOPIC_CRASH_AT")
	if spec == "" {
		return nil
	}
	name, r, _ := strings.Cut(spec, ":")
	round, _ := strconv.Atoi(r)
	return func(p fed.CrashPoint, at int) error {
		if p.String() == name && at == round {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
		return nil
	}
}

func newCoordinatorCmd(e *env) *cobra.Command {
	var configPath string
	cmd := &cobra.Command{
		Use:   "coordinator --config FILE",
		Short: "Serve a federation: collect the parties' updates round by round over gRPC with mutual TLS",
		Long: `coordinator runs the coordinator of a federated run: it listens for parties
(which only dial out) over gRPC with mutual TLS 1.3, accepts only the parties
of its allow-list, runs the rounds with their deadlines and quorum, validates
every update before aggregating it, checkpoints at every round boundary and
resumes from its state directory after a crash. Without a shared vocabulary
file it first runs the private vocabulary round.

It checks its configuration before it listens (mistakes are named by file
and field), says who has joined and who is missing while it waits, prints a
line per round, and after a restart says from which round it resumes. It
writes OUT/run.jsonl (the same run record as fedtopic simulate; its summary
counts the whole run across restarts), OUT/model and OUT/vocab.txt.

The configuration file is YAML or JSON (.json); docs/deploy.md has a
complete three-party example on loopback for every algorithm (adlda, ftm,
iFTM):

  run: demo                  # run id; parties must name the same
  algorithm: adlda
  listen: 127.0.0.1:7443
  parties: [p1, p2, p3]      # allow-list: the parties' certificate names
  min_parties: 3             # quorum (default: all)
  secure_aggregation: {threshold: 2}   # optional: the coordinator learns
                             # only the sum of the updates (adlda); the quorum
                             # is the threshold; every party sets the same
  round_timeout: 10m
  state_dir: state/coordinator
  out: out
  tls: {ca: certs/ca.pem, cert: certs/coordinator.pem, key: certs/coordinator-key.pem}
  vocab_round: {epsilon: 4, delta: 1.0e-6, max_words_per_doc: 1}   # or vocab: FILE
  params: {k: 10, rounds: 50}`,
		Example: `  fedtopic certs --out certs --parties p1,p2,p3
  fedtopic coordinator --config coordinator.yaml`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			var cfg coordinatorConfig
			if err := readConfig(configPath, "coordinator", &cfg); err != nil {
				return err
			}
			alg, err := deployAlgorithm(configPath, cfg.Algorithm)
			if err != nil {
				return err
			}
			return runCoordinator(c.Context(), e, configPath, &cfg, alg)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "coordinator configuration, YAML or JSON (required)")
	return cmd
}

// server serves one coordinator phase (vocabulary round or training).
type server struct {
	srv *fedgrpc.Server
	wg  sync.WaitGroup
}

func serve(cfg *coordinatorConfig, svc fed.Service, val fed.Validator) (*server, error) {
	tc, err := fedgrpc.LoadServerTLS(cfg.TLS.CA, cfg.TLS.Cert, cfg.TLS.Key)
	if err != nil {
		return nil, err
	}
	srv, err := fedgrpc.NewServer(svc, fedgrpc.ServerConfig{TLS: tc, Parties: cfg.Parties,
		MaxUpdateSize: val.MaxUpdateSize(), MaxBroadcastSize: val.MaxBroadcastSize()})
	if err != nil {
		return nil, err
	}
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", cfg.Listen, err)
	}
	s := &server{srv: srv}
	s.wg.Go(func() { srv.Serve(lis) })
	return s, nil
}

// stop lets calls in flight finish (for at most five seconds: the final
// broadcast must reach every party) and stops serving.
func (s *server) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
	s.wg.Wait()
}

func (cfg *coordinatorConfig) fedConfig(run, alg, stateDir string) fed.CoordinatorConfig {
	c := fed.CoordinatorConfig{Run: run, Algorithm: alg, Parties: cfg.Parties, MinParties: cfg.MinParties,
		RoundTimeout: cfg.RoundTimeout, JoinTimeout: cfg.JoinTimeout, PollTimeout: cfg.PollTimeout,
		LingerTimeout: cfg.LingerTimeout, MaxAttempts: cfg.MaxAttempts, StateDir: stateDir}
	if alg != vocabround.Name { // the vocabulary round releases word sets, not a sum
		c.SecureAggregation = cfg.SecureAggregation
	}
	return c
}

// deployAlgorithm returns the algorithm the configuration file path names.
func deployAlgorithm(path, name string) (fed.Algorithm, error) {
	var names []string
	for _, a := range federatedAlgorithms() {
		if a.Name == name {
			return a, nil
		}
		names = append(names, a.Name)
	}
	return fed.Algorithm{}, fmt.Errorf("%s: algorithm: %q is not an algorithm; choose one of %s", path, name, strings.Join(names, ", "))
}

// setupParams checks the params of the configuration file path for alg and
// returns them as the Setup's parameters, completed as a deployment needs.
// Coordinator and parties complete them alike, so they agree.
//
// Every party's ledger counts privacy per document, the unit of the
// private vocabulary round; an algorithm whose releases count a smaller
// unit reports them at the document level. For FTM (ε per word
// occurrence) that is group privacy over params.max_doc_tokens, as
// fedtopic simulate does (--max-doc-length): the field is required and
// params.unit becomes "document".
func setupParams(path string, alg fed.Algorithm, params map[string]any) (json.RawMessage, error) {
	m, err := lookupMethod(methods(), alg.Name)
	if err != nil {
		return nil, fmt.Errorf("%s: algorithm: %w", path, err)
	}
	if m.deploy != nil {
		return m.deploy(path, params)
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("%s: params: %w", path, err)
	}
	return raw, nil
}

// runCoordinator runs the vocabulary round (unless a vocabulary file is
// given or the round already ran) and then the training run; path names
// the configuration file, whose mistakes are found before anything starts.
func runCoordinator(ctx context.Context, e *env, path string, cfg *coordinatorConfig, alg fed.Algorithm) error {
	log := slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	params, err := setupParams(path, alg, cfg.Params)
	if err != nil {
		return err
	}
	// The algorithm's halves built on a stand-in vocabulary (two words: the
	// fewest a randomized response over words needs) find what the
	// parameters cannot do with this federation (FTM's topics for another
	// number of parties) before the vocabulary round starts.
	probe := fed.Setup{Run: cfg.Run, Parties: cfg.Parties, Vocab: []string{"word", "words"}, Seed: cfg.Seed, Params: params}
	if _, err := alg.NewAggregator(probe); err != nil {
		return fmt.Errorf("%s: params: %w", path, err)
	}
	if _, err := alg.NewValidator(probe); err != nil {
		return fmt.Errorf("%s: params: %w", path, err)
	}
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return err
	}
	started, err := runStart(cfg.StateDir)
	if err != nil {
		return err
	}
	words, prior, err := coordinatorVocabulary(ctx, e, cfg, log)
	if err != nil {
		return err
	}
	setup := fed.Setup{Run: cfg.Run, Parties: cfg.Parties, Vocab: words, Seed: cfg.Seed, Params: params}
	agg, err := alg.NewAggregator(setup)
	if err != nil {
		return err
	}
	val, err := alg.NewValidator(setup)
	if err != nil {
		return err
	}
	delta := cfg.Delta
	if delta == 0 {
		delta = sim.DefaultDelta
	}
	recPath := filepath.Join(cfg.Out, fed.RecordFile)
	stateDir := filepath.Join(cfg.StateDir, "training")
	_, statErr := os.Stat(filepath.Join(stateDir, "checkpoint"))
	resuming := statErr == nil
	if resuming {
		if err := trimTornLine(recPath); err != nil {
			return err
		}
	}
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if resuming {
		flags = os.O_CREATE | os.O_RDWR | os.O_APPEND
	}
	f, err := os.OpenFile(recPath, flags, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	rec := sim.NewRecorder(f, cfg.Parties, delta)
	for _, p := range prior {
		rec.Prior(p)
	}
	if resuming {
		if err := rec.Resume(io.NewSectionReader(f, 0, 1<<62)); err != nil {
			return err
		}
	}
	var recErr error
	coord, err := fed.NewCoordinator(cfg.fedConfig(cfg.Run, alg.Name, stateDir), agg, val, fed.CoordinatorOptions{
		Logger: log,
		Crash:  crashHook(),
		OnWait: printWait(e.stdout, ""),
		OnRound: func(r fed.RoundRecord) {
			recErr = errors.Join(recErr, rec.Round(r, nil))
			if r.Resumed {
				return
			}
			status := "committed"
			if !r.Committed {
				status = "aborted: " + r.Err
			}
			var up, down int64
			for _, t := range r.Traffic {
				up, down = up+t.Up, down+t.Down
			}
			fmt.Fprintf(e.stdout, "round %d (attempt %d): %s; %d of %d replied", r.Round, r.Attempt, status, len(r.Replied), len(cfg.Parties))
			if len(r.Dropped) > 0 {
				fmt.Fprintf(e.stdout, ", dropped %v", r.Dropped)
			}
			if len(r.Refused) > 0 {
				fmt.Fprintf(e.stdout, ", refused %v", r.Refused)
			}
			fmt.Fprintf(e.stdout, "; %d bytes up, %d down; %.2fs\n", up, down, r.Duration.Seconds())
		},
	})
	if err != nil {
		return err
	}
	if resuming {
		if n := coord.Committed(); n > 0 {
			fmt.Fprintf(e.stdout, "resumed run %s from its checkpoint in %s: rounds 1 to %d were committed before the restart; going on from round %d\n", cfg.Run, stateDir, n, n+1)
		} else {
			fmt.Fprintf(e.stdout, "resumed run %s from its checkpoint in %s: no round was committed before the restart; starting from round 1\n", cfg.Run, stateDir)
		}
	}
	srv, err := serve(cfg, coord, transportLimits(val, cfg.SecureAggregation, agg, len(cfg.Parties)))
	if err != nil {
		return err
	}
	res, err := coord.Run(ctx)
	srv.stop()
	// The summary counts the whole run: every committed round, the bytes
	// and privacy spend of rounds before a restart (the recorder resumed
	// them) and the time since the run first started.
	summary := fed.SummaryLine{Run: cfg.Run, Algorithm: alg.Name, Seed: cfg.Seed, Rounds: coord.Committed(), Vocab: len(words),
		DurationS: time.Since(started).Seconds(), SecureAggregation: fed.SummarizeSecure(cfg.SecureAggregation, agg)}
	if err != nil {
		summary.Error = err.Error()
		_, serr := rec.Summary(summary)
		return errors.Join(err, serr, recErr)
	}
	if m, ok := agg.(fed.Modeler); ok {
		gm, err := m.Model()
		if err != nil {
			return err
		}
		gm.Vocab = words
		gm.Prov.Method, gm.Prov.Rounds, gm.Prov.Version = alg.Name, res.Rounds, version
		gm.Prov.Created = time.Now().UTC().Format(time.RFC3339)
		// What every party spent, from the run record's accounting (the
		// vocabulary round included), which survives a restart of the
		// coordinator; an aggregator's own tally starts again from zero.
		gm.Prov.Privacy = nil
		for _, pe := range rec.Epsilon() {
			if pe.Releases > 0 {
				gm.Prov.Privacy = append(gm.Prov.Privacy, topic.PrivacySpend{Party: pe.Party, Epsilon: pe.Epsilon, Delta: pe.Delta, Unit: pe.Unit})
			}
		}
		if err := topic.Save(filepath.Join(cfg.Out, "model"), gm); err != nil {
			return err
		}
		summary.Models = &fed.ModelFiles{Global: "model"}
		summary.Topics = gm.K
	}
	s, err := rec.Summary(summary)
	if err := errors.Join(err, recErr); err != nil {
		return err
	}
	printSummary(e.stdout, cfg.Out, s, time.Since(started))
	return nil
}

// runStart returns when the run kept in stateDir first started, recording
// now if it has not started before.
func runStart(stateDir string) (time.Time, error) {
	path := filepath.Join(stateDir, "started")
	b, err := os.ReadFile(path)
	if err == nil {
		t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
		if err != nil {
			return time.Time{}, fmt.Errorf("%s: %w", path, err)
		}
		return t, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, err
	}
	now := time.Now().UTC()
	return now, atomicfile.WriteBytes(path, 0o600, []byte(now.Format(time.RFC3339Nano)+"\n"))
}

// printWait returns the coordinator's OnWait: a line on w saying who has
// joined and who is missing, or whom a round waits for. phase names the
// run's phase ("" for training).
func printWait(w io.Writer, phase string) func(fed.Waiting) {
	if phase != "" {
		phase += ": "
	}
	return func(wt fed.Waiting) {
		list := func(ids []string) string {
			if len(ids) == 0 {
				return "none"
			}
			return strings.Join(ids, ", ")
		}
		left := wt.Left.Round(time.Second)
		switch {
		case wt.Round == 0 && len(wt.Missing) == 0:
			fmt.Fprintf(w, "%sall %d parties joined: %s\n", phase, len(wt.Present), list(wt.Present))
		case wt.Round == 0:
			fmt.Fprintf(w, "%swaiting for parties to join: joined %s; missing %s (the first round starts without them in %s, join_timeout)\n",
				phase, list(wt.Present), list(wt.Missing), left)
		default:
			fmt.Fprintf(w, "%sround %d: waiting for %s; replied %s (deadline in %s, round_timeout)\n",
				phase, wt.Round, list(wt.Missing), list(wt.Present), left)
		}
	}
}

// endingPhase serves the vocabulary round and tells a party that asks for
// the training run that follows it (next) to retry: a party that collects
// the vocabulary first joins the training run while the coordinator still
// waits for the others to collect it, and must not take the round's
// answer, an unknown run, as the end of its run.
type endingPhase struct {
	fed.Service
	next string
}

func (s endingPhase) early(run string) error {
	if run != s.next {
		return nil
	}
	return fmt.Errorf("coordinator: run %s starts when the vocabulary round ends: %w", run, fed.ErrUnavailable)
}

func (s endingPhase) Join(ctx context.Context, req *fed.JoinRequest) (*fed.JoinReply, error) {
	if err := s.early(req.Run); err != nil {
		return nil, err
	}
	return s.Service.Join(ctx, req)
}

func (s endingPhase) Next(ctx context.Context, req *fed.TaskRequest) (*fed.Task, error) {
	if err := s.early(req.Run); err != nil {
		return nil, err
	}
	return s.Service.Next(ctx, req)
}

func (s endingPhase) Submit(ctx context.Context, req *fed.Submission) (*fed.Receipt, error) {
	if err := s.early(req.Run); err != nil {
		return nil, err
	}
	return s.Service.Submit(ctx, req)
}

// coordinatorVocabulary returns the shared vocabulary: the configured file,
// the result of an earlier vocabulary round in the state directory, or a
// new private vocabulary round. prior holds the round's record.
func coordinatorVocabulary(ctx context.Context, e *env, cfg *coordinatorConfig, log *slog.Logger) ([]string, []fed.RoundRecord, error) {
	if cfg.Vocab != "" {
		v, err := vocab.Load(cfg.Vocab)
		if err != nil {
			return nil, nil, err
		}
		return v.Words(), nil, nil
	}
	done := filepath.Join(cfg.StateDir, "vocabulary.json")
	type result struct {
		Words  []string        `json:"words"`
		Record fed.RoundRecord `json:"record"`
	}
	var r result
	if b, err := os.ReadFile(done); err == nil {
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", done, err)
		}
		fmt.Fprintf(e.stdout, "vocabulary round: done before the restart (%d words selected)\n", len(r.Words))
		return r.Words, []fed.RoundRecord{r.Record}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	params, err := json.Marshal(cfg.VocabRound.params())
	if err != nil {
		return nil, nil, err
	}
	run := cfg.Run + "-vocabulary"
	setup := fed.Setup{Run: run, Parties: cfg.Parties, Params: params}
	agg, err := vocabround.Algorithm.NewAggregator(setup)
	if err != nil {
		return nil, nil, err
	}
	val, err := vocabround.Algorithm.NewValidator(setup)
	if err != nil {
		return nil, nil, err
	}
	coord, err := fed.NewCoordinator(cfg.fedConfig(run, vocabround.Name, filepath.Join(cfg.StateDir, "vocabulary")), agg, val,
		fed.CoordinatorOptions{Logger: log, OnWait: printWait(e.stdout, "vocabulary round"), OnRound: func(rr fed.RoundRecord) {
			if rr.Committed {
				r.Record = rr
			}
		}})
	if err != nil {
		return nil, nil, err
	}
	srv, err := serve(cfg, endingPhase{Service: coord, next: cfg.Run}, val)
	if err != nil {
		return nil, nil, err
	}
	_, err = coord.Run(ctx)
	srv.stop()
	if err != nil {
		return nil, nil, fmt.Errorf("vocabulary round: %w", err)
	}
	r.Words = agg.(*vocabround.Aggregator).Vocabulary()
	v, err := vocab.New(r.Words)
	if err != nil {
		return nil, nil, err
	}
	if err := v.Save(filepath.Join(cfg.Out, "vocab.txt")); err != nil {
		return nil, nil, err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, nil, err
	}
	if err := atomicfile.WriteBytes(done, 0o600, b); err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(e.stdout, "vocabulary round: %d words selected\n", len(r.Words))
	return r.Words, []fed.RoundRecord{r.Record}, nil
}

// trimTornLine cuts a run record after its last complete line: a crash
// while a line was written leaves a partial one, which is dropped (the
// resumed coordinator writes that round again).
func trimTornLine(path string) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if n := bytes.LastIndexByte(b, '\n') + 1; n < len(b) {
		return os.Truncate(path, int64(n))
	}
	return nil
}
