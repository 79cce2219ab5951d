package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fedlda"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/privacy/attack"
	"github.com/fedtopic/fedtopic/sim/vocabround"
	"github.com/fedtopic/fedtopic/topic"
)

func newAttacksCmd(e *env) *cobra.Command {
	var (
		trials  int
		alpha   float64
		seed    uint64
		methods string
		outPath string
	)
	cmd := &cobra.Command{
		Use:   "attacks",
		Short: "privacy attacks: the empirical ε lower bound of every private method beside its claimed ε",
		Long: `attacks plays the word-presence attack against every private method's real
release path, on a small synthetic corpus with one planted word, and writes
one JSON line per method and setting:

  method, attack, unit, noise ("on": the method as configured; "off": the
  same release without noise, which shows the attack has power),
  claimed_epsilon (what the method's privacy events cost, composed by the
  accountant), delta, epsilon_lb (the Clopper–Pearson lower bound on ε
  from the attack's false-positive and false-negative rates), confidence,
  trials, tpr, fpr.

With noise on, epsilon_lb must stay at or below claimed_epsilon; a line
with "violation": true reports a bound above the claim. The bound can never
exceed about ln(trials/ln(2/(1−confidence))), whatever the mechanism, so a
large claimed ε shows as a bound far below it (docs/attacks.md).`,
		Example: `  fedtopic experiment attacks --trials 2000 --out attacks.jsonl`,
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			out := io.Writer(e.stdout)
			if outPath != "" {
				f, err := os.Create(outPath)
				if err != nil {
					return fmt.Errorf("experiment attacks: %w", err)
				}
				defer f.Close()
				out = f
			}
			var only []string
			if methods != "" {
				only = strings.Split(methods, ",")
			}
			if err := runAttacks(c.Context(), out, e.stderr, attackOptions{trials: trials, alpha: alpha, seed: seed, methods: only}); err != nil {
				return err
			}
			if f, ok := out.(*os.File); ok && outPath != "" {
				return f.Sync()
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&trials, "trials", 2000, "releases per dataset (D and D') judged; as many again choose the test's threshold")
	fs.Float64Var(&alpha, "alpha", 0.05, "the bound holds with confidence 1 − alpha")
	fs.Uint64Var(&seed, "seed", 1, "seed of the trials' noise")
	fs.StringVar(&methods, "methods", "", "comma-separated subset of: "+strings.Join(attackMethodNames(), ", ")+" (default all)")
	fs.StringVarP(&outPath, "out", "o", "", "JSON lines file to write the results to (default standard output)")
	return cmd
}

// attackOptions configure runAttacks.
type attackOptions struct {
	trials  int
	alpha   float64
	seed    uint64
	methods []string // nil: all
}

// attackCase is one method's word-presence game, with noise on and off.
type attackCase struct {
	method, unit string
	delta        float64
	// game returns the game and the events one release spends (noise on),
	// or the game without noise (noiseOff).
	game func(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error)
}

// attackCases lists the private methods at their defaults, in output order.
func attackCases() []attackCase {
	return []attackCase{
		{method: "ftm-mechanism", unit: ftm.UnitWord, game: ftmMechanismGame},
		{method: "ftm", unit: ftm.UnitWord, game: ftmGame},
		{method: "pctd-unit", unit: pctd.UnitWord, delta: pctd.DefaultDelta, game: pctdGame(pctd.VariantUnit)},
		{method: "pctd-ssp", unit: "document", delta: pctd.DefaultDelta, game: pctdGame(pctd.VariantSSP)},
		{method: "fedlda-krr", unit: fedlda.Unit, game: fedldaGame(fedlda.MechanismKRR)},
		{method: "fedlda-tkrr", unit: fedlda.Unit, game: fedldaGame(fedlda.MechanismTKRR)},
		{method: "fedlda-rrp", unit: fedlda.Unit, delta: 1e-5, game: fedldaGame(fedlda.MechanismRRP)},
		{method: "fednmf-dp", unit: fednmf.UnitClient, delta: 1e-5, game: fednmfGame},
		{method: "vocabulary", unit: "document", delta: 1e-5, game: vocabGame},
	}
}

func attackMethodNames() []string {
	var names []string
	for _, c := range attackCases() {
		names = append(names, c.method)
	}
	return names
}

// runAttacks plays every selected case with noise on and off and writes a
// line for each.
func runAttacks(ctx context.Context, out, log io.Writer, o attackOptions) error {
	enc := json.NewEncoder(out)
	if err := enc.Encode(map[string]any{"plot": map[string]any{
		"title": "Empirical ε lower bound against claimed ε (word-presence attack)", "x": "claimed_epsilon", "y": "epsilon_lb",
		"series": []string{"method"}, "x_label": "claimed ε per unit", "y_label": "empirical ε lower bound", "log_x": true}}); err != nil {
		return fmt.Errorf("experiment attacks: %w", err)
	}
	for _, c := range attackCases() {
		if o.methods != nil && !slices.Contains(o.methods, c.method) {
			continue
		}
		for _, off := range []bool{false, true} {
			line, err := playCase(ctx, c, off, o)
			if err != nil {
				return fmt.Errorf("experiment attacks: %s: %w", c.method, err)
			}
			claim := "no noise"
			if !off {
				claim = fmt.Sprintf("claimed %.4g", line["claimed_epsilon"])
			}
			fmt.Fprintf(log, "attacks: %s, noise %s: ε lower bound %.3g (%s) over %d trials per dataset\n", c.method, line["noise"], line["epsilon_lb"], claim, o.trials)
			if err := enc.Encode(line); err != nil {
				return fmt.Errorf("experiment attacks: %w", err)
			}
		}
	}
	return nil
}

// playCase estimates one case's bound.
func playCase(ctx context.Context, c attackCase, noiseOff bool, o attackOptions) (map[string]any, error) {
	g, spent, err := c.game(o.seed, noiseOff)
	if err != nil {
		return nil, err
	}
	res, err := attack.Estimate(ctx, g, attack.Config{Trials: o.trials, Delta: c.delta, Alpha: o.alpha})
	if err != nil {
		return nil, err
	}
	line := map[string]any{"method": c.method, "attack": "word-presence", "unit": c.unit, "noise": "on",
		"delta": c.delta, "epsilon_lb": res.EpsilonLB, "confidence": res.Confidence, "trials": o.trials,
		"tpr": res.TPR, "fpr": res.FPR}
	if noiseOff {
		line["noise"] = "off"
		return line, nil
	}
	claimed, err := claimedEpsilon(spent, c.delta)
	if err != nil {
		return nil, err
	}
	line["claimed_epsilon"] = claimed
	line["violation"] = res.EpsilonLB > claimed
	return line, nil
}

// claimedEpsilon is what events cost at delta, by the accountant.
func claimedEpsilon(events []privacy.Event, delta float64) (float64, error) {
	if delta == 0 {
		delta = 1e-5 // only converts Gaussian events; pure ones ignore it
	}
	cost, err := accountant.Compose(events, delta)
	if err != nil {
		return 0, err
	}
	return cost.Epsilon, nil
}

// The attack corpus: attackV words, word 0 the planted word, never in the
// base documents.
const (
	attackV     = 24
	attackDocs  = 12
	attackDocLn = 8
	plantedWord = 0
)

func attackVocab() []string {
	v := make([]string, attackV)
	v[0] = "zqxplanted"
	for i := 1; i < attackV; i++ {
		v[i] = fmt.Sprintf("w%02d", i)
	}
	return v
}

// baseDocs returns the base documents: deterministic, no planted word.
func baseDocs() [][]int32 {
	docs := make([][]int32, attackDocs)
	for d := range docs {
		for i := range attackDocLn {
			docs[d] = append(docs[d], int32((d*7+i*3+d*i)%(attackV-1)+1))
		}
	}
	return docs
}

// plantedDoc is a document of the planted word and two common words.
func plantedDoc() []int32 {
	return []int32{plantedWord, 1, 2, plantedWord, 3, plantedWord, 4, 5}
}

func toCorpus(docs [][]int32) *corpus.Corpus {
	c := &corpus.Corpus{V: attackV, DocStart: []int{0}}
	for d, doc := range docs {
		c.Words = append(c.Words, doc...)
		c.DocStart = append(c.DocStart, len(c.Words))
		c.IDs = append(c.IDs, fmt.Sprintf("d%d", d))
	}
	return c
}

// withOccurrence is the base documents with one more occurrence of the
// planted word at the end of document 0.
func withOccurrence() [][]int32 {
	docs := baseDocs()
	docs[0] = append(docs[0], plantedWord)
	return docs
}

// withDocument is the base documents with the planted document added.
func withDocument() [][]int32 { return append(baseDocs(), plantedDoc()) }

func setup(seed uint64, parties int, params any) (fed.Setup, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return fed.Setup{}, err
	}
	s := fed.Setup{Run: "attack", Vocab: attackVocab(), Seed: seed, Params: p}
	for i := range parties {
		s.Parties = append(s.Parties, fmt.Sprintf("p%d", i))
	}
	return s, nil
}

