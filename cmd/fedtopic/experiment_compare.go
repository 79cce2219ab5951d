package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fedlda"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// compareFile is the name of experiment compare's result file in --out.
const compareFile = "compare.jsonl"

// compareFlags configure experiment compare.
type compareFlags struct {
	topics      int
	partyGrid   string
	epsilons    string
	delta       float64
	maxDocLen   int
	clipEpsilon float64 // ε of the private quantile; 0: the default
	clipQ       float64
	clipMax     int
	vocabFile   string
	testFile    string
	embeddings  string
	devFraction float64
	variants    string
	rounds      string
	iterations  int
	nmfClip     float64
	ftmMaxNoise float64 // FTM: the cap on expected noise entries per token that sets τ
	outDir      string
}

// compareVariant is one private method (or variant of one) as compare
// calibrates and runs it.
type compareVariant struct {
	name   string // "pctd-ssp"
	method string // the algorithm: "pctd"
	// knob names the setting calibrated to the budget; increasing says
	// whether the cost grows with it (an ε) or falls (a noise multiplier).
	knob       string
	increasing bool
	lo, hi     float64 // the knob's search range
	rounds     []int   // candidate numbers of rounds, chosen on the development documents
	// params returns the method's parameters at knob value x with r
	// rounds; noNoise asks for the same method without noise (ε = ∞).
	params func(c *compareRun, x float64, r int, noNoise bool) (any, error)
	// post, if set, returns post-processings of a run's global model (free
	// under differential privacy), each named by its setting; the one of
	// lowest development perplexity is kept.
	post func(m *topic.Model, params json.RawMessage, parties int) ([]postModel, error)
	// secure runs the method under secure aggregation with every party
	// required (t = n): each party adds its share of the noise, so the sum
	// carries the noise of one party instead of n.
	secure bool
	// note, if set, returns fields the line of a run with params records
	// beside them (FTM: its threshold and the noise it leaves per token).
	note func(c *compareRun, params json.RawMessage) (map[string]any, error)
}

// postModel is a global model after a post-processing.
type postModel struct {
	setting map[string]any
	model   *topic.Model
}

// compareRun is one compare invocation: the data, the settings and the
// measurements shared by every model.
type compareRun struct {
	x         *experiment
	f         *compareFlags
	dev       *corpus.Corpus // development documents, taken from each party's own
	maxLen    int
	clip      *privateClip // nil: --max-doc-length, fixed
	emb       *eval.Embeddings
	class     *classData
	vocabDesc string
	smooth    []float64      // each party's perplexity with a uniform topic beside its own
	locals    []*topic.Model // each party's own non-private model, the reference of its composed models
}

// compareVariants lists every private method and variant compare runs, in
// output order.
func compareVariants() []compareVariant {
	return []compareVariant{
		{name: "ftm", method: ftm.Algorithm.Name, knob: "epsilon_per_word", increasing: true, lo: 1e-4, hi: 1e3, rounds: []int{ftm.DefaultRounds},
			params: ftmParams, note: ftmNote},
		{name: "pctd-ssp", method: pctd.Algorithm.Name, knob: "epsilon_target", increasing: true, lo: 1e-4, hi: 1e4, rounds: []int{5, 10, 20},
			params: pctdParamsFor(pctd.VariantSSP, false, pctdOptions{})},
		{name: "pctd-ssp-threshold", method: pctd.Algorithm.Name, knob: "epsilon_target", increasing: true, lo: 1e-4, hi: 1e4, rounds: []int{5, 10, 20},
			params: pctdParamsFor(pctd.VariantSSP, false, pctdOptions{}), post: pctdThreshold},
		// The secure variant's noise must fit under the 32-bit sum's bound
		// with room for the data: below ε = 0.1 per document it does not.
		{name: "pctd-ssp-secure", method: pctd.Algorithm.Name, knob: "epsilon_target", increasing: true, lo: 0.1, hi: 1e4, rounds: []int{5, 10, 20},
			params: pctdParamsFor(pctd.VariantSSP, true, pctdOptions{}), post: pctdThreshold, secure: true},
		// As pctd-ssp-secure, with a noise schedule (round t's share of μ²
		// grows as 1.3^t), the final topics from the last 8 rounds' sums and
		// a prior of 0.25 on θ_d, chosen on the development documents
		// (docs/compare.md). The first rounds' noise fits under the sum's
		// bound from ε = 0.5.
		{name: "pctd-ssp-schedule", method: pctd.Algorithm.Name, knob: "epsilon_target", increasing: true, lo: 0.5, hi: 1e4, rounds: []int{10, 20, 40},
			params: pctdParamsFor(pctd.VariantSSP, true, pctdOptions{growth: 1.3, average: 8, thetaPrior: 0.25}), post: pctdThreshold, secure: true},
		{name: "pctd-unit", method: pctd.Algorithm.Name, knob: "epsilon_target", increasing: true, lo: 1e-4, hi: 1e4, rounds: []int{5, 10, 20},
			params: pctdParamsFor(pctd.VariantUnit, false, pctdOptions{})},
		{name: "fedlda-krr", method: fedlda.Algorithm.Name, knob: "epsilon_per_tuple", increasing: true, lo: 1e-6, hi: 1e3, rounds: []int{fedlda.DefaultRounds},
			params: fedldaParamsFor(fedlda.MechanismKRR)},
		{name: "fedlda-tkrr", method: fedlda.Algorithm.Name, knob: "epsilon_per_tuple", increasing: true, lo: 1e-6, hi: 1e3, rounds: []int{fedlda.DefaultRounds},
			params: fedldaParamsFor(fedlda.MechanismTKRR)},
		{name: "fednmf-dp", method: fednmf.Algorithm.Name, knob: "noise_multiplier", increasing: false, lo: 1e-3, hi: 1e6, rounds: []int{30},
			params: func(c *compareRun, x float64, r int, noNoise bool) (any, error) {
				cfg := fednmf.Config{K: c.f.topics, Rounds: r, ClientFraction: 1, Clip: c.f.nmfClip, NoiseMultiplier: x}
				if noNoise {
					cfg.Clip, cfg.NoiseMultiplier = 0, 0
				}
				return cfg, cfg.Validate()
			}},
	}
}

