package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/secagg"
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
		Short: "privacy attacks: what every private method's release leaks, beside what its ε allows",
		Long: `attacks plays privacy attacks against every private method's real release
path, on a small synthetic corpus, and writes one JSON line per method,
attack and setting. Every line has method, attack, noise ("on": the method
as configured; "off": the same release without noise, which shows the
attack has power) and, with noise on, claimed_epsilon (what the release
costs the unit attacked, composed by the accountant; null when nothing is
guaranteed) and violation.

  word-presence: one planted word (or document, or user, or client)
    present or absent; epsilon_lb is the Clopper–Pearson lower bound on ε
    from the attack's false-positive and false-negative rates (tpr, fpr,
    trials, confidence, delta).
  differencing: PC-TD's sufficient statistics under secure aggregation
    with distributed noise, a party dropping after round 1; the
    coordinator differences the two rounds' sums. Fields as above; the
    claim is the dropped party's own per-round charge.
  membership: a document in a party's corpus or not, scored by its
    likelihood under the released topics; auc and tpr_at_fpr_0.001 and
    _0.01 beside max_auc and max_tpr_at_fpr_… (the most an (ε, δ)-DP
    release allows), and epsilon_lb.
  canary-exposure: a canary document inserted 1, 5 or 20 times
    (insertions), ranked among candidates; exposure_mean and exposure_max
    over runs (trials/100), exposure_ceiling (the canary ranked first),
    and max_exposure, the largest the claim allows for that many copies
    with probability 1 − alpha (null when the claim allows any).

With noise on, epsilon_lb must stay at or below claimed_epsilon and
exposure_max at or below max_exposure; a line with "violation": true
reports a bound above the claim. The bound can never exceed about
ln(trials/ln(2/(1−confidence))), whatever the mechanism, so a large
claimed ε shows as a bound far below it (docs/attacks.md).`,
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
	attack       string // "word-presence" when empty
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
		{method: "fedlda-rrp", unit: fedlda.Unit, delta: rrpClaimDelta(), game: fedldaGame(fedlda.MechanismRRP)},
		{method: "fednmf-dp", unit: fednmf.UnitClient, delta: 1e-5, game: fednmfGame},
		{method: "vocabulary", unit: "document", delta: 1e-5, game: vocabGame},
		{method: "pctd-ssp-dropout", attack: "differencing", unit: "document", delta: pctd.DefaultDelta, game: pctdDropoutGame},
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
	var rcs []releaseCase
	for _, rc := range releaseCases() {
		if o.methods == nil || slices.Contains(o.methods, rc.method) {
			rcs = append(rcs, rc)
		}
	}
	for _, rc := range rcs {
		for _, off := range []bool{false, true} {
			line, err := membershipLine(ctx, rc, off, o)
			if err != nil {
				return fmt.Errorf("experiment attacks: %s: membership: %w", rc.method, err)
			}
			fmt.Fprintf(log, "attacks: %s, membership, noise %s: AUC %.3g, TPR %.3g at FPR 0.001, ε lower bound %.3g\n", rc.method, line["noise"], line["auc"], line["tpr_at_fpr_0.001"], line["epsilon_lb"])
			if err := enc.Encode(line); err != nil {
				return fmt.Errorf("experiment attacks: %w", err)
			}
		}
	}
	lines, err := exposureLines(ctx, rcs, max(1, o.trials/100), o.seed, o.alpha)
	if err != nil {
		return fmt.Errorf("experiment attacks: canary exposure: %w", err)
	}
	for _, line := range lines {
		fmt.Fprintf(log, "attacks: %s, canary ×%d, noise %s: exposure %.3g (largest of %d runs, ceiling %.3g)\n", line["method"], line["insertions"], line["noise"], line["exposure_max"], line["runs"], line["exposure_ceiling"])
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("experiment attacks: %w", err)
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
	name := c.attack
	if name == "" {
		name = "word-presence"
	}
	line := map[string]any{"method": c.method, "attack": name, "unit": c.unit, "noise": "on",
		"delta": c.delta, "epsilon_lb": res.EpsilonLB, "confidence": res.Confidence, "trials": o.trials,
		"tpr": res.TPR, "fpr": res.FPR}
	if noiseOff {
		line["noise"] = "off"
		return line, nil
	}
	cost, err := claimedCost(spent, c.delta)
	if err != nil {
		return nil, err
	}
	// A claim whose δ is 1 or more guarantees nothing (FedLDA's RRP at its
	// default truncation): no bound can violate it.
	line["claimed_epsilon"], line["claimed_delta"] = cost.Epsilon, cost.Delta
	line["violation"] = cost.Delta < 1 && res.EpsilonLB > cost.Epsilon
	return line, nil
}

