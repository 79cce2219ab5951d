package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/eval/report"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/sim/adlda"
	"github.com/fedtopic/fedtopic/sim/vocabround"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// defaultVocabL0 is the default number of distinct words a document
// contributes to the private vocabulary round. A word's count grows with
// l0 but the threshold grows as l0·ln(l0/δ), so the smallest l0 keeps the
// most words: on the demo corpus (29,415 glosses in three parties, ε = 4)
// l0 = 1 keeps about 430 words, l0 = 3 about 340 and l0 = 10 about 190.
const defaultVocabL0 = 1

// vocabRoundFlags configure the private vocabulary round.
type vocabRoundFlags struct {
	epsilon, delta float64
	l0             int
}

func (v *vocabRoundFlags) register(c *cobra.Command) {
	fs := c.Flags()
	fs.Float64Var(&v.epsilon, "vocab-epsilon", 4, "ε of each party's private vocabulary selection (without --vocab)")
	fs.Float64Var(&v.delta, "vocab-delta", 1e-6, "δ of each party's private vocabulary selection (without --vocab)")
	fs.IntVar(&v.l0, "vocab-l0", defaultVocabL0, "most distinct words one document contributes to the vocabulary selection; a document with more contributes a random subset. The threshold grows about as fast as l0 (a word needs a noisy count of roughly 1 + l0·ln(l0/δ)/ε), so 1 keeps the most words unless documents are few and long")
}

func (v *vocabRoundFlags) params() (vocabround.Params, error) {
	p := vocabround.Params{Selection: privacy.PartitionSelectionConfig{Epsilon: v.epsilon, Delta: v.delta, MaxWordsPerDoc: v.l0}}
	if err := p.Validate(); err != nil {
		return p, usageError{err}
	}
	return p, nil
}

// docWords returns each document of c as its list of words.
func docWords(c *corpus.Corpus, v *vocab.Vocabulary) [][]string {
	out := make([][]string, c.NumDocs())
	for d := range out {
		ids := c.Doc(d)
		out[d] = make([]string, len(ids))
		for i, w := range ids {
			out[d][i] = v.Word(int(w))
		}
	}
	return out
}