// fedldaParamsFor builds FedLDA's parameters for a mechanism: the knob is
// ε per tuple.
func fedldaParamsFor(mech string) func(c *compareRun, x float64, r int, noNoise bool) (any, error) {
	return func(c *compareRun, x float64, r int, noNoise bool) (any, error) {
		cfg := fedlda.Config{K: c.f.topics, Rounds: r, Mechanism: mech, Epsilon: x, MaxDocTokens: c.maxLen, Workers: c.x.workers}
		if noNoise {
			cfg.Mechanism, cfg.Epsilon = fedlda.MechanismNone, 0
		}
		return cfg, cfg.Validate()
	}
}

// variantNames lists compare's variants for a help text.
func variantNames() string {
	var names []string
	for _, v := range compareVariants() {
		names = append(names, v.name)
	}
	return strings.Join(names, ", ")
}

// calibrated is a variant's parameters at one budget, found by searching
// its knob with the method's own cost function.
type calibrated struct {
	params json.RawMessage
	knob   float64
	plan   privacyPlan
}

// errUnreachable marks a budget a variant cannot meet at any setting of
// its knob.
var errUnreachable = errors.New("unreachable")

// calibrate searches v's knob for the largest privacy loss that fits a
// document-level ε of target at the run's δ, composing the method's cost
// (its method table entry, the same a simulate run checks and its ledgers
// are charged) with the accountant. Bisection on a log scale.
func (c *compareRun) calibrate(v compareVariant, meth *method, target float64, rounds int) (calibrated, error) {
	eval := func(x float64) (calibrated, error) {
		p, err := v.params(c, x, rounds, false)
		if err != nil {
			return calibrated{}, err
		}
		raw, err := json.Marshal(p)
		if err != nil {
			return calibrated{}, err
		}
		parts, err := meth.cost(raw, flagKnobs)
		if err != nil {
			return calibrated{}, err
		}
		if len(parts) == 0 {
			return calibrated{}, fmt.Errorf("%s makes no noised release at %s = %g", v.name, v.knob, x)
		}
		// The clip's release comes first, as in the ledgers.
		plan, err := newPrivacyPlan(c.f.delta, append(c.clipParts(), parts...)...)
		if err != nil {
			return calibrated{}, err
		}
		return calibrated{params: raw, knob: x, plan: plan}, nil
	}
	// Within the budget exactly, without the ledger's tolerance for
	// rounding: the spent ε never exceeds the target.
	fits := func(cal calibrated) bool {
		return cal.plan.total.Epsilon <= target && cal.plan.total.Delta <= c.f.delta
	}
	// The privacy-lossless end of the range must fit, else nothing does.
	safe, loss := v.lo, v.hi
	if !v.increasing {
		safe, loss = v.hi, v.lo
	}
	best, err := eval(safe)
	if err != nil || !fits(best) {
		reason := fmt.Sprintf("even at %s = %g the run costs more than ε = %g, δ = %g per document", v.knob, safe, target, c.f.delta)
		if c.clip != nil && c.clip.epsilon >= target {
			reason = fmt.Sprintf("the clip length's private quantile alone costs ε = %g of the budget ε = %g: give --max-doc-length or a smaller --clip-epsilon", c.clip.epsilon, target)
		} else if err != nil {
			reason = err.Error()
		} else if best.plan.total.Delta > c.f.delta {
			reason = fmt.Sprintf("the run's δ = %.3g exceeds %.3g at any %s", best.plan.total.Delta, c.f.delta, v.knob)
		}
		return calibrated{}, fmt.Errorf("%w: %s", errUnreachable, reason)
	}
	if hi, err := eval(loss); err == nil && fits(hi) {
		return hi, nil
	}
	// Bisection in log space to a relative precision of 1e-9 of the knob.
	a, b := math.Log(safe), math.Log(loss)
	for math.Abs(b-a) > 1e-9 {
		m := (a + b) / 2
		cal, err := eval(math.Exp(m))
		if err == nil && fits(cal) {
			best, a = cal, m
		} else {
			b = m
		}
	}
	return best, nil
}

// load reads the corpus and, with --vocab and --test, the shared word
// list and the held-out documents; otherwise the experiment's own.
func (c *compareRun) load(ctx context.Context) error {
	x, f := c.x, c.f
	if f.vocabFile == "" && f.testFile == "" {
		d, err := x.load(ctx)
		if err != nil {
			return err
		}
		x.data = d
		c.vocabDesc = fmt.Sprintf("public: the %d most frequent words of the corpus in at least %g documents (--vocab-size, --min-df), one for every model", len(d.vocab), x.minDF)
		return nil
	}
	tc, err := x.cf.tokenizerConfig(nil)
	if err != nil {
		return err
	}
	var fixed *vocab.Vocabulary
	if f.vocabFile != "" {
		if fixed, err = vocab.Load(f.vocabFile); err != nil {
			return err
		}
	}
	train, v, _, err := x.cf.load(ctx, tc, vocab.BuildOptions{MinDF: x.minDF, MaxSize: x.vocabSize}, fixed, x.log)
	if err != nil {
		return err
	}
	d := &expData{train: train, vocab: v.Words()}
	if f.testFile != "" {
		if d.test, _, _, err = x.cf.loadPaths(ctx, "test", []string{f.testFile}, tc, vocab.BuildOptions{}, v, x.log); err != nil {
			return err
		}
	} else {
		n := train.NumDocs()
		perm := rng.Derive(x.seed, "experiment", "test").Perm(n)
		nTest := int(math.Round(x.testFraction * float64(n)))
		testIdx, trainIdx := slices.Clone(perm[:nTest]), slices.Clone(perm[nTest:])
		slices.Sort(testIdx)
		slices.Sort(trainIdx)
		d.train, d.test = train.Subset(trainIdx), train.Subset(testIdx)
	}
	c.vocabDesc = fmt.Sprintf("public: the %d words of --vocab %s, one for every model", len(d.vocab), filepath.Base(f.vocabFile))
	if f.vocabFile == "" {
		c.vocabDesc = fmt.Sprintf("public: the %d most frequent words of the training corpus (--vocab-size, --min-df), one for every model", len(d.vocab))
	}
	spec, err := corpus.ParseSplit(x.split)
	if err != nil {
		return usageError{err}
	}
	if d.parts, err = corpus.Split(d.train, spec, rng.Derive(x.seed, "experiment", "split")); err != nil {
		return usageError{err}
	}
	d.desc = fmt.Sprintf("%d training documents (%d tokens), %d test documents (%d tokens), V = %d",
		d.train.NumDocs(), d.train.NumTokens(), d.test.NumDocs(), d.test.NumTokens(), len(d.vocab))
	fmt.Fprintf(x.log, "%s: %s\n", x.name, d.desc)
	x.data = d
	return nil
}