// claimedEpsilon is the ε events cost at delta, by the accountant.
func claimedEpsilon(events []privacy.Event, delta float64) (float64, error) {
	cost, err := claimedCost(events, delta)
	return cost.Epsilon, err
}

// claimedCost is what events cost at delta, by the accountant: the δ is
// delta for Gaussian releases and what the events carry for the others.
func claimedCost(events []privacy.Event, delta float64) (accountant.Cost, error) {
	if delta == 0 {
		delta = 1e-5 // only converts Gaussian events; pure ones ignore it
	}
	return accountant.Compose(events, delta)
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

func toCorpus(docs [][]int32) *corpus.Corpus { return toCorpusV(docs, attackV) }

// toCorpusV is toCorpus over a vocabulary of v words.
func toCorpusV(docs [][]int32, v int) *corpus.Corpus {
	c := &corpus.Corpus{V: v, DocStart: []int{0}}
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
	return setupVocab(seed, parties, params, attackVocab())
}

// setupVocab is setup over the vocabulary vocab.
func setupVocab(seed uint64, parties int, params any, vocab []string) (fed.Setup, error) {
	p, err := json.Marshal(params)
	if err != nil {
		return fed.Setup{}, err
	}
	s := fed.Setup{Run: "attack", Vocab: vocab, Seed: seed, Params: p}
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
	m, err := learnModel(l, a)
	if err != nil {
		return 0, err
	}
	return plantedMass(m), nil
}

// learnModel runs round 1 of a one-party federation and returns the
// aggregator's model: what the coordinator releases after it.
func learnModel(l fed.Learner, a modelAggregator) (*topic.Model, error) {
	init, err := a.Init()
	if err != nil {
		return nil, err
	}
	st, err := l.Learn(1, init.Payload)
	if err != nil {
		return nil, err
	}
	if _, err := a.Aggregate(1, []fed.Update{{Party: 0, ID: "p0", Payload: st.Payload, Spent: st.Spent}}); err != nil {
		return nil, err
	}
	return a.Model()
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

// attackRRPTruncation is the truncation δ FedLDA's RRP is played at: small
// enough that one iteration's δ (2δ per tuple, 14 tuples) is a guarantee,
// as simulate requires of a run; the default 0.05 gives none.
const attackRRPTruncation = 1e-7

// fedldaConfig is the FedLDA configuration the games play: mechanism mech,
// 3 topics, RRP at attackRRPTruncation.
func fedldaConfig(mech string) fedlda.Config {
	c := fedlda.Config{Mechanism: mech, K: 3}
	if mech == fedlda.MechanismRRP {
		c.Truncation = attackRRPTruncation
	}
	return c
}

// fedldaParams is fedldaConfig as a Setup's parameters.
func fedldaParams(mech string) map[string]any {
	p := map[string]any{"mechanism": mech, "k": 3}
	if mech == fedlda.MechanismRRP {
		p["truncation"] = attackRRPTruncation
	}
	return p
}

// rrpClaimDelta is the δ of one RRP iteration as played.
func rrpClaimDelta() float64 {
	ev, err := fedldaConfig(fedlda.MechanismRRP).Events()
	if err != nil || len(ev) == 0 {
		return 0
	}
	return ev[0].Delta * float64(ev[0].Count)
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
		params := fedldaParams(m)
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
		spent, err := fedldaConfig(mech).Events()
		if err != nil {
			return nil, nil, err
		}
		return g, spent, nil
	}
}

// fednmfGame plays against one DP-FedAvg round of FedNMF (clip S = 1,
// noise multiplier z = 1, every client sampled), as the coordinator
// releases it: client 0, whose documents hold the planted word, takes part
// or not. The statistic projects the round's change of W onto the
// direction client 0's clipped update moves it: the attacker, who knows
// both worlds, replays the round with the noise all but off (z = 10⁻¹²)
// with and without client 0 and takes the difference of the two changes;
// the released change, less the change without client 0, is projected on
// it. The Gaussian noise off that direction is ignored, which is the
// most powerful test against the Gaussian mechanism. Without noise the
// released round itself is played at z = 10⁻¹².
func fednmfGame(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error) {
	cfg := fednmf.Config{K: 3, Clip: 1, NoiseMultiplier: 1, ClientFraction: 1}
	const quiet = 1e-12
	z := 1.0
	if noiseOff {
		z = quiet
	}
	planted := [][]int32{plantedDoc(), plantedDoc(), baseDocs()[0]}
	// round returns the change of W over round 1 at noise multiplier nm.
	round := func(trial int, nm float64, in bool) ([]float64, error) {
		params := map[string]any{"k": 3, "clip": 1.0, "noise_multiplier": nm, "client_fraction": 1.0}
		s, err := setup(trialSeed(seed, trial), 2, params)
		if err != nil {
			return nil, err
		}
		a, err := fednmf.NewAggregator(s)
		if err != nil {
			return nil, err
		}
		init, err := a.Init()
		if err != nil {
			return nil, err
		}
		before := a.W()
		var cs []nmfClient
		for p, docs := range [][][]int32{planted, baseDocs()} {
			if p == 0 && !in {
				continue
			}
			// The clients' own randomness is fixed; only the
			// coordinator's (its initial W and its noise) differs
			// between trials.
			ls, err := setup(seed, 2, params)
			if err != nil {
				return nil, err
			}
			l, err := fednmf.NewLearner(ls, p, toCorpus(docs))
			if err != nil {
				return nil, err
			}
			cs = append(cs, nmfClient{p, l})
		}
		if err := fednmfRound(a, init, s.Parties, cs); err != nil {
			return nil, err
		}
		w := a.W()
		for i := range w {
			w[i] -= before[i]
		}
		return w, nil
	}
	// The attacker's replay of a trial, shared by its two plays.
	var (
		cached       = -1
		dir, without []float64
	)
	g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		if trial != cached {
			with, err := round(trial, quiet, true)
			if err != nil {
				return 0, err
			}
			if without, err = round(trial, quiet, false); err != nil {
				return 0, err
			}
			dir = make([]float64, len(with))
			for i := range with {
				dir[i] = with[i] - without[i]
			}
			cached = trial
		}
		released, err := round(trial, z, in)
		if err != nil {
			return 0, err
		}
		var x float64
		for i := range released {
			x += (released[i] - without[i]) * dir[i]
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
	// One learner per world, built once (building one sets the threshold,
	// which takes milliseconds); each trial's release draws fresh noise
	// from the world's stream, trials in order.
	learners := map[bool]*vocabround.Learner{}
	for _, in := range []bool{true, false} {
		l, err := vocabround.NewLearner(p, words(in), src.Stream("world", in))
		if err != nil {
			return nil, nil, err
		}
		learners[in] = l
	}
	g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		if noiseOff {
			for _, d := range words(in) {
				if slices.Contains(d, vocab[plantedWord]) {
					return 1, nil
				}
			}
			return 0, nil
		}
		st, err := learners[in].Learn(1, nil)
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

// The canary game (Carlini et al., "The Secret Sharer", 2019): the
// vocabulary has canaryWords reserved words, c00 … c15, that no base
// document holds; a canary is a set of canaryLen of them, written into a
// document with two common words, and one party's corpus holds that
// document k times. The attacker ranks every candidate set by how well the
// released topics explain it and the canary's rank gives its exposure.
const (
	canaryWords = 16
	canaryLen   = 3
	canaryV     = attackV + canaryWords
)

// canaryInsertions are the numbers of copies of the canary played.
var canaryInsertions = []int{1, 5, 20}

func canaryVocab() []string {
	v := attackVocab()
	for i := range canaryWords {
		v = append(v, fmt.Sprintf("c%02d", i))
	}
	return v
}

// canarySets returns every canaryLen-subset of the reserved words, as
// word ids in increasing order, in lexicographic order.
func canarySets() [][]int32 {
	var out [][]int32
	var rec func(start int, cur []int32)
	rec = func(start int, cur []int32) {
		if len(cur) == canaryLen {
			out = append(out, slices.Clone(cur))
			return
		}
		for w := start; w < canaryWords; w++ {
			rec(w+1, append(cur, int32(attackV+w)))
		}
	}
	rec(0, nil)
	return out
}

// canaryDoc is the document that carries the canary set.
func canaryDoc(set []int32) []int32 { return []int32{set[0], 1, set[1], 2, set[2]} }

// setScore is the attacker's score of a candidate set: the log-likelihood
// of its words drawn from one topic of m, the best topic weighing most
// (log Σ_k Π_w φ_k(w), up to a constant).
func setScore(m *topic.Model, set []int32) float64 {
	logs := make([]float64, m.K)
	for k := range m.K {
		for _, w := range set {
			logs[k] += math.Log(m.Phi[k*m.V+int(w)])
		}
	}
	return logSumExp(logs)
}

// logSumExp returns log Σ exp(x), −Inf for no terms or all −Inf.
func logSumExp(x []float64) float64 {
	hi := math.Inf(-1)
	for _, v := range x {
		hi = max(hi, v)
	}
	if math.IsInf(hi, -1) {
		return hi
	}
	var s float64
	for _, v := range x {
		s += math.Exp(v - hi)
	}
	return hi + math.Log(s)
}

// releaser makes a method's release from party 0's documents over the
// canary vocabulary: the model its coordinator holds after one round, with
// the randomness of seed.
type releaser func(seed uint64, noiseOff bool, docs [][]int32) (*topic.Model, error)

// releaseCase is a method's release with its privacy unit, what one
// release claims (the word-presence case of the same name), and how many
// units k copies of a document are.
type releaseCase struct {
	method  string
	release releaser
	group   func(k, docLen int) int
}

func wordGroup(k, docLen int) int { return k * docLen }
func docGroup(k, _ int) int       { return k }
func clientGroup(_, _ int) int    { return 1 }

// releaseCases lists the methods whose released model the canary and
// membership games attack, in output order.
func releaseCases() []releaseCase {
	return []releaseCase{
		{method: "ftm", release: ftmRelease, group: wordGroup},
		{method: "pctd-unit", release: pctdRelease(pctd.VariantUnit), group: wordGroup},
		{method: "pctd-ssp", release: pctdRelease(pctd.VariantSSP), group: docGroup},
		{method: "fedlda-krr", release: fedldaRelease(fedlda.MechanismKRR), group: docGroup},
		{method: "fedlda-tkrr", release: fedldaRelease(fedlda.MechanismTKRR), group: docGroup},
		{method: "fedlda-rrp", release: fedldaRelease(fedlda.MechanismRRP), group: docGroup},
		{method: "fednmf-dp", release: fednmfRelease, group: clientGroup},
	}
}

func ftmRelease(seed uint64, noiseOff bool, docs [][]int32) (*topic.Model, error) {
	return oneParty(ftm.Algorithm, seed, map[string]any{"topics": []int{3}, "local_iterations": 2, "no_noise": noiseOff}, docs)
}

// oneParty is alg's release when one party holds docs: the party learns
// one round from the coordinator's first broadcast, and the coordinator's
// model after it.
func oneParty(alg fed.Algorithm, seed uint64, params map[string]any, docs [][]int32) (*topic.Model, error) {
	s, err := setupVocab(seed, 1, params, canaryVocab())
	if err != nil {
		return nil, err
	}
	l, err := alg.NewLearner(s, 0, toCorpusV(docs, canaryV))
	if err != nil {
		return nil, err
	}
	a, err := alg.NewAggregator(s)
	if err != nil {
		return nil, err
	}
	m, ok := a.(modelAggregator)
	if !ok {
		return nil, fmt.Errorf("%s: the aggregator has no model", alg.Name)
	}
	return learnModel(l, m)
}

func pctdRelease(variant string) releaser {
	return func(seed uint64, noiseOff bool, docs [][]int32) (*topic.Model, error) {
		params := map[string]any{"variant": variant, "topics": 3, "no_noise": noiseOff, "max_doc_tokens": pctdDefaultMaxDocLength}
		if variant == pctd.VariantUnit {
			params["sigma"] = 0.25
		}
		return oneParty(pctd.Algorithm, seed, params, docs)
	}
}

func fedldaRelease(mech string) releaser {
	return func(seed uint64, noiseOff bool, docs [][]int32) (*topic.Model, error) {
		m := mech
		if noiseOff {
			m = fedlda.MechanismNone
		}
		return oneParty(fedlda.Algorithm, seed, fedldaParams(m), docs)
	}
}

// fednmfRelease is one DP-FedAvg round of FedNMF (clip 1, noise multiplier
// 1, both clients sampled): client 0 holds docs, client 1 the base
// documents.
func fednmfRelease(seed uint64, noiseOff bool, docs [][]int32) (*topic.Model, error) {
	params := map[string]any{"k": 3, "clip": 1.0, "noise_multiplier": 1.0, "client_fraction": 1.0}
	if noiseOff {
		params = map[string]any{"k": 3, "client_fraction": 1.0}
	}
	s, err := setupVocab(seed, 2, params, canaryVocab())
	if err != nil {
		return nil, err
	}
	a, err := fednmf.NewAggregator(s)
	if err != nil {
		return nil, err
	}
	init, err := a.Init()
	if err != nil {
		return nil, err
	}
	var cs []nmfClient
	for p, d := range [][][]int32{docs, baseDocs()} {
		l, err := fednmf.NewLearner(s, p, toCorpusV(d, canaryV))
		if err != nil {
			return nil, err
		}
		cs = append(cs, nmfClient{p, l})
	}
	if err := fednmfRound(a, init, s.Parties, cs); err != nil {
		return nil, err
	}
	return a.Model()
}

// nmfClient is a FedNMF client taking part in an attack's round: its
// party index and its learner.
type nmfClient struct {
	p int
	l *fednmf.Learner
}

// fednmfRound plays FedNMF's first round: every client learns from the
// coordinator's first broadcast (its own, where the coordinator sent one
// per party) and the aggregator takes their updates.
func fednmfRound(a *fednmf.Aggregator, init fed.Step, ids []string, cs []nmfClient) error {
	var ups []fed.Update
	for _, c := range cs {
		b := init.Payload
		if c.p < len(init.PerParty) && init.PerParty[c.p] != nil {
			b = init.PerParty[c.p]
		}
		st, err := c.l.Learn(1, b)
		if err != nil {
			return err
		}
		ups = append(ups, fed.Update{Party: c.p, ID: ids[c.p], Payload: st.Payload})
	}
	_, err := a.Aggregate(1, ups)
	return err
}

// claimOf returns the events of one release of the word-presence case
// named method, and its δ.
func claimOf(method string, seed uint64) ([]privacy.Event, float64, error) {
	for _, c := range attackCases() {
		if c.method == method {
			_, spent, err := c.game(seed, false)
			return spent, c.delta, err
		}
	}
	return nil, 0, fmt.Errorf("no claim for %s", method)
}

// exposureBound returns the exposure that one run exceeds with
// probability at most beta when events are what one release costs a unit
// and the canary's copies are g units: the events grouped to g units
// (accountant.Group: kε for pure releases, kΔ for Gaussian ones), composed
// at δ = beta/2, and passed to attack.MaxExposure. +Inf when the grouped
// release has no guarantee left below beta.
func exposureBound(events []privacy.Event, g int, beta float64) (float64, error) {
	var grouped []privacy.Event
	for _, e := range events {
		ge, err := accountant.Group(e, g, "group")
		if errors.Is(err, privacy.ErrInvalidParameter) && e.Validate() == nil {
			return math.Inf(1), nil // δ grew past 1: no guarantee
		}
		if err != nil {
			return 0, err
		}
		grouped = append(grouped, ge)
	}
	cost, err := accountant.Compose(grouped, beta/2)
	if err != nil {
		return 0, err
	}
	if cost.Delta >= beta {
		return math.Inf(1), nil
	}
	return attack.MaxExposure(cost.Epsilon, cost.Delta, 1, beta)
}

// exposureRun plays one canary run: the canary drawn with seed from the
// candidate sets, inserted k times into the base documents, released, and
// ranked among the other candidates.
func exposureRun(rc releaseCase, seed uint64, k int, noiseOff bool) (float64, error) {
	sets := canarySets()
	pick := int(trialSeed(seed, k) % uint64(len(sets)))
	docs := baseDocs()
	for range k {
		docs = append(docs, canaryDoc(sets[pick]))
	}
	m, err := rc.release(seed, noiseOff, docs)
	if err != nil {
		return 0, err
	}
	var ref []float64
	for i, set := range sets {
		if i != pick {
			ref = append(ref, setScore(m, set))
		}
	}
	return attack.Exposure(setScore(m, sets[pick]), ref), nil
}

// exposureLines plays runs canary runs per method, insertion count and
// noise setting, and returns a line for each: the mean and largest
// exposure beside the largest that the method's claim allows with
// probability 1 − beta over all the line's runs (null when the claim
// allows any exposure).
func exposureLines(ctx context.Context, cases []releaseCase, runs int, seed uint64, beta float64) ([]map[string]any, error) {
	var lines []map[string]any
	for _, rc := range cases {
		events, delta, err := claimOf(rc.method, seed)
		if err != nil {
			return nil, err
		}
		eps, err := claimedEpsilon(events, delta)
		if err != nil {
			return nil, err
		}
		for _, k := range canaryInsertions {
			for _, off := range []bool{false, true} {
				var sum, hi float64
				for r := range runs {
					if err := ctx.Err(); err != nil {
						return nil, err
					}
					x, err := exposureRun(rc, trialSeed(seed, r), k, off)
					if err != nil {
						return nil, fmt.Errorf("%s, %d insertions: %w", rc.method, k, err)
					}
					sum += x
					hi = max(hi, x)
				}
				line := map[string]any{"method": rc.method, "attack": "canary-exposure", "noise": "on", "insertions": k,
					"candidates": len(canarySets()), "runs": runs, "exposure_mean": sum / float64(runs), "exposure_max": hi,
					"exposure_ceiling": math.Log2(float64(len(canarySets())))}
				if off {
					line["noise"] = "off"
				} else {
					g := rc.group(k, len(canaryDoc(canarySets()[0])))
					bound, err := exposureBound(events, g, beta/float64(runs))
					if err != nil {
						return nil, err
					}
					line["claimed_epsilon"], line["delta"], line["group"], line["beta"] = eps, delta, g, beta
					line["max_exposure"] = nil
					if !math.IsInf(bound, 1) {
						line["max_exposure"] = bound
					}
					line["violation"] = hi > bound
				}
				lines = append(lines, line)
			}
		}
	}
	return lines, nil
}

// The differencing game: PC-TD's SSP variant under secure
// aggregation with distributed noise, three parties, threshold t = 2.
const (
	diffParties   = 3
	diffThreshold = 2
)

// pctdDropoutGame plays the coordinator's view across two rounds when a
// party drops: round 1 sums the M_t of all three parties, each with its
// share of the noise (drawn as secagg.AddNoise draws it, which the engine
// calls before masking; the masks cancel in the sum); party 0 drops before round 2,
// whose sum holds parties 1 and 2 only. The coordinator learns exactly the
// two sums. Party 0 holds the planted document or not; the statistic is
// the difference of the two sums in the planted word's entries, which
// isolates party 0's round-1 update but for the other parties' noise and
// drift. Party 0 is charged for one release of the sum at its worst case,
// t survivors and total noise σ; the bound must stay below that. The noise
// is PC-TD's default (ε = 10 over 20 rounds), calibrated once and then
// given to every trial's parties as the noise multiplier it comes to, which
// spares each trial the calibration.
func pctdDropoutGame(seed uint64, noiseOff bool) (attack.Game, []privacy.Event, error) {
	params := map[string]any{"variant": pctd.VariantSSP, "topics": 3, "no_noise": noiseOff,
		"max_doc_tokens": pctdDefaultMaxDocLength, "secure_threshold": diffThreshold}
	src := privacy.NewSeededSource(seed)
	// The party's noise: secagg.AddNoise's draw, with the sampler built
	// once rather than at every call; nil without noise.
	var dg *privacy.DiscreteGaussian
	learners := func(s fed.Setup, in bool) ([]*pctd.Learner, error) {
		var ls []*pctd.Learner
		for p := range diffParties {
			docs := baseDocs()
			if p == 0 && in {
				docs = withDocument()
			}
			l, err := pctd.NewLearner(s, p, toCorpus(docs))
			if err != nil {
				return nil, err
			}
			ls = append(ls, l)
		}
		return ls, nil
	}
	// sum is what secure aggregation unmasks: the parties' noisy vectors
	// added up.
	sum := func(ls []*pctd.Learner, parties []int, round int, broadcast []byte, noise func(p int) *rand.Rand) ([]int64, error) {
		var total []int64
		for _, p := range parties {
			v, _, err := ls[p].LearnSum(round, broadcast)
			if err != nil {
				return nil, err
			}
			if dg != nil {
				z := make([]int64, len(v))
				dg.Fill(noise(p), z)
				for i := range v {
					v[i] += z[i]
				}
			}
			if total == nil {
				total = make([]int64, len(v))
			}
			for i, x := range v {
				total[i] += x
			}
		}
		return total, nil
	}
	s, err := setup(seed, diffParties, params)
	if err != nil {
		return nil, nil, err
	}
	l, err := pctd.NewLearner(s, 0, toCorpus(baseDocs()))
	if err != nil {
		return nil, nil, err
	}
	spec := l.SumSpec()
	spent := []privacy.Event{{Mechanism: privacy.MechanismDiscreteGaussian, Sigma: spec.Sigma, Sensitivity: spec.Sensitivity, Unit: spec.Unit, Count: 1}}
	if !noiseOff {
		params["sigma"] = spec.Sigma / spec.Sensitivity
		ps, err := secagg.PartySigma(spec.Sigma, diffThreshold)
		if err != nil {
			return nil, nil, err
		}
		if dg, err = privacy.NewDiscreteGaussian(ps); err != nil {
			return nil, nil, err
		}
	}
	g := attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		s, err := setup(trialSeed(seed, trial), diffParties, params)
		if err != nil {
			return 0, err
		}
		ls, err := learners(s, in)
		if err != nil {
			return 0, err
		}
		a, err := pctd.NewAggregator(s)
		if err != nil {
			return 0, err
		}
		init, err := a.Init()
		if err != nil {
			return 0, err
		}
		noise := func(round int) func(int) *rand.Rand {
			return func(p int) *rand.Rand { return src.Stream("trial", trial, in, "round", round, "party", p) }
		}
		s1, err := sum(ls, []int{0, 1, 2}, 1, init.Payload, noise(1))
		if err != nil {
			return 0, err
		}
		st, err := a.AggregateSum(1, s1, []int{0, 1, 2})
		if err != nil {
			return 0, err
		}
		s2, err := sum(ls, []int{1, 2}, 2, st.Payload, noise(2))
		if err != nil {
			return 0, err
		}
		var x float64
		for k := range 3 {
			i := plantedWord*3 + k
			x += float64(s1[i] - s2[i])
		}
		return x, nil
	})
	return g, spent, nil
}

// The membership game: is the target document, an outlier of
// reserved words, in party 0's corpus? The attacker scores it by its
// likelihood under the released topics. Manzonelli et al.'s
// likelihood-ratio test divides by the target's likelihood under reference
// models trained without it; here the attacker knows the rest of the
// corpus exactly, so the reference is one fixed model and the ratio ranks
// documents as the likelihood does.
func membershipTarget() []int32 {
	return []int32{attackV, 1, attackV + 1, 2, attackV + 2, 3, attackV + 3, 4}
}

// docLogLik is log Σ_k Π_w φ_k(w) over the document's tokens (one topic
// per document, topics weighed alike), each φ floored at 1e−12 so that a
// word a model leaves out scores low rather than −Inf.
func docLogLik(m *topic.Model, doc []int32) float64 {
	logs := make([]float64, m.K)
	for k := range m.K {
		for _, w := range doc {
			logs[k] += math.Log(max(m.Phi[k*m.V+int(w)], 1e-12))
		}
	}
	return logSumExp(logs)
}

// recorder is a game that keeps the statistics of the trials from first
// on, so that the judged trials' scores give the ROC of the attack.
type recorder struct {
	g       attack.Game
	first   int
	in, out []float64
}

func (r *recorder) Play(ctx context.Context, trial int, in bool) (float64, error) {
	x, err := r.g.Play(ctx, trial, in)
	if err == nil && trial >= r.first {
		if in {
			r.in = append(r.in, x)
		} else {
			r.out = append(r.out, x)
		}
	}
	return x, err
}

// groupClaim is the (ε, δ) of events grouped to g units and composed at
// delta (ε = +Inf when no guarantee is left).
func groupClaim(events []privacy.Event, g int, delta float64) (float64, float64, error) {
	var grouped []privacy.Event
	for _, e := range events {
		ge, err := accountant.Group(e, g, "group")
		if errors.Is(err, privacy.ErrInvalidParameter) && e.Validate() == nil {
			return math.Inf(1), delta, nil
		}
		if err != nil {
			return 0, 0, err
		}
		grouped = append(grouped, ge)
	}
	if delta == 0 {
		delta = 1e-5
	}
	cost, err := accountant.Compose(grouped, delta)
	return cost.Epsilon, cost.Delta, err
}

// membershipLine plays the membership game against rc's release and
// returns its line: AUC and TPR at FPR 10⁻³ and 10⁻² on the judged trials,
// the ε lower bound, and beside them the largest AUC and TPRs the claim for
// one document allows (null when the claim is vacuous).
func membershipLine(ctx context.Context, rc releaseCase, noiseOff bool, o attackOptions) (map[string]any, error) {
	tgt := membershipTarget()
	g := &recorder{first: o.trials, g: attack.GameFunc(func(_ context.Context, trial int, in bool) (float64, error) {
		docs := baseDocs()
		if in {
			docs = append(docs, tgt)
		}
		m, err := rc.release(trialSeed(o.seed, trial), noiseOff, docs)
		if err != nil {
			return 0, err
		}
		return docLogLik(m, tgt), nil
	})}
	events, _, err := claimOf(rc.method, o.seed)
	if err != nil {
		return nil, err
	}
	eps, delta, err := groupClaim(events, rc.group(1, len(tgt)), 0)
	if err != nil {
		return nil, err
	}
	if delta >= 1 {
		eps, delta = math.Inf(1), 0 // no guarantee: the bound is judged without δ
	}
	res, err := attack.Estimate(ctx, g, attack.Config{Trials: o.trials, Delta: delta, Alpha: o.alpha})
	if err != nil {
		return nil, err
	}
	line := map[string]any{"method": rc.method, "attack": "membership", "unit": "document", "noise": "on",
		"trials": o.trials, "confidence": res.Confidence, "epsilon_lb": res.EpsilonLB, "delta": delta,
		"auc": attack.AUC(g.in, g.out), "tpr_at_fpr_0.001": attack.TPRAtFPR(g.in, g.out, 1e-3), "tpr_at_fpr_0.01": attack.TPRAtFPR(g.in, g.out, 1e-2)}
	if noiseOff {
		line["noise"] = "off"
		return line, nil
	}
	line["claimed_epsilon"], line["violation"] = nil, false // null: no guarantee for a document
	line["max_auc"], line["max_tpr_at_fpr_0.001"], line["max_tpr_at_fpr_0.01"] = nil, nil, nil
	if !math.IsInf(eps, 1) {
		line["claimed_epsilon"], line["violation"] = eps, res.EpsilonLB > eps
		line["max_auc"], line["max_tpr_at_fpr_0.001"], line["max_tpr_at_fpr_0.01"] = attack.MaxAUC(eps, delta), attack.MaxTPR(eps, delta, 1e-3), attack.MaxTPR(eps, delta, 1e-2)
	}
	return line, nil
}