func newSimulateCmd(e *env) *cobra.Command {
	ms := methods()
	var (
		owners      map[string][]string // flag → the methods that read it
		cf          corpusFlags
		vf          vocabRoundFlags
		algorithm   string
		parties     int
		split       string
		topics      string
		k, rounds   int
		alpha, beta float64
		workers     int
		params      string
		seed        string
		out         string
		vocabFile   string
		minParties  int
		secure      bool
		threshold   int
		budgetEps   float64
		budgetDelta float64
		testFile    string
		evalEvery   int
		writeReport bool
		force       bool
	)
	cmd := &cobra.Command{
		Use:   "simulate --corpus FILE --parties N --split RULE --topics K --rounds R --out DIR",
		Short: "Run a whole federation in one process: coordinator, parties, protocol and privacy",
		Long: `simulate runs a federated algorithm with the coordinator and every party in
this process, over the same protocol a deployment uses (every message is
encoded, bytes are counted as on the wire) and with a durable privacy ledger
per party. The corpus is split among the parties by a rule, or each input
file is one party's corpus (--split files).

The shared vocabulary is a file (--vocab), or is chosen by a private
vocabulary round: each party releases only the words whose noisy document
frequency passes a differentially private threshold, and the union is used.
That round's (ε, δ) is charged to every party's ledger.

Before it reads the corpus, simulate works out what the run will cost each
party, per document (the vocabulary round plus the method's releases; FTM's
ε per word occurrence times --max-doc-length), prints it, and refuses a run
that --budget-epsilon cannot cover, naming the flags to change. Without
--budget-epsilon the budget is exactly that plan. docs/privacy.md explains
the accounting.

DIR must be absent or empty (--force replaces it). The run is written
beside it and moved into place when it succeeds, so a failed or
interrupted run leaves nothing behind. It writes DIR/model (the global
model; 'fedtopic export' and 'report' read it), DIR/parties/ID.model (each
party's final local model), DIR/vocab.txt, DIR/run.jsonl (one JSON line per
round: bytes per party, ε per party, duration, metrics; then a summary) and
DIR/ledgers/ID.ledger.

Algorithms:

` + methodHelp(ms) + `

docs/methods.md describes each algorithm and its defaults.`,
		Example: `  fedtopic simulate --corpus demo/wordnet-glosses.jsonl --topics 10 --seed 1 --out runs/adlda
  fedtopic simulate --algorithm ftm --corpus demo/wordnet-glosses.jsonl --split labels:sizes=1,2,3 --topics 8,10,12 --seed 1 --out runs/ftm --report
  fedtopic simulate --algorithm ftm --model slda --corpus demo/wordnet-glosses.jsonl --topics 10 --seed 1 --out runs/iftm
  fedtopic simulate --corpus demo/wordnet-glosses.jsonl --split dirichlet=0.5 --topics 20 --rounds 100 --seed 1 --out runs/noniid
  fedtopic simulate --corpus p1.txt,p2.txt,p3.txt --split files --tokenizer whitespace --vocab vocab.txt --topics 50 --rounds 100 --out runs/files`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if out == "" {
				return usagef("--out is required: the directory to write the model and run record to")
			}
			meth, err := lookupMethod(ms, algorithm)
			if err != nil {
				return err
			}
			alg := meth.alg
			if secure {
				if err := checkSecureMethod(alg.Name); err != nil {
					return err
				}
			}
			if !c.Flags().Changed("rounds") {
				rounds = meth.rounds
			}
			if rounds < 1 {
				return usagef("--rounds %d: must be at least 1", rounds)
			}
			if err := checkMethodFlags(c, owners, alg.Name); err != nil {
				return err
			}
			if v, _ := c.Flags().GetFloat64("epsilon"); c.Flags().Changed("epsilon") && !(v > 0 && !math.IsInf(v, 0)) {
				return usagef("--epsilon %v: want a finite number > 0", v)
			}
			if v, _ := c.Flags().GetInt("max-doc-length"); c.Flags().Changed("max-doc-length") && v < 1 {
				return usagef("--max-doc-length %d: want at least 1 token: it bounds every document's privacy cost (try %d)", v, defaultMaxDocLength)
			}
			ks, err := parseTopics(topics)
			if err != nil {
				return err
			}
			k = ks[0]
			if !meth.perPartyK && len(ks) > 1 || slices.Max(ks) > meth.maxK {
				return usagef("--topics %s: %s takes one number of topics between 1 and %d", topics, alg.Name, meth.maxK)
			}
			s, err := parseSeed(seed)
			if err != nil {
				return err
			}
			spec := corpus.SplitSpec{Method: corpus.SplitSizes}
			if split != "" {
				if spec, err = corpus.ParseSplit(split); err != nil {
					return usageError{err}
				}
			}
			if spec.Method != corpus.SplitFiles && len(spec.Sizes) == 0 && len(spec.Counts) == 0 && len(spec.Groups) == 0 {
				spec.Parties = parties
			}
			if n := spec.NumParties(len(cf.paths)); c.Flags().Changed("parties") && n != parties {
				return usagef("--split %s gives %d parties, but --parties is %d", spec, n, parties)
			}
			if parties = spec.NumParties(len(cf.paths)); parties < 1 {
				return usagef("--split %s: no parties", spec)
			}
			paramJSON, paramProv, err := meth.params(simSettings{cmd: c, extra: params, ks: ks, parties: parties, rounds: rounds, alpha: alpha, beta: beta, workers: workers})
			if err != nil {
				return err
			}
			tc, err := cf.tokenizerConfig(nil)
			if err != nil {
				return err
			}
			vp, err := vf.params()
			if err != nil {
				return err
			}

			// What the run will cost each party, from the configuration
			// alone: refuse before anything is read or released if it does
			// not fit the budget.
			var parts []costPart
			if vocabFile == "" {
				p, err := vocabRoundCost(vp, "--vocab-epsilon")
				if err != nil {
					return usageError{err}
				}
				parts = append(parts, p)
			}
			var methodParts []costPart
			if meth.cost != nil {
				if methodParts, err = meth.cost(paramJSON, flagKnobs); err != nil {
					return usageError{err}
				}
				parts = append(parts, methodParts...)
			}
			budget := accountant.Budget{Epsilon: budgetEps, Delta: budgetDelta, Unit: "document"}
			if err := budget.Validate(); err != nil {
				return usageError{err}
			}
			plan, err := newPrivacyPlan(budget.Delta, parts...)
			if err != nil {
				return err
			}
			budgetSource := "--budget-epsilon"
			if !c.Flags().Changed("budget-epsilon") {
				budget.Epsilon, budgetSource = plan.total.Epsilon, "the plan: give --budget-epsilon to cap it"
			}
			if err := plan.check(budget, flagBudget); err != nil {
				return usageError{err}
			}

			o, err := newOutDir(out, force)
			if err != nil {
				return err
			}
			defer o.abandon()
			ledgerDir := filepath.Join(o.tmp, "ledgers")
			if err := os.MkdirAll(filepath.Join(o.tmp, "parties"), 0o755); err != nil {
				return err
			}
			sc := sim.Scenario{Algorithm: alg, Params: paramJSON, Seed: s, MinParties: minParties, Budget: budget, LedgerDir: ledgerDir,
				SecureAggregation: secure, SecureThreshold: threshold}

			// The parties' corpora over the shared vocabulary.
			var fixed *vocab.Vocabulary
			if vocabFile != "" {
				if fixed, err = vocab.Load(vocabFile); err != nil {
					return err
				}
			}
			pooled, v, _, err := cf.load(ctx, tc, vocab.BuildOptions{}, fixed, e.stderr)
			if err != nil {
				return err
			}
			parts2, err := corpus.Split(pooled, spec, rng.Derive(s, "simulate", "split"))
			if err != nil {
				return usageError{err}
			}
			if plan.private() {
				fmt.Fprintf(e.stderr, "privacy: each party spends %s; budget ε = %s (%s)\n", plan, fmtEps(budget.Epsilon), budgetSource)
			}
			if len(methodParts) == 0 {
				fmt.Fprintf(e.stderr, "privacy: %s, as configured, is not private: its updates leave the parties without noise\n", alg.Name)
			}
			for _, p := range parts {
				if p.group > 0 {
					noteTruncation(e.stderr, parts2, p.group)
					break
				}
			}
			words := v.Words()
			if fixed == nil {
				docs := make([][][]string, len(parts2))
				for i, p := range parts2 {
					docs[i] = docWords(p, v)
				}
				selected, rec, err := sim.SelectVocabulary(ctx, sc, vp, docs)
				if err != nil {
					return fmt.Errorf("%w (%s; the smallest party has %d documents): give the parties more documents, raise --vocab-epsilon, or give a shared word list with --vocab FILE",
						err, vocabThresholdNote(vp), slices.Min(docCounts(parts2)))
				}
				for i := range parts2 {
					if parts2[i], err = sim.Remap(parts2[i], words, selected); err != nil {
						return err
					}
				}
				words = selected
				sc.Prior = append(sc.Prior, rec)
				fmt.Fprintf(e.stderr, "private vocabulary round: %d words selected (%s)\n", len(words), vocabThresholdNote(vp))
			}
			if err := checkVocabSize(e.stderr, len(words), ks, fixed == nil); err != nil {
				return err
			}
			if meth.preflight != nil {
				notes, err := meth.preflight(paramJSON, len(words))
				if err != nil {
					return err
				}
				for _, n := range notes {
					fmt.Fprintln(e.stderr, n)
				}
			}
			sc.Corpora, sc.Vocab = parts2, words
			fv, err := vocab.New(words)
			if err != nil {
				return err
			}
			if err := fv.Save(filepath.Join(o.tmp, "vocab.txt")); err != nil {
				return err
			}
			if testFile != "" {
				test, _, _, err := cf.loadPaths(ctx, "test", []string{testFile}, tc, vocab.BuildOptions{}, fv, e.stderr)
				if err != nil {
					return err
				}
				sc.Metrics = func(round int, m *topic.Model) (map[string]float64, error) {
					if round != rounds && (evalEvery <= 0 || round%evalEvery != 0) {
						return nil, nil
					}
					r, err := eval.Perplexity(ctx, m, test, topic.InferConfig{Seed: s})
					if err != nil {
						return nil, err
					}
					return map[string]float64{"perplexity": r.Perplexity, "log_likelihood": r.LogLikelihood}, nil
				}
			}

			f, err := os.Create(filepath.Join(o.tmp, fed.RecordFile))
			if err != nil {
				return err
			}
			defer f.Close()
			sc.Record = f
			ids := make([]string, len(parts2))
			for i := range ids {
				ids[i] = fmt.Sprintf("p%d", i+1)
			}
			sc.Parties = ids
			bar := newProgress(e.stderr, int64(rounds), "rounds", " rounds")
			sc.OnRound = func(l fed.RoundLine) { bar.Set(int64(l.Round)) }
			corpusDesc := fmt.Sprintf("%s: %d documents, %d tokens", strings.Join(cf.paths, ","), pooled.NumDocs(), pooled.NumTokens())
			partyK := func(i int) int {
				if len(ks) == len(ids) {
					return ks[i]
				}
				return k
			}
			sc.Summary = func(sl *fed.SummaryLine, res *sim.Result) {
				sl.Model, sl.Topics, sl.Vocab, sl.Corpus, sl.Split, sl.Params = "lda", k, len(words), corpusDesc, spec.String(), paramProv
				if meth.model != nil {
					sl.Model = meth.model(paramJSON)
				}
				if meth.perPartyK {
					sl.Topics = 0 // the global model's, which may differ from K (FTM merges)
					if res.Global != nil {
						sl.Topics = res.Global.K
					}
				}
				sl.Models = &fed.ModelFiles{Global: "model"}
				for i, id := range ids {
					sl.PartyData = append(sl.PartyData, fed.PartyData{Party: id, Docs: parts2[i].NumDocs(), Tokens: parts2[i].NumTokens(),
						Topics: partyK(i), BudgetEpsilon: budget.Epsilon, BudgetDelta: budget.Delta})
					if res.Locals[i] != nil {
						sl.Models.Parties = append(sl.Models.Parties, fed.PartyModel{Party: id, Path: filepath.Join("parties", id+".model")})
					}
				}
				sl.Privacy = privacyStatement(fixed == nil, vp)
				if meth.statement != nil {
					meth.statement(sl.Privacy, paramJSON, len(words))
				}
				sl.Privacy.Costs = plan.statementCosts()
				if plan.private() {
					sl.Privacy.Unit = plan.unit()
					sl.Privacy.Neighbouring = "add or remove one document of a party"
				}
			}
			start := time.Now()
			res, err := sim.Run(ctx, sc)
			bar.Done()
			if err != nil {
				return err
			}
			prov := func(m *topic.Model) {
				m.Prov.Method = alg.Name
				if m.Prov.Params == nil {
					m.Prov.Params = map[string]string{}
				}
				maps.Copy(m.Prov.Params, paramProv)
				tokenizerParams(tc, m.Prov.Params)
				m.Prov.Params["seed_source"] = seedSource(seed)
				m.Prov.Params["parties"] = strconv.Itoa(len(ids))
				m.Prov.Params["split"] = spec.String()
				m.Prov.Seed, m.Prov.Rounds = s, res.Rounds
				m.Prov.Corpus = corpusDesc
				m.Prov.Created = time.Now().UTC().Format(time.RFC3339)
				m.Prov.Version = version
				m.Prov.Privacy = nil // the run's accounting, every release included
				for _, pe := range res.Summary.Epsilon {
					m.Prov.Privacy = append(m.Prov.Privacy, topic.PrivacySpend{Party: pe.Party, Epsilon: pe.Epsilon, Delta: pe.Delta, Unit: pe.Unit})
				}
			}
			if res.Global != nil {
				prov(res.Global)
				if err := topic.Save(filepath.Join(o.tmp, "model"), res.Global); err != nil {
					return err
				}
			}
			for i, l := range res.Locals {
				if l != nil {
					prov(l)
					if err := topic.Save(filepath.Join(o.tmp, "parties", ids[i]+".model"), l); err != nil {
						return err
					}
				}
			}
			if err := f.Close(); err != nil {
				return err
			}
			if err := o.commit(); err != nil {
				return err
			}
			printRunSummary(e.stdout, out, res.Summary, plan, time.Since(start))
			path := filepath.Join(out, "report.html")
			if !writeReport {
				fmt.Fprintf(e.stdout, "report: run 'fedtopic report %s --out %s' (or simulate with --report)\n", out, path)
				return nil
			}
			if err := report.WriteFile(ctx, path, []string{out}, report.Options{}); err != nil {
				return fmt.Errorf("the run is in %s, but its report failed: %w", out, err)
			}
			fmt.Fprintf(e.stdout, "report: %s\n", path)
			return nil
		},
	}
	fs := cmd.Flags()
	owners = methodFlags(fs, ms)
	cf.register(fs, "training text (one file split by --split, or one file per party with --split files)")
	vf.register(cmd)
	fs.StringVar(&algorithm, "algorithm", adlda.Name, "federated algorithm: "+strings.Join(methodNames(ms), ", "))
	fs.IntVar(&parties, "parties", 3, "number of parties (with --split files: one per corpus file)")
	fs.StringVar(&split, "split", "", "how the corpus is divided: sizes=1,2,3 | counts=100,200 | labels | labels:sizes=1,2 | dirichlet=0.5 | files (default: equal random parts)")
	fs.StringVarP(&topics, "topics", "k", "", "number of topics K (required); for ftm one per party is allowed: 40,50,60")
	fs.IntVar(&rounds, "rounds", 0, "federated rounds (default: "+methodRounds(ms)+")")
	fs.Float64Var(&alpha, "alpha", 0, "symmetric document-topic prior per topic (default 5/K)")
	fs.Float64Var(&beta, "beta", 0, "symmetric topic-word prior (default 0.01)")
	fs.IntVar(&workers, "workers", 0, "sampling goroutines per party (default 1); never changes the result")
	fs.StringVar(&params, "params", "", `further algorithm parameters as a JSON object, e.g. '{"block_size": 8192}'`)
	fs.StringVar(&seed, "seed", "", "random seed (default: a fresh one from the OS, printed and recorded)")
	fs.StringVarP(&out, "out", "o", "", "directory to write the models, vocabulary and run record to (required)")
	fs.StringVar(&vocabFile, "vocab", "", "shared vocabulary, one word per line, instead of the private vocabulary round")
	fs.IntVar(&minParties, "min-parties", 0, "quorum: fewest updates a round aggregates (default: all parties)")
	fs.BoolVar(&secure, "secure-aggregation", false, "secure aggregation: the coordinator learns only the sum of the surviving parties' updates (methods whose update is a sum: adlda, fedlda, fednmf, and pctd --variant ssp; the noise of pctd --variant ssp and of fednmf's DP-FedAvg is then split among the parties: each adds its share for the sum of --threshold survivors to carry the whole)")
	fs.IntVar(&threshold, "threshold", 0, "with --secure-aggregation, the fewest parties whose updates are summed, which is also the quorum: more than half of the parties (default: all parties)")
	fs.Float64Var(&budgetEps, "budget-epsilon", 0, "each party's privacy budget ε per document; a run that would exceed it is refused before it starts (default: what the configuration spends, printed before training)")
	fs.Float64Var(&budgetDelta, "budget-delta", 1e-5, "each party's privacy budget δ per document")
	fs.StringVar(&testFile, "test", "", "held-out documents: document-completion perplexity of the global model goes into the run record")
	fs.BoolVar(&writeReport, "report", false, "also write the HTML report of the run to DIR/report.html")
	fs.BoolVar(&force, "force", false, "replace DIR if it already holds files (by default a non-empty DIR is refused)")
	fs.IntVar(&evalEvery, "eval-every", 0, "with --test, measure every N rounds as well as after the last (0: the last only)")
	return cmd
}