// holdDev takes --dev-fraction of each party's documents as development
// documents: they tune every knob and are never trained on.
func (c *compareRun) holdDev() error {
	d := c.x.data
	var devParts []*corpus.Corpus
	for i, p := range d.parts {
		n := p.NumDocs()
		perm := rng.Derive(c.x.seed, "compare", "dev", strconv.Itoa(i)).Perm(n)
		nDev := int(math.Round(c.f.devFraction * float64(n)))
		if nDev < 1 || nDev >= n {
			return usagef("--dev-fraction %v: party p%d has %d documents, which leaves no development or no training documents", c.f.devFraction, i+1, n)
		}
		dev, keep := slices.Clone(perm[:nDev]), slices.Clone(perm[nDev:])
		slices.Sort(dev)
		slices.Sort(keep)
		devParts = append(devParts, p.Subset(dev))
		d.parts[i] = p.Subset(keep)
		fmt.Fprintf(c.x.log, "  p%d: %d training documents (%d tokens), %d development documents\n", i+1, d.parts[i].NumDocs(), d.parts[i].NumTokens(), nDev)
	}
	c.dev = concatCorpora(devParts)
	return nil
}

// Defaults of the private clip length.
const (
	// defaultClipQuantile is the share of documents the clip keeps whole.
	defaultClipQuantile = 0.95
	// defaultClipMax is the longest clip length the quantile may choose.
	defaultClipMax = 1000
	// clipRelease names the quantile's release in the parties' ledgers.
	clipRelease = "clip length (private quantile of document lengths)"
)

// privateClip is the clip length compare chose from the data: each party's
// private quantile of its training documents' lengths, and their lower
// median.
type privateClip struct {
	q        float64
	epsilon  float64
	max      int
	releases []int         // each party's released length, in party order
	event    privacy.Event // what each party's release costs it, per document
}

// defaultClipEpsilon is the quantile's ε when --clip-epsilon is not given:
// 0.1, or a tenth of the smallest finite target below 1, so that the clip
// never takes more than a tenth of a budget.
func defaultClipEpsilon(targets []float64) float64 {
	eps := 0.1
	for _, t := range targets {
		if !math.IsInf(t, 1) {
			eps = math.Min(eps, t/10)
		}
	}
	return eps
}

// chooseClip sets the clip length: --max-doc-length when given (a fixed
// public setting, free); otherwise each party releases the --clip-quantile
// of its training documents' lengths by the exponential mechanism over
// 1..--clip-max at ε = --clip-epsilon per document, and the clip is the
// lower median of the releases. The median, not the maximum: a party whose
// release is far off (a small party at a small ε is close to uniform over
// the candidates) cannot move it alone when there are three parties or
// more, and the lower of the two middle values, when the count is even,
// costs every method less per document. Each release is charged to its
// party's ledger and composed into every private model's cost.
func (c *compareRun) chooseClip(targets []float64) error {
	if c.f.maxDocLen > 0 {
		c.maxLen = c.f.maxDocLen
		return nil
	}
	eps := c.f.clipEpsilon
	if eps == 0 {
		eps = defaultClipEpsilon(targets)
	}
	m, err := privacy.NewQuantile(privacy.QuantileConfig{Epsilon: eps, Quantile: c.f.clipQ, Max: c.f.clipMax, Unit: "document"})
	if err != nil {
		return usagef("--clip-epsilon %v, --clip-quantile %v, --clip-max %d: %v", eps, c.f.clipQ, c.f.clipMax, err)
	}
	// compare is a simulation: the noise is seeded, as every party's in sim.
	src := privacy.NewSeededSource(c.x.seed)
	pc := &privateClip{q: c.f.clipQ, epsilon: eps, max: c.f.clipMax}
	for i, p := range c.x.data.parts {
		lengths := make([]int, p.NumDocs())
		for d := range lengths {
			lengths[d] = len(p.Doc(d))
		}
		l, ev, err := m.Release(src.Stream("compare", "clip", "party", i), lengths)
		if err != nil {
			return fmt.Errorf("experiment compare: party p%d: clip length: %w", i+1, err)
		}
		pc.releases, pc.event = append(pc.releases, l), ev
	}
	sorted := slices.Sorted(slices.Values(pc.releases))
	c.maxLen, c.clip = sorted[(len(sorted)-1)/2], pc
	var each []string
	for i, l := range pc.releases {
		each = append(each, fmt.Sprintf("p%d %d", i+1, l))
	}
	fmt.Fprintf(c.x.log, "compare: clip length %d tokens, the lower median of the parties' private %g-quantiles of their documents' lengths (%s), ε = %s per document out of every budget\n",
		c.maxLen, pc.q, strings.Join(each, ", "), fmtEps(eps))
	return nil
}

// clipParts is the private clip's part of every plan: nothing with a fixed
// --max-doc-length.
func (c *compareRun) clipParts() []costPart {
	if c.clip == nil {
		return nil
	}
	return []costPart{{release: "clip length", events: []privacy.Event{c.clip.event}, knobs: []string{"--clip-epsilon"}}}
}