// plantedMass is the statistic of the model-level games: the probability
// the released topics give the planted word, summed over topics.
func plantedMass(m *topic.Model) float64 {
	var s float64
	for k := range m.K {
		s += m.Phi[k*m.V+plantedWord]
	}
	return s
}

// trialSeed gives each trial its own noise.
func trialSeed(seed uint64, trial int) uint64 { return seed*1_000_003 + uint64(trial) + 1 }

// ftmMechanismGame plays against the mechanism FTM's Learner privatizes
// every token with (privacy.ThresholdedLaplace at FTM's default ε and τ):
// one token's count vector with or without its indicator.
func ftmMechanismGame(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error) {
	events, err := ftm.Config{}.Events()
	if err != nil {
		return nil, nil, err
	}
	eps := events[0].Epsilon
	m, err := privacy.NewThresholdedLaplace(privacy.ThresholdedLaplaceConfig{Epsilon: eps, Threshold: ftm.AutoTau(eps, attackV), Vocab: attackV})
	if err != nil {
		return nil, nil, err
	}
	src := privacy.NewSeededSource(seed)
	g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		var counts []privacy.Count
		if in {
			counts = []privacy.Count{{Word: plantedWord, N: 1}}
		}
		if noiseOff {
			return float64(len(counts)), nil
		}
		for _, e := range m.DrawCounts(src.Stream("trial", trial, in), counts, nil) {
			if e.Word == plantedWord {
				return float64(e.Value), nil
			}
		}
		return 0, nil
	})
	return g, events, nil
}