// privacyStatement describes what a run's vocabulary step released, for
// the run record; the method adds its own releases.
func privacyStatement(vocabRound bool, vp vocabround.Params) *fed.Statement {
	st := &fed.Statement{Accountant: "ε of pure releases adds up; (ε, δ) releases add both; continuous Gaussian releases compose exactly as μ-GDP, discrete and subsampled Gaussian ones by Rényi DP"}
	if vocabRound {
		st.Unit = "document"
		st.Neighbouring = "add or remove one document of a party"
		st.Released = append(st.Released, fmt.Sprintf("vocabulary: words whose noisy document frequency passed partition selection (ε = %g, δ = %g, l0 = %d per party)",
			vp.Selection.Epsilon, vp.Selection.Delta, vp.Selection.MaxWordsPerDoc))
	} else {
		st.Released = append(st.Released, "vocabulary: a shared file given to every party (public)")
	}
	return st
}

// printSummary tells what a run wrote and what it cost, without a plan's
// breakdown of the cost.
func printSummary(w io.Writer, dir string, s fed.SummaryLine, elapsed time.Duration) {
	printRunSummary(w, dir, s, privacyPlan{}, elapsed)
}

// printRunSummary tells what a run wrote and what it cost, each party's ε
// at its ledger's unit with the plan's breakdown by release.
func printRunSummary(w io.Writer, dir string, s fed.SummaryLine, plan privacyPlan, elapsed time.Duration) {
	fmt.Fprintf(w, "wrote %s: %s, %d rounds in %.1fs, seed %d\n", dir, s.Algorithm, s.Rounds, elapsed.Seconds(), s.Seed)
	for i, b := range s.Bytes {
		per := float64(b.Up+b.Down) / float64(max(s.Rounds, 1))
		line := fmt.Sprintf("  %s: %.0f bytes per round (%d up, %d down in all)", b.Party, per, b.Up, b.Down)
		if i < len(s.Epsilon) && s.Epsilon[i].Releases > 0 {
			pe := s.Epsilon[i]
			line += fmt.Sprintf(", ε = %s per %s", fmtEps(pe.Epsilon), orDefault(pe.Unit, "document"))
			if len(plan.parts) > 1 || (len(plan.parts) == 1 && plan.parts[0].group > 0) {
				line += " (" + plan.breakdown() + ")"
			}
			line += fmt.Sprintf(", δ = %.3g", pe.Delta)
		}
		fmt.Fprintln(w, line)
	}
	if len(s.Metrics) > 0 {
		keys := slices.Sorted(maps.Keys(s.Metrics))
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %.6g", k, s.Metrics[k]))
		}
		fmt.Fprintf(w, "  global model: %s\n", strings.Join(parts, ", "))
	}
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// noteTruncation tells how much of each party's text FTM's clip to
// maxLen tokens drops. It reads only the party's own data and is printed
// locally, never released.
func noteTruncation(w io.Writer, parts []*corpus.Corpus, maxLen int) {
	for i, p := range parts {
		docs, lost := 0, 0
		for d := range p.NumDocs() {
			if n := len(p.Doc(d)); n > maxLen {
				docs++
				lost += n - maxLen
			}
		}
		if docs > 0 {
			fmt.Fprintf(w, "p%d: %d of %d documents are longer than --max-doc-length %d and lose their tail (%.1f%% of the party's tokens)\n",
				i+1, docs, p.NumDocs(), maxLen, 100*float64(lost)/float64(max(p.NumTokens(), 1)))
		}
	}
}