// concatCorpora joins corpora over one vocabulary.
func concatCorpora(cs []*corpus.Corpus) *corpus.Corpus {
	out := &corpus.Corpus{V: cs[0].V, DocStart: []int{0}}
	labelled := cs[0].Labels != nil
	for _, c := range cs {
		for d := range c.NumDocs() {
			out.Words = append(out.Words, c.Doc(d)...)
			out.DocStart = append(out.DocStart, len(out.Words))
			if c.IDs != nil {
				out.IDs = append(out.IDs, c.IDs[d])
			}
			if labelled && c.Labels != nil {
				out.Labels = append(out.Labels, c.Labels[d])
			}
		}
	}
	if len(out.IDs) != out.NumDocs() {
		out.IDs = nil
	}
	if len(out.Labels) != out.NumDocs() {
		out.Labels = nil
	}
	return out
}

// perplexity is the document-completion perplexity of m on docs.
func (c *compareRun) perplexity(ctx context.Context, m *topic.Model, docs *corpus.Corpus) (float64, error) {
	r, err := eval.Perplexity(ctx, m, docs, topic.InferConfig{Seed: c.x.seed, Workers: c.x.workers})
	if err != nil {
		return 0, err
	}
	return r.Perplexity, nil
}

// measure adds to line every utility measure of m on the test documents.
func (c *compareRun) measure(ctx context.Context, m *topic.Model, line map[string]any) error {
	if m.Vocab == nil {
		m.Vocab = c.x.data.vocab
	}
	perp, err := c.perplexity(ctx, m, c.x.data.test)
	if err != nil {
		return err
	}
	line["perplexity"] = perp
	top := m.TopWordIDs(eval.DefaultTopN)
	if npmi, err := eval.NPMI(top, c.x.data.test); err == nil {
		line["npmi"] = npmi.Mean
	}
	if c.emb != nil {
		if ec, err := eval.EmbeddingCoherence(top, c.emb); err == nil {
			line["embedding_coherence"] = ec.Mean
		}
	}
	line["diversity"] = eval.Diversity(m.TopWordIDs(eval.DefaultDiversityTopN))
	if c.class != nil {
		tr, te, nf, err := c.x.features(ctx, c.class, m)
		if err != nil {
			return err
		}
		s, err := c.x.scoreFeatures(c.class, tr, te, nf, false)
		if err != nil {
			return err
		}
		line["logistic_macro_f1"], line["svm_macro_f1"] = s["logistic_macro_f1"], s["svm_macro_f1"]
	}
	return nil
}

// bestLocal trains a non-private LDA on docs for every K of grid and keeps
// the one of lowest development perplexity.
func (c *compareRun) bestLocal(ctx context.Context, docs *corpus.Corpus, grid []int) (*topic.Model, float64, float64, error) {
	var best *topic.Model
	bestDev, secs := math.Inf(1), 0.0
	for _, k := range grid {
		start := time.Now()
		m, err := c.x.trainLocal(ctx, docs, "lda", k, c.f.iterations)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("K = %d: %w", k, err)
		}
		s := time.Since(start).Seconds()
		dev, err := c.perplexity(ctx, m, c.dev)
		if err != nil {
			return nil, 0, 0, err
		}
		if dev < bestDev {
			best, bestDev, secs = m, dev, s
		}
	}
	return best, bestDev, secs, nil
}

// thresholdFor is the secure-aggregation threshold variant v runs with at
// target: every party (t = n) for a secure variant with noise, else none
// (0). Without noise secure aggregation changes nothing the comparison
// measures.
func (c *compareRun) thresholdFor(v compareVariant, target float64) int {
	if !v.secure || math.IsInf(target, 1) {
		return 0
	}
	return len(c.x.data.parts)
}

// runVariant runs one calibrated configuration through the code path
// simulate uses (package sim with the method's params), with every party's
// ledger capped at the budget, and measures its global model on the
// development documents. With a private clip and a budget, every party's
// ledger is charged the clip's release first, and the run's record counts
// it, so the spent (ε, δ) is the accountant's composition of both.
// A positive threshold runs it under secure aggregation with that threshold.
func (c *compareRun) runVariant(ctx context.Context, meth *method, params json.RawMessage, budget accountant.Budget, threshold int) (*sim.Result, float64, float64, error) {
	d := c.x.data
	sc := sim.Scenario{Algorithm: meth.alg, Params: params, Corpora: d.parts, Vocab: d.vocab, Seed: c.x.seed, Budget: budget}
	if threshold > 0 {
		sc.SecureAggregation, sc.SecureThreshold = true, threshold
	}
	if c.clip != nil && budget.Epsilon > 0 {
		dir, err := os.MkdirTemp("", "fedtopic-compare-ledgers-")
		if err != nil {
			return nil, 0, 0, fmt.Errorf("experiment compare: %w", err)
		}
		defer os.RemoveAll(dir)
		prior := fed.RoundRecord{Committed: true}
		for i := range d.parts {
			id := fmt.Sprintf("p%d", i+1) // sim's default party ids
			if err := chargeLedger(ctx, filepath.Join(dir, id+".ledger"), budget, c.clip.event); err != nil {
				return nil, 0, 0, fmt.Errorf("experiment compare: party %s: %w", id, err)
			}
			prior.Replied = append(prior.Replied, id)
			prior.Spent = append(prior.Spent, fed.PartySpend{Party: id, Events: []privacy.Event{c.clip.event}})
		}
		sc.LedgerDir, sc.Prior = dir, []fed.RoundRecord{prior}
	}
	start := time.Now()
	res, err := sim.Run(ctx, sc)
	if err != nil {
		return nil, 0, 0, err
	}
	secs := time.Since(start).Seconds()
	if res.Global == nil {
		return nil, 0, 0, fmt.Errorf("%s made no global model", meth.alg.Name)
	}
	res.Global.Vocab = d.vocab
	dev, err := c.perplexity(ctx, res.Global, c.dev)
	if err != nil {
		return nil, 0, 0, err
	}
	return res, dev, secs, nil
}