// ftmGame plays against an FTM party's first update, decoded by FTM's
// aggregator: one occurrence of the planted word present or absent.
func ftmGame(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error) {
	params := map[string]any{"topics": []int{3}, "local_iterations": 2, "no_noise": noiseOff}
	spent, err := ftm.Config{}.Events()
	if err != nil {
		return nil, nil, err
	}
	g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		s, err := setup(trialSeed(seed, trial), 1, params)
		if err != nil {
			return 0, err
		}
		docs := baseDocs()
		if in {
			docs = withOccurrence()
		}
		l, err := ftm.NewLearner(s, 0, toCorpus(docs))
		if err != nil {
			return 0, err
		}
		a, err := ftm.NewAggregator(s)
		if err != nil {
			return 0, err
		}
		return learnOnce(l, a)
	})
	return g, spent, nil
}

// modelAggregator is an aggregator that presents its state as a model.
type modelAggregator interface {
	fed.Aggregator
	fed.Modeler
}

// learnOnce runs round 1 of a one-party federation and returns the
// planted word's mass in the aggregator's model.
func learnOnce(l fed.Learner, a modelAggregator) (float64, error) {
	init, err := a.Init()
	if err != nil {
		return 0, err
	}
	st, err := l.Learn(1, init.Payload)
	if err != nil {
		return 0, err
	}
	if _, err := a.Aggregate(1, []fed.Update{{Party: 0, ID: "p0", Payload: st.Payload, Spent: st.Spent}}); err != nil {
		return 0, err
	}
	m, err := a.Model()
	if err != nil {
		return 0, err
	}
	return plantedMass(m), nil
}