// vocabThresholdNote says what the private vocabulary round kept and why.
func vocabThresholdNote(vp vocabround.Params) string {
	sel, err := privacy.NewPartitionSelection(vp.Selection)
	if err != nil {
		return fmt.Sprintf("ε = %g, δ = %g per party", vp.Selection.Epsilon, vp.Selection.Delta)
	}
	cfg := sel.Config()
	return fmt.Sprintf("a word is kept when its noisy count of documents in one party reaches %d, each document counting for at most %d of its distinct words; ε = %g, δ = %g per party",
		sel.Threshold(), cfg.MaxWordsPerDoc, cfg.Epsilon, cfg.Delta)
}

// minWordsPerTopic is the vocabulary size per topic below which topics
// cannot have distinct top words: with ten top words shown per topic and
// the most frequent words shared by many topics, fewer than 20 words per
// topic leave most topics repeating the same words.
const minWordsPerTopic = 20

// checkVocabSize refuses a vocabulary smaller than the number of topics and
// warns when it is too small for distinct topics, saying what to change.
func checkVocabSize(w io.Writer, v int, ks []int, vocabRound bool) error {
	k := slices.Max(ks)
	hint := "use a larger --vocab file"
	if vocabRound {
		hint = "give the parties more documents, raise --vocab-epsilon, lower --vocab-l0 for short documents, or give a public word list with --vocab FILE"
	}
	if v < k {
		return usagef("the shared vocabulary has %d words, fewer than the %d topics: %s", v, k, hint)
	}
	if v < minWordsPerTopic*k {
		fmt.Fprintf(w, "warning: the shared vocabulary has only %d words for %d topics (fewer than %d per topic): topics will share most of their top words; %s\n",
			v, k, minWordsPerTopic, hint)
	}
	return nil
}

// docCounts returns the number of documents of each corpus.
func docCounts(cs []*corpus.Corpus) []int {
	n := make([]int, len(cs))
	for i, c := range cs {
		n[i] = c.NumDocs()
	}
	return n
}