// chargeLedger creates the ledger at path with budget and charges it the
// clip's release.
func chargeLedger(ctx context.Context, path string, budget accountant.Budget, ev privacy.Event) error {
	l, err := accountant.OpenLedger(path, budget)
	if err != nil {
		return err
	}
	err = l.Charge(ctx, clipRelease, []privacy.Event{ev})
	return errors.Join(err, l.Close())
}

// spent adds a run's spend to line: the largest document-level (ε, δ) of
// any party, every party's, and the bytes each party sent and received.
func spent(line map[string]any, res *sim.Result) {
	var eps, delta float64
	var per []map[string]any
	for _, pe := range res.Summary.Epsilon {
		if pe.Releases == 0 {
			continue // nothing noised: no spend to state
		}
		eps, delta = math.Max(eps, pe.Epsilon), math.Max(delta, pe.Delta)
		per = append(per, map[string]any{"party": pe.Party, "epsilon": pe.Epsilon, "delta": pe.Delta, "unit": pe.Unit})
	}
	if len(per) > 0 {
		line["doc_epsilon"], line["doc_delta"], line["spent"] = eps, delta, per
	}
	var bytes int64
	for _, b := range res.Summary.Bytes {
		bytes += b.Up + b.Down
	}
	if n := len(res.Summary.Bytes); n > 0 {
		line["bytes_per_party"] = bytes / int64(n)
	}
}

// parseEpsilons reads --doc-epsilon: numbers > 0 or inf.
func parseEpsilons(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "inf" || f == "∞" {
			out = append(out, math.Inf(1))
			continue
		}
		e, err := strconv.ParseFloat(f, 64)
		if err != nil || !(e > 0) || math.IsInf(e, 0) {
			return nil, usagef("--doc-epsilon %q: want numbers > 0 or inf, comma-separated", s)
		}
		out = append(out, e)
	}
	return out, nil
}

// epsilonValue is a target ε as JSON: a number, or "inf".
func epsilonValue(e float64) any {
	if math.IsInf(e, 1) {
		return "inf"
	}
	return e
}

// parseRounds reads --rounds: name=r1|r2 entries overriding the variants'
// candidate numbers of rounds.
func parseRounds(s string, vs []compareVariant) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	for _, f := range strings.Split(s, ",") {
		name, list, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return usagef("--rounds %q: want name=R or name=R1|R2 entries, comma-separated", s)
		}
		var rs []int
		for _, r := range strings.Split(list, "|") {
			n, err := strconv.Atoi(r)
			if err != nil || n < 1 {
				return usagef("--rounds %q: %q is not a number of rounds ≥ 1", s, r)
			}
			rs = append(rs, n)
		}
		found := false
		for i := range vs {
			if vs[i].name == name || vs[i].method == name {
				vs[i].rounds, found = rs, true
			}
		}
		if !found {
			return usagef("--rounds %q: no method or variant %q", s, name)
		}
	}
	return nil
}