// pctdGame plays against a PC-TD party's first M_t, decoded by PC-TD's
// aggregator: for VariantUnit one occurrence present or absent (the
// paper's σ = 0.25), for VariantSSP the planted document present or absent
// (default ε and rounds; one round attacked).
func pctdGame(variant string) func(uint64, bool) (attack.Game, []privacy.Event, error) {
	return func(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error) {
		params := map[string]any{"variant": variant, "topics": 3, "no_noise": noiseOff, "max_doc_tokens": pctdDefaultMaxDocLength}
		if variant == pctd.VariantUnit {
			params["sigma"] = 0.25
		}
		var spent []privacy.Event
		g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
			s, err := setup(trialSeed(seed, trial), 1, params)
			if err != nil {
				return 0, err
			}
			docs := baseDocs()
			switch {
			case in && variant == pctd.VariantUnit:
				docs = withOccurrence()
			case in:
				docs = withDocument()
			}
			l, err := pctd.NewLearner(s, 0, toCorpus(docs))
			if err != nil {
				return 0, err
			}
			a, err := pctd.NewAggregator(s)
			if err != nil {
				return 0, err
			}
			return learnOnce(l, a)
		})
		s, err := setup(seed, 1, params)
		if err != nil {
			return nil, nil, err
		}
		l, err := pctd.NewLearner(s, 0, toCorpus(baseDocs()))
		if err != nil {
			return nil, nil, err
		}
		if spent, err = l.Plan(1); err != nil {
			return nil, nil, err
		}
		return g, spent, nil
	}
}

// fedldaGame plays against one FedLDA iteration's tuples, decoded by the
// collector: user 0's document is the planted document or a base document
// of the same length (the local model's adjacency: one user's data
// replaced). The statistic is the collector's count of the planted word.
func fedldaGame(mech string) func(uint64, bool) (attack.Game, []privacy.Event, error) {
	return func(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error) {
		m := mech
		if noiseOff {
			m = fedlda.MechanismNone
		}
		params := map[string]any{"mechanism": m, "k": 3}
		g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
			s, err := setup(trialSeed(seed, trial), 1, params)
			if err != nil {
				return 0, err
			}
			docs := baseDocs()
			if in {
				docs[0] = plantedDoc()
			}
			l, err := fedlda.NewLearner(s, 0, toCorpus(docs))
			if err != nil {
				return 0, err
			}
			a, err := fedlda.NewAggregator(s)
			if err != nil {
				return 0, err
			}
			init, err := a.Init()
			if err != nil {
				return 0, err
			}
			st, err := l.Learn(1, init.Payload)
			if err != nil {
				return 0, err
			}
			if _, err := a.Aggregate(1, []fed.Update{{Party: 0, ID: "p0", Payload: st.Payload}}); err != nil {
				return 0, err
			}
			var n float64
			counts := a.Counts()
			for k := range len(counts) / attackV {
				n += float64(counts[k*attackV+plantedWord])
			}
			return n, nil
		})
		spent, err := fedlda.Config{Mechanism: mech, K: 3}.Events()
		if err != nil {
			return nil, nil, err
		}
		return g, spent, nil
	}
}