// selectVariants keeps the variants --methods names (all when empty).
func selectVariants(s string, vs []compareVariant) ([]compareVariant, error) {
	if strings.TrimSpace(s) == "" {
		return vs, nil
	}
	var out []compareVariant
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		n := len(out)
		for _, v := range vs {
			if v.name == name || v.method == name {
				out = append(out, v)
			}
		}
		if len(out) == n {
			var names []string
			for _, v := range vs {
				names = append(names, v.name)
			}
			return nil, usagef("--methods: %q is none of %s", name, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// lengthQuantile returns the q-quantile of the documents' lengths, for the
// output's note on how much the clip cuts.
func lengthQuantile(cs []*corpus.Corpus, q float64) int {
	var ls []int
	for _, c := range cs {
		for d := range c.NumDocs() {
			ls = append(ls, len(c.Doc(d)))
		}
	}
	if len(ls) == 0 {
		return 0
	}
	slices.Sort(ls)
	return ls[min(len(ls)-1, int(q*float64(len(ls))))]
}

func newCompareCmd(e *env) *cobra.Command {
	x := &experiment{name: "compare", subsample: 1}
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare --corpus FILE --out DIR",
		Short: "Every private method calibrated to one document-level ε, against each party alone and the pooled model",
		Long: `compare answers which method a consortium should use at its privacy budget.
For every target ε per document of --doc-epsilon (at δ = --delta) it
calibrates every private method and variant to that budget, by searching
the method's own noise setting with the same cost function and accountant
a simulate run checks and charges (FTM's ε per word occurrence, its
threshold τ raised from FTM's default where that leaves a token more than
--ftm-max-noise noise entries, which costs nothing; PC-TD's noise for its
SSP and unit variants, FedLDA's ε per tuple for kRR and
t-kRR, DP-FedNMF's noise multiplier), runs it in process over the same
code path as simulate, and measures its global model. ε = inf runs each
method without noise. It also trains each party's own non-private LDA and
the pooled non-private LDA, the references a private model must beat, and
for every private model each party's composed model: its own topics beside
the federated ones (pctd-ssp-secure runs PC-TD under secure aggregation,
each party adding a share of the noise).

Knobs are tuned on development documents only: --dev-fraction of each
party's documents, never trained on. The number of rounds of a method
(--rounds) and the parties' and pooled model's K (--party-topics) are
chosen by development perplexity; the test documents only measure.

Documents are clipped to a length for every private method (its privacy
cost per document depends on it). Without --max-doc-length, the length is
chosen from the data privately: each party releases the --clip-quantile
(0.95) of its training documents' lengths by the exponential mechanism
over 1..--clip-max at ε = --clip-epsilon per document, and the clip is the
lower median of the parties' releases. That ε is charged to every party's
ledger and composed by the accountant into every private model's cost, so
each method is calibrated to what is left of the budget and doc_epsilon
includes it. --max-doc-length L fixes the clip instead, at no cost. The
output prints the clip, each party's release and the share of documents
the clip cuts.

Every model uses one vocabulary (--vocab FILE, or the corpus's most
frequent words, treated as public), so perplexities are comparable. DIR
receives compare.jsonl, one JSON line per model: role (private, party or
pooled), method, target_epsilon, doc_epsilon and doc_delta spent (the
largest of any party, the clip's quantile included; spent has every
party's), the calibrated knob, the rounds, perplexity (held-out document
completion), dev_perplexity, npmi, embedding_coherence (with
--embeddings), diversity, logistic_macro_f1 and svm_macro_f1 (topic
proportions as features, where the corpus has labels), seconds and
bytes_per_party; a first setup line records the clip (clip, clip_source,
and for a private clip clip_quantile, clip_epsilon, clip_max and
clip_releases, each party's released length). A method that cannot meet a
budget at any setting has a line with status unreachable and the reason.
'fedtopic report DIR' shows the privacy–utility frontier and a
recommendation.`,
		Example: `  python3 bench/wordnet_glosses.py > wordnet.jsonl
  fedtopic experiment compare --corpus wordnet.jsonl --split labels:sizes=1,2,3 --topics 20 --doc-epsilon 1,4,10,inf --out compare
  fedtopic report compare --out compare/report.html`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if f.outDir == "" {
				return usagef("--out is required: the directory to write %s to", compareFile)
			}
			targets, err := parseEpsilons(f.epsilons)
			if err != nil {
				return err
			}
			grid, err := parseTopics(f.partyGrid)
			if err != nil {
				return err
			}
			if f.topics < 1 {
				return usagef("--topics %d: want at least 1", f.topics)
			}
			if !(f.delta > 0 && f.delta < 1) {
				return usagef("--delta %v: want a value in (0, 1)", f.delta)
			}
			if cmd.Flags().Changed("max-doc-length") && f.maxDocLen < 1 {
				return usagef("--max-doc-length %d: want at least 1: every private method's cost per document grows with it (leave it out to choose it privately)", f.maxDocLen)
			}
			if f.maxDocLen > 0 && (cmd.Flags().Changed("clip-epsilon") || cmd.Flags().Changed("clip-quantile") || cmd.Flags().Changed("clip-max")) {
				return usagef("--clip-epsilon, --clip-quantile and --clip-max choose the clip privately: leave them out with --max-doc-length %d", f.maxDocLen)
			}
			if cmd.Flags().Changed("clip-epsilon") && !(f.clipEpsilon > 0 && !math.IsInf(f.clipEpsilon, 0)) {
				return usagef("--clip-epsilon %v: want a finite ε > 0", f.clipEpsilon)
			}
			if !(f.clipQ > 0 && f.clipQ < 1) {
				return usagef("--clip-quantile %v: want a share in (0, 1)", f.clipQ)
			}
			if f.clipMax < 1 || f.clipMax > privacy.MaxQuantileCandidates {
				return usagef("--clip-max %d: want a length in [1, %d]", f.clipMax, privacy.MaxQuantileCandidates)
			}
			if !(f.devFraction > 0 && f.devFraction < 1) {
				return usagef("--dev-fraction %v: want a share in (0, 1)", f.devFraction)
			}
			if f.iterations < 1 {
				return usagef("--iterations %d: want at least 1", f.iterations)
			}
			if err := checkFTMMaxNoise(f.ftmMaxNoise); err != nil {
				return err
			}
			all := compareVariants()
			if err := parseRounds(f.rounds, all); err != nil {
				return err
			}
			vs, err := selectVariants(f.variants, all)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(f.outDir, 0o755); err != nil {
				return fmt.Errorf("experiment compare: %w", err)
			}
			x.outPath = filepath.Join(f.outDir, compareFile)
			x.log, x.out = e.stderr, e.stdout
			out, err := os.Create(x.outPath)
			if err != nil {
				return fmt.Errorf("experiment compare: %w", err)
			}
			defer out.Close()
			x.out, x.enc, x.start = out, json.NewEncoder(out), time.Now()
			if x.testFraction <= 0 || x.testFraction >= 1 {
				return usagef("--test-fraction %v: want a share in (0, 1)", x.testFraction)
			}
			if x.workers < 1 {
				return usagef("--workers %d: want at least 1", x.workers)
			}
			c := &compareRun{x: x, f: &f}
			if err := c.load(ctx); err != nil {
				return err
			}
			if len(x.data.parts) < 2 {
				return usagef("--split %s: compare needs at least two parties", x.split)
			}
			if err := c.holdDev(); err != nil {
				return err
			}
			if err := c.chooseClip(targets); err != nil {
				return err
			}
			if f.embeddings != "" {
				if c.emb, err = eval.LoadEmbeddings(f.embeddings, x.data.vocab); err != nil {
					return err
				}
			}
			if x.data.test.Labels != nil {
				if c.class, err = x.classify(0.3, 0); err != nil {
					return err
				}
			}
			err = c.run(ctx, vs, grid, targets)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				fmt.Fprintf(e.stdout, "wrote %s (%s); report: fedtopic report %s --out %s\n", x.outPath, time.Since(x.start).Round(time.Second), f.outDir, filepath.Join(f.outDir, "report.html"))
			}
			return err
		},
	}
	fs := cmd.Flags()
	x.cf.register(fs, "the corpus (the WordNet glosses of bench/wordnet_glosses.py, or any other; with --split files one file per party)")
	fs.IntVar(&x.vocabSize, "vocab-size", 12000, "without --vocab: keep the words of highest document frequency, at most this many")
	fs.Float64Var(&x.minDF, "min-df", 2, "without --vocab: drop words in fewer documents than this")
	fs.Float64Var(&x.testFraction, "test-fraction", 0.1, "without --test: share of the documents held out for evaluation (seeded)")
	fs.StringVar(&x.split, "split", "labels:sizes=1,2,3", "how the training documents are divided among the parties (see simulate --split)")
	fs.Uint64Var(&x.seed, "seed", 1, "random seed of the splits, the samplers and the noise")
	fs.IntVar(&x.workers, "workers", 1, "goroutines per sampler; never changes the results")
	fs.IntVar(&f.topics, "topics", 20, "K of every federated method")
	fs.StringVar(&f.partyGrid, "party-topics", "10,20,40", "K tried for each party's own model and the pooled model; the best on the development documents is kept")
	fs.StringVar(&f.epsilons, "doc-epsilon", "1,4,10,inf", "target ε per document of each party, comma-separated; inf runs each method without noise")
	fs.Float64Var(&f.delta, "delta", 1e-5, "target δ per document of each party")
	fs.IntVar(&f.maxDocLen, "max-doc-length", 0, "documents are clipped to this many tokens by every private method, a fixed public setting that costs nothing (default: chosen from the data by a private quantile, see --clip-epsilon)")
	fs.Float64Var(&f.clipEpsilon, "clip-epsilon", 0, "without --max-doc-length: ε per document of each party's private quantile of its documents' lengths, spent out of every budget (default 0.1, or a tenth of the smallest --doc-epsilon below 1)")
	fs.Float64Var(&f.clipQ, "clip-quantile", defaultClipQuantile, "without --max-doc-length: the share of documents the clip length keeps whole")
	fs.IntVar(&f.clipMax, "clip-max", defaultClipMax, "without --max-doc-length: the longest clip length the private quantile may choose (a public bound)")
	fs.StringVar(&f.vocabFile, "vocab", "", "shared public vocabulary, one word per line, for every model")
	fs.StringVar(&f.testFile, "test", "", "held-out documents (default: --test-fraction of the corpus)")
	fs.StringVar(&f.embeddings, "embeddings", "", "word2vec or GloVe text vectors: embedding coherence of every model")
	fs.Float64Var(&f.devFraction, "dev-fraction", 0.1, "share of each party's documents held out as development documents, which choose every tuned setting")
	fs.StringVar(&f.variants, "methods", "", "comma-separated methods or variants to run (default all): "+variantNames())
	fs.StringVar(&f.rounds, "rounds", "", "candidate rounds per method or variant, chosen on the development documents: pctd=5|10|20,fednmf=30 (defaults: ftm 5, pctd 5|10|20, fedlda 20, fednmf 30)")
	fs.IntVar(&f.iterations, "iterations", 300, "sweeps of the parties' and the pooled model's samplers")
	fs.Float64Var(&f.nmfClip, "fednmf-clip", 1, "DP-FedNMF: S, the L2 norm each party's update is clipped to")
	registerFTMMaxNoise(fs, &f.ftmMaxNoise)
	fs.StringVarP(&f.outDir, "out", "o", "", "directory to write compare.jsonl to (required)")
	return cmd
}

// run trains the references, then calibrates, runs and measures every
// variant at every target.
func (c *compareRun) run(ctx context.Context, vs []compareVariant, grid []int, targets []float64) error {
	x, d := c.x, c.x.data
	cut, total := 0, 0
	for _, p := range d.parts {
		for i := range p.NumDocs() {
			total++
			if len(p.Doc(i)) > c.maxLen {
				cut++
			}
		}
	}
	if err := x.enc.Encode(map[string]any{"plot": map[string]any{"title": "Held-out perplexity against the document-level ε spent",
		"x": "doc_epsilon", "y": "perplexity", "series": []string{"method"}, "x_label": "ε per document (spent)", "y_label": "Held-out perplexity", "log_x": true}}); err != nil {
		return err
	}
	setup := map[string]any{"role": "setup", "data": d.desc, "vocabulary": c.vocabDesc, "parties": len(d.parts),
		"dev_docs": c.dev.NumDocs(), "delta": c.f.delta, "topics": c.f.topics, "max_doc_length": c.maxLen, "clip": c.maxLen,
		"docs_clipped": float64(cut) / float64(max(total, 1)), "length_p95": lengthQuantile(d.parts, 0.95),
		"tuning": "rounds and K chosen by development perplexity; test documents measure only"}
	if c.clip == nil {
		setup["clip_source"] = "fixed (--max-doc-length): a public setting, chosen without the data, that costs nothing"
	} else {
		releases := map[string]any{}
		for i, l := range c.clip.releases {
			releases[fmt.Sprintf("p%d", i+1)] = l
		}
		setup["clip_source"] = "private quantile: the lower median of the parties' releases, each the exponential mechanism over 1..clip_max; its ε is in every private line's doc_epsilon"
		setup["clip_quantile"], setup["clip_epsilon"], setup["clip_max"], setup["clip_releases"] = c.clip.q, c.clip.epsilon, c.clip.max, releases
	}
	if err := x.emit(setup); err != nil {
		return err
	}
	fmt.Fprintf(x.log, "compare: documents clipped to %d tokens (%.1f%% of the training documents are longer); vocabulary %s\n", c.maxLen, 100*float64(cut)/float64(max(total, 1)), c.vocabDesc)

	// The references: each party alone and the pooled model, non-private.
	for p, part := range d.parts {
		m, dev, secs, err := c.bestLocal(ctx, part, grid)
		if err != nil {
			return fmt.Errorf("experiment compare: party p%d: %w", p+1, err)
		}
		line := map[string]any{"role": "party", "method": "lda", "party": fmt.Sprintf("p%d", p+1), "k": m.K, "k_grid": joinList(grid),
			"docs": part.NumDocs(), "dev_perplexity": dev, "seconds": secs}
		if err := c.measure(ctx, m, line); err != nil {
			return err
		}
		c.locals = append(c.locals, m)
		fmt.Fprintf(x.log, "  p%d alone: K = %d, perplexity %.1f\n", p+1, m.K, line["perplexity"])
		if err := x.emit(line); err != nil {
			return err
		}
	}
	if err := c.smoothed(ctx); err != nil {
		return fmt.Errorf("experiment compare: %w", err)
	}
	pooled := concatCorpora(d.parts)
	m, dev, secs, err := c.bestLocal(ctx, pooled, grid)
	if err != nil {
		return fmt.Errorf("experiment compare: pooled: %w", err)
	}
	line := map[string]any{"role": "pooled", "method": "lda", "k": m.K, "k_grid": joinList(grid), "docs": pooled.NumDocs(), "dev_perplexity": dev, "seconds": secs}
	if err := c.measure(ctx, m, line); err != nil {
		return err
	}
	fmt.Fprintf(x.log, "  pooled: K = %d, perplexity %.1f\n", m.K, line["perplexity"])
	if err := x.emit(line); err != nil {
		return err
	}

	ms := methods()
	for _, v := range vs {
		meth, err := lookupMethod(ms, v.method)
		if err != nil {
			return err
		}
		for _, target := range targets {
			if err := c.runTarget(ctx, v, meth, target); err != nil {
				return fmt.Errorf("experiment compare: %s at ε = %v: %w", v.name, epsilonValue(target), err)
			}
		}
	}
	return nil
}