// fednmfGame plays against one DP-FedAvg round of FedNMF (clip S = 1,
// noise multiplier z = 1, every client sampled), as the coordinator
// releases it: client 0, whose documents hold the planted word, takes part
// or not. The statistic is the change of the planted word's row of W
// between the broadcasts before and after the round.
func fednmfGame(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error) {
	cfg := fednmf.Config{K: 3, Clip: 1, NoiseMultiplier: 1, ClientFraction: 1}
	params := map[string]any{"k": 3, "clip": 1.0, "noise_multiplier": 1.0, "client_fraction": 1.0}
	if noiseOff {
		params = map[string]any{"k": 3, "client_fraction": 1.0}
	}
	planted := [][]int32{plantedDoc(), plantedDoc(), baseDocs()[0]}
	g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		s, err := setup(trialSeed(seed, trial), 2, params)
		if err != nil {
			return 0, err
		}
		a, err := fednmf.NewAggregator(s)
		if err != nil {
			return 0, err
		}
		init, err := a.Init()
		if err != nil {
			return 0, err
		}
		before := a.W()
		var ups []fed.Update
		for p, docs := range [][][]int32{planted, baseDocs()} {
			if p == 0 && !in {
				continue
			}
			// The clients' own randomness is fixed; only the
			// coordinator's noise differs between trials.
			ls, err := setup(seed, 2, params)
			if err != nil {
				return 0, err
			}
			l, err := fednmf.NewLearner(ls, p, toCorpus(docs))
			if err != nil {
				return 0, err
			}
			b := init.Payload
			if p < len(init.PerParty) && init.PerParty[p] != nil {
				b = init.PerParty[p]
			}
			st, err := l.Learn(1, b)
			if err != nil {
				return 0, err
			}
			ups = append(ups, fed.Update{Party: p, ID: s.Parties[p], Payload: st.Payload})
		}
		if _, err := a.Aggregate(1, ups); err != nil {
			return 0, err
		}
		w := a.W()
		var x float64
		for k := range 3 {
			x += w[plantedWord*3+k] - before[plantedWord*3+k]
		}
		return x, nil
	})
	ev, _ := cfg.RoundEvent(fednmf.UnitClient)
	return g, []privacy.Event{ev}, nil
}

// vocabGame plays against a party's private vocabulary release (the
// partition selection of sim/vocabround, ε = 1, δ = 1e-5), decoded by
// vocabround.Decode: the planted document present or absent. The statistic
// is 1 when the planted word is released. Without noise the release is the
// plain set of words present.
func vocabGame(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error) {
	p := vocabround.Params{Selection: privacy.PartitionSelectionConfig{Epsilon: 1, Delta: 1e-5}}
	vocab := attackVocab()
	words := func(in bool) [][]string {
		docs := baseDocs()
		if in {
			docs = withDocument()
		}
		out := make([][]string, len(docs))
		for d, doc := range docs {
			for _, w := range doc {
				out[d] = append(out[d], vocab[w])
			}
		}
		return out
	}
	src := privacy.NewSeededSource(seed)
	g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		docs := words(in)
		if noiseOff {
			for _, d := range docs {
				if slices.Contains(d, vocab[plantedWord]) {
					return 1, nil
				}
			}
			return 0, nil
		}
		l, err := vocabround.NewLearner(p, docs, src.Stream("trial", trial, in))
		if err != nil {
			return 0, err
		}
		st, err := l.Learn(1, nil)
		if err != nil {
			return 0, err
		}
		got, err := vocabround.Decode(st.Payload, p)
		if err != nil {
			return 0, err
		}
		if slices.Contains(got, vocab[plantedWord]) {
			return 1, nil
		}
		return 0, nil
	})
	l, err := vocabround.NewLearner(p, words(false), src.Stream("plan"))
	if err != nil {
		return nil, nil, err
	}
	spent, err := l.Plan(1)
	return g, spent, err
}