// runTarget calibrates v to target for every candidate number of rounds,
// keeps the run of lowest development perplexity and emits its line.
func (c *compareRun) runTarget(ctx context.Context, v compareVariant, meth *method, target float64) error {
	x := c.x
	base := map[string]any{"role": "private", "method": v.name, "algorithm": v.method, "target_epsilon": epsilonValue(target), "delta": c.f.delta}
	best, bestRes, reasons, err := c.tune(ctx, v, meth, target, base)
	if err != nil {
		return err
	}
	if best == nil {
		line := base
		line["status"], line["reason"] = "unreachable", strings.Join(reasons, "; ")
		fmt.Fprintf(x.log, "  %s at ε = %v: unreachable: %s\n", v.name, epsilonValue(target), line["reason"])
		return x.emit(line)
	}
	if err := c.measure(ctx, bestRes.Global, best); err != nil {
		return err
	}
	best["k"] = bestRes.Global.K
	fmt.Fprintf(x.log, "  %s at ε = %v: %d rounds, perplexity %.1f\n", v.name, epsilonValue(target), best["rounds"], best["perplexity"])
	if err := x.emit(best); err != nil {
		return err
	}
	return c.composed(ctx, best, bestRes.Global)
}

// tune calibrates v to target for every candidate number of rounds, runs
// each (under secure aggregation for a secure variant), applies v's
// post-processing, and returns the line — base plus the calibrated setting,
// its plan, spend and development perplexity — and the result of the run
// of lowest development perplexity; nil and the reasons when no candidate
// reaches the budget.
func (c *compareRun) tune(ctx context.Context, v compareVariant, meth *method, target float64, base map[string]any) (map[string]any, *sim.Result, []string, error) {
	x := c.x
	var (
		best     map[string]any
		bestRes  *sim.Result
		bestDev  = math.Inf(1)
		reasons  []string
		rounds   []int
		devByRds []string
	)
	for _, r := range v.rounds {
		line := map[string]any{}
		for k, val := range base {
			line[k] = val
		}
		var params json.RawMessage
		budget := accountant.Budget{Epsilon: target, Delta: c.f.delta, Unit: "document"}
		if math.IsInf(target, 1) {
			p, err := v.params(c, 0, r, true)
			if err != nil {
				return nil, nil, nil, err
			}
			if params, err = json.Marshal(p); err != nil {
				return nil, nil, nil, err
			}
			budget = accountant.Budget{}
		} else {
			cal, err := c.calibrate(v, meth, target, r)
			if errors.Is(err, errUnreachable) {
				reason := fmt.Sprintf("%d rounds: %s", r, strings.TrimPrefix(err.Error(), errUnreachable.Error()+": "))
				reasons = append(reasons, reason)
				fmt.Fprintf(x.log, "  %s at ε = %v, %s\n", v.name, epsilonValue(target), reason)
				continue
			}
			if err != nil {
				return nil, nil, nil, err
			}
			params = cal.params
			line[v.knob] = cal.knob
			line["planned_epsilon"], line["planned_delta"] = cal.plan.total.Epsilon, cal.plan.total.Delta
			for _, part := range cal.plan.parts {
				if part.methodUnit != "" {
					line["method_unit"], line["method_epsilon"] = part.methodUnit, part.methodEpsilon
				}
			}
			line["cost"] = cal.plan.String()
		}
		res, dev, secs, err := c.runVariant(ctx, meth, params, budget, c.thresholdFor(v, target))
		if err != nil {
			return nil, nil, nil, err
		}
		if v.post != nil {
			pms, err := v.post(res.Global, params, len(c.x.data.parts))
			if err != nil {
				return nil, nil, nil, err
			}
			dev = math.Inf(1)
			for _, pm := range pms {
				pd, err := c.perplexity(ctx, pm.model, c.dev)
				if err != nil {
					return nil, nil, nil, err
				}
				if pd < dev {
					dev, res.Global = pd, pm.model
					maps.Copy(line, pm.setting)
				}
			}
		}
		line["rounds"], line["dev_perplexity"], line["seconds"] = r, dev, secs
		var pm map[string]any
		if json.Unmarshal(params, &pm) == nil {
			line["params"] = pm
		}
		if v.note != nil {
			note, err := v.note(c, params)
			if err != nil {
				return nil, nil, nil, err
			}
			maps.Copy(line, note)
		}
		spent(line, res)
		rounds = append(rounds, r)
		devByRds = append(devByRds, fmt.Sprintf("%d:%.1f", r, dev))
		fmt.Fprintf(x.log, "  %s at ε = %v, %d rounds: development perplexity %.1f (%.0fs)\n", v.name, epsilonValue(target), r, dev, secs)
		if dev < bestDev {
			best, bestRes, bestDev = line, res, dev
		}
	}
	if best != nil && len(rounds) > 1 {
		best["rounds_dev"] = strings.Join(devByRds, ",")
	}
	if best != nil && len(reasons) > 0 {
		best["rounds_skipped"] = strings.Join(reasons, "; ")
	}
	return best, bestRes, reasons, nil
}
