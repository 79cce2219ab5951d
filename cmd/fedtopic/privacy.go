package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// privacyReport is what `fedtopic privacy <method>` prints, as text or JSON.
type privacyReport struct {
	Method      string              `json:"method"`
	Mechanism   string              `json:"mechanism"`
	Parameters  map[string]any      `json:"parameters"`
	Costs       []privacyCost       `json:"costs"`
	Calibration *privacyCalibration `json:"calibration,omitempty"`
	Assumptions []string            `json:"assumptions,omitempty"`
	Notes       []string            `json:"notes,omitempty"`
}

// privacyCost is one line of a report: what one scope of releases costs one
// privacy unit.
type privacyCost struct {
	Scope      string  `json:"scope"` // "tuple", "round", "once", "total"
	Unit       string  `json:"unit"`
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Accountant string  `json:"accountant"`
	Mu         float64 `json:"mu,omitempty"`
	Sampling   string  `json:"sampling,omitempty"` // amplification assumed, if any
}

// privacyCalibration is the answer to --target-epsilon.
type privacyCalibration struct {
	TargetEpsilon float64 `json:"target_epsilon"`
	Delta         float64 `json:"delta,omitempty"`
	Unit          string  `json:"unit"`
	Parameter     string  `json:"parameter"` // what was solved for
	Value         float64 `json:"value"`
	// WithSampling is the value when Poisson subsampling is credited
	// (fednmf only).
	WithSampling float64 `json:"with_sampling,omitempty"`
}

// privacyNoArgs refuses positional arguments as a usage error.
func privacyNoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// privacyFlags are the flags every method subcommand shares.
type privacyFlags struct {
	asJSON       bool
	delta        float64
	maxDocLength int
	target       float64
}

func (f *privacyFlags) register(cmd *cobra.Command, deltaHelp string, defDelta float64) {
	fs := cmd.Flags()
	fs.BoolVar(&f.asJSON, "json", false, "print the report as JSON")
	if deltaHelp != "" {
		fs.Float64Var(&f.delta, "delta", defDelta, deltaHelp)
	}
	fs.IntVar(&f.maxDocLength, "max-doc-length", 0, "longest document in words (or the clipped length): also report the cost per document, by group privacy")
	fs.Float64Var(&f.target, "target-epsilon", 0, "calibrate the other way: the noise that gives this ε (per document when --max-doc-length is set)")
}

func (f *privacyFlags) check() error {
	if f.maxDocLength < 0 {
		return usagef("--max-doc-length %d: want a positive number of words", f.maxDocLength)
	}
	if f.target != 0 && (math.IsNaN(f.target) || math.IsInf(f.target, 0) || f.target < privacy.MinEpsilon) {
		return usagef("--target-epsilon %v: want a positive, finite ε", f.target)
	}
	return nil
}

func newPrivacyCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "privacy METHOD",
		Short: "Show what a configuration costs in privacy, or the noise a target ε needs",
		Long: `privacy prints the (ε, δ) a configuration of each method costs: per round
and in total, at the paper's privacy unit (one word occurrence, one FedLDA
user, one FedNMF client) and, with --max-doc-length, at the level of a whole
document. With --target-epsilon it calibrates the other way and prints the
noise that reaches the target.

Accounting: pure ε adds up; Gaussian noise composes exactly as μ-GDP and is
converted to (ε, δ) with the analytic Gaussian formula; subsampling is
credited through Rényi DP. Every number is an upper bound that holds for the
stated unit; where a guarantee rests on an assumption (FedLDA's RRP) the
report says so.`,
		Example: `  fedtopic privacy ftm --epsilon 11 --max-doc-length 200
  fedtopic privacy pctd --sigma 5 --iterations 10 --delta 1e-5
  fedtopic privacy pctd --target-epsilon 3 --iterations 10 --delta 1e-5
  fedtopic privacy fedlda --epsilon 0.5 --max-doc-length 150 --iterations 50 --json
  fedtopic privacy fednmf --noise-multiplier 1.1 --rounds 100 --sampling-fraction 0.2`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown method %q: want ftm, pctd, fedlda or fednmf", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usagef("name a method: ftm, pctd, fedlda or fednmf")
		},
	}
	cmd.AddCommand(newPrivacyFTMCmd(e), newPrivacyPCTDCmd(e), newPrivacyFedLDACmd(e), newPrivacyFedNMFCmd(e))
	return cmd
}

func newPrivacyFTMCmd(e *env) *cobra.Command {
	var (
		pf        privacyFlags
		eps, tau  float64
		vocabSize int
	)
	cmd := &cobra.Command{
		Use:   "ftm --epsilon EPS [--max-doc-length L]",
		Short: "FTM / iFTM: thresholded Laplace noise on every token's count vector",
		Long: `FTM adds Laplace(1/ε) noise to every entry of every token's count vector
(a sentence's for SentenceLDA) once, before training, and zeroes entries ≤ τ.
That is ε-DP per word occurrence (count vectors that differ by one in one
entry); the training rounds only post-process the noisy counts and cost
nothing more. A document of L words costs L·ε by group privacy.`,
		Example: `  fedtopic privacy ftm --epsilon 11 --max-doc-length 200
  fedtopic privacy ftm --target-epsilon 100 --max-doc-length 200`,
		Args: privacyNoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := pf.check(); err != nil {
				return err
			}
			if math.IsNaN(tau) || math.IsInf(tau, 0) || tau < 0 {
				return usagef("--threshold %v: want τ ≥ 0", tau)
			}
			if vocabSize < 0 {
				return usagef("--vocab %d: want a positive vocabulary size", vocabSize)
			}
			rep := &privacyReport{Method: "ftm", Mechanism: privacy.MechanismThresholdedLaplace, Parameters: map[string]any{"threshold": tau}}
			if pf.target != 0 {
				unit, per := "word occurrence", pf.target
				if pf.maxDocLength > 0 {
					unit, per = "document", pf.target/float64(pf.maxDocLength)
				}
				rep.Calibration = &privacyCalibration{TargetEpsilon: pf.target, Unit: unit, Parameter: "epsilon per word occurrence", Value: per}
				if eps == 0 {
					eps = per
				}
			}
			if err := privacy.CheckEpsilon(eps); err != nil {
				return usagef("--epsilon %v: want a positive, finite ε per word occurrence (or --target-epsilon)", eps)
			}
			rep.Parameters["epsilon"] = eps
			ev := privacy.Event{Mechanism: privacy.MechanismThresholdedLaplace, Epsilon: eps, Sensitivity: 1, Unit: "word occurrence", Count: 1}
			c, err := accountant.Compose([]privacy.Event{ev}, 0)
			if err != nil {
				return err
			}
			rep.Costs = append(rep.Costs,
				privacyCost{Scope: "once", Unit: ev.Unit, Epsilon: c.Epsilon, Accountant: c.Accountant},
				privacyCost{Scope: "round", Unit: ev.Unit, Accountant: "post-processing"},
				privacyCost{Scope: "total", Unit: ev.Unit, Epsilon: c.Epsilon, Accountant: c.Accountant})
			if pf.maxDocLength > 0 {
				rep.Parameters["max_doc_length"] = pf.maxDocLength
				d, err := groupCost([]privacy.Event{ev}, pf.maxDocLength, 0)
				if err != nil {
					return err
				}
				rep.Costs = append(rep.Costs, privacyCost{Scope: "total", Unit: "document", Epsilon: d.Epsilon, Delta: d.Delta, Accountant: "group privacy, " + d.Accountant})
			}
			if vocabSize > 0 {
				t, err := privacy.NewThresholdedLaplace(privacy.ThresholdedLaplaceConfig{Epsilon: eps, Threshold: tau, Vocab: vocabSize})
				if err != nil {
					return usagef("%v", err)
				}
				rep.Parameters["vocab"] = vocabSize
				rep.Notes = append(rep.Notes, fmt.Sprintf("a token's noisy vector keeps about %.0f of its %d entries (each zero entry survives τ = %g with probability %.4g)",
					t.SurvivalProb()*float64(vocabSize-1)+1, vocabSize, tau, t.SurvivalProb()))
			}
			rep.Notes = append(rep.Notes, "each party also releases its number of documents n_p (the merge weight), which this report does not cover")
			return writePrivacyReport(e.stdout, rep, pf.asJSON)
		},
	}
	fs := cmd.Flags()
	fs.Float64Var(&eps, "epsilon", 0, "ε per word occurrence (the Laplace noise is Laplace(1/ε))")
	fs.Float64Var(&tau, "threshold", 0.2, "τ: noisy entries ≤ τ are zeroed (no effect on ε)")
	fs.IntVar(&vocabSize, "vocab", 0, "vocabulary size: also report how many entries a noisy vector keeps")
	pf.register(cmd, "", 0)
	return cmd
}

func newPrivacyPCTDCmd(e *env) *cobra.Command {
	var (
		pf        privacyFlags
		sigma     float64
		iters     int
		variant   string
		threshold int
		growth    float64
	)
	cmd := &cobra.Command{
		Use:   "pctd --sigma SIGMA --iterations T [--delta DELTA]",
		Short: "PC-TD: Gaussian noise on every unit's counts in every EM iteration",
		Long: `PC-TD adds fresh N(0, σ²) noise to every semantic unit's count vector in every
iteration. Each iteration is a Gaussian mechanism with L2 sensitivity 1 per
word occurrence, so T iterations are exactly (√T/σ)-GDP; the report converts
that to (ε, δ) with the analytic Gaussian formula. A document of L words has
L2 sensitivity at most L, so it is (L·√T/σ)-GDP.

With --variant ssp (fedtopic's default for simulate --algorithm pctd) the
noise is added once per party and iteration to M_t instead, documents are
clipped so that Σ_w a_w² ≤ L (--max-doc-length), and one document changes
M_t by at most √L: with --sigma the noise multiplier z (the noise's
standard deviation over √L), T iterations are (√T/z)-GDP per document.
With --schedule-growth g, iteration t gets the share g^(t−1)/Σ_s g^(s−1)
of the run's μ², so its noise falls from the first iteration to the last
while the run costs the same; the report gives the first and the last
iteration's cost beside the total.`,
		Example: `  fedtopic privacy pctd --sigma 5 --iterations 10 --delta 1e-5
  fedtopic privacy pctd --target-epsilon 3 --iterations 10 --delta 1e-5
  fedtopic privacy pctd --variant ssp --target-epsilon 10 --iterations 20 --max-doc-length 30
  fedtopic privacy pctd --variant ssp --target-epsilon 10 --iterations 40 --max-doc-length 15 --schedule-growth 1.3`,
		Args: privacyNoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := pf.check(); err != nil {
				return err
			}
			if iters < 1 {
				return usagef("--iterations %d: want at least 1", iters)
			}
			if !(pf.delta > 0 && pf.delta < 1) {
				return usagef("--delta %v: want δ in (0, 1)", pf.delta)
			}
			if threshold != 0 && variant != pctd.VariantSSP {
				return usagef("--threshold applies to --variant ssp only: the paper's variant cannot run under secure aggregation")
			}
			if cmd.Flags().Changed("schedule-growth") && variant != pctd.VariantSSP {
				return usagef("--schedule-growth applies to --variant ssp only")
			}
			switch variant {
			case pctd.VariantUnit:
			case pctd.VariantSSP:
				return privacyPCTDSSP(e, pf, sigma, iters, threshold, growth)
			default:
				return usagef("--variant %q: want unit or ssp", variant)
			}
			rep := &privacyReport{Method: "pctd", Mechanism: privacy.MechanismGaussian, Parameters: map[string]any{"iterations": iters, "delta": pf.delta}}
			if pf.target != 0 {
				mu, err := accountant.GaussianMu(pf.target, pf.delta)
				if err != nil {
					return usagef("--target-epsilon: %v", err)
				}
				group, unit := 1.0, "word occurrence"
				if pf.maxDocLength > 0 {
					group, unit = float64(pf.maxDocLength), "document"
				}
				s := group * math.Sqrt(float64(iters)) / mu
				rep.Calibration = &privacyCalibration{TargetEpsilon: pf.target, Delta: pf.delta, Unit: unit, Parameter: "sigma", Value: s}
				if sigma == 0 {
					sigma = s
				}
			}
			if err := privacy.CheckSigma(sigma); err != nil {
				return usagef("--sigma %v: want a positive, finite noise standard deviation (or --target-epsilon)", sigma)
			}
			rep.Parameters["sigma"] = sigma
			ev := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: sigma, Sensitivity: 1, Unit: "word occurrence", Count: 1}
			if err := addRounds(rep, ev, iters, pf.delta, pf.maxDocLength); err != nil {
				return err
			}
			if tot := rep.Costs[1].Epsilon; tot > 10 {
				rep.Notes = append(rep.Notes, fmt.Sprintf("ε = %s is far beyond any meaningful protection: with σ = %g the noise hides almost nothing (the paper's σ = 0.25 is such a setting)", fmtEps(tot), sigma))
			}
			return writePrivacyReport(e.stdout, rep, pf.asJSON)
		},
	}
	fs := cmd.Flags()
	fs.Float64Var(&sigma, "sigma", 0, "σ: standard deviation of the Gaussian noise on each count (--variant ssp: the noise multiplier)")
	fs.IntVar(&iters, "iterations", 0, "T: federated EM iterations (each adds fresh noise)")
	fs.IntVar(&threshold, "threshold", 0, "--variant ssp under secure aggregation (simulate --secure-aggregation --threshold t): the noise is split among the parties and charged for t survivors")
	fs.StringVar(&variant, "variant", pctd.VariantUnit, "unit (the paper: noise on every unit's counts) or ssp (noise once on M_t per party and iteration)")
	fs.Float64Var(&growth, "schedule-growth", 1, "--variant ssp: g of the noise schedule (simulate's schedule_growth); 1: every iteration the same noise")
	pf.register(cmd, "δ to convert the Gaussian guarantee to (ε, δ)", 1e-5)
	return cmd
}

// privacyPCTDSSP reports PC-TD's sufficient-statistics variant from the
// events pctd.Config states for it, so the report and a run agree.
func privacyPCTDSSP(e *env, pf privacyFlags, sigma float64, iters, threshold int, growth float64) error {
	if pf.maxDocLength < 1 {
		return usagef("--variant ssp needs --max-doc-length: documents are clipped to it, which bounds their sensitivity")
	}
	cfg := pctd.Config{Variant: pctd.VariantSSP, Rounds: iters, MaxDocTokens: pf.maxDocLength, Delta: pf.delta, Unit: pctd.UnitDocument, Sigma: sigma,
		SecureThreshold: threshold, ScheduleGrowth: growth}
	rep := &privacyReport{Method: "pctd", Mechanism: privacy.MechanismGaussian,
		Parameters: map[string]any{"variant": pctd.VariantSSP, "iterations": iters, "delta": pf.delta, "max_doc_length": pf.maxDocLength}}
	if pf.target != 0 {
		cfg.Sigma, cfg.Epsilon = 0, pf.target
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	ev, err := cfg.Events()
	if err != nil {
		return usageError{err}
	}
	if len(ev) == 0 {
		return usagef("--sigma %v: want a positive noise multiplier (or --target-epsilon)", sigma)
	}
	// The noise multiplier of the run: the equal split's, which a
	// schedule keeps (Σ_t 1/z_t² = T/z²).
	var prec float64
	for _, x := range ev {
		z := x.Sigma / x.Sensitivity
		prec += float64(x.Count) / (z * z)
	}
	z := math.Sqrt(float64(iters) / prec)
	if pf.target != 0 {
		rep.Calibration = &privacyCalibration{TargetEpsilon: pf.target, Delta: pf.delta, Unit: pctd.UnitDocument, Parameter: "sigma", Value: z}
	}
	rep.Parameters["sigma"] = z
	if threshold > 0 {
		rep.Parameters["threshold"] = threshold
		rep.Mechanism = ev[0].Mechanism
		rep.Notes = append(rep.Notes, fmt.Sprintf("secure aggregation with distributed noise: each party adds its share of the noise so that the sum of at least %d parties carries it all; each party is charged as if exactly %d survived", threshold, threshold))
	}
	if len(ev) == 1 {
		one := ev[0]
		one.Count = 1
		if err := addRounds(rep, one, ev[0].Count, pf.delta, 0); err != nil {
			return err
		}
		return writePrivacyReport(e.stdout, rep, pf.asJSON)
	}
	// A schedule: one event per iteration.
	rep.Parameters["schedule_growth"] = growth
	first, last := ev[0], ev[len(ev)-1]
	rep.Parameters["sigma_first"] = first.Sigma / first.Sensitivity
	rep.Parameters["sigma_last"] = last.Sigma / last.Sensitivity
	for _, c := range []struct {
		scope string
		ev    []privacy.Event
	}{{"first round", []privacy.Event{first}}, {"last round", []privacy.Event{last}}, {"total", ev}} {
		cost, err := accountant.Compose(c.ev, pf.delta)
		if err != nil {
			return err
		}
		rep.Costs = append(rep.Costs, costOf(c.scope, first.Unit, cost))
	}
	return writePrivacyReport(e.stdout, rep, pf.asJSON)
}

// addRounds appends the per-round and total costs of rounds releases of ev
// (and their per-document versions) to rep.
func addRounds(rep *privacyReport, ev privacy.Event, rounds int, delta float64, docLen int) error {
	one, err := accountant.Compose([]privacy.Event{ev}, delta)
	if err != nil {
		return err
	}
	all := ev
	all.Count = ev.Count * rounds
	tot, err := accountant.Compose([]privacy.Event{all}, delta)
	if err != nil {
		return err
	}
	rep.Costs = append(rep.Costs, costOf("round", ev.Unit, one), costOf("total", ev.Unit, tot))
	if docLen > 0 {
		rep.Parameters["max_doc_length"] = docLen
		d1, err := groupCost([]privacy.Event{ev}, docLen, delta)
		if err != nil {
			return err
		}
		dt, err := groupCost([]privacy.Event{all}, docLen, delta)
		if err != nil {
			return err
		}
		rep.Costs = append(rep.Costs, costOf("round", "document", d1), costOf("total", "document", dt))
	}
	return nil
}

func costOf(scope, unit string, c accountant.Cost) privacyCost {
	return privacyCost{Scope: scope, Unit: unit, Epsilon: c.Epsilon, Delta: c.Delta, Accountant: c.Accountant, Mu: c.Mu}
}

// groupCost returns the cost of events for a group of k units (a document).
func groupCost(events []privacy.Event, k int, delta float64) (accountant.Cost, error) {
	var g []privacy.Event
	for _, e := range events {
		ge, err := accountant.Group(e, k, "document")
		if err != nil {
			return accountant.Cost{}, err
		}
		g = append(g, ge)
	}
	return accountant.Compose(g, delta)
}

func newPrivacyFedLDACmd(e *env) *cobra.Command {
	var (
		pf        privacyFlags
		eps       float64
		mech      string
		trunc     float64
		gamma     float64
		ratio     float64
		iters     int
		vocabSize int
	)
	cmd := &cobra.Command{
		Use:   "fedlda --epsilon EPS --max-doc-length M --iterations T",
		Short: "FedLDA: local DP on each user's topic-change tuples",
		Long: `In FedLDA every user (one document) pads its list of topic-change tuples to
M (the longest document) and sends l = ⌈r·M⌉ of them per iteration, each
with its word perturbed by RRP (or kRR / truncated kRR). Each tuple costs ε
(RRP: ε and 2δ, under the Zipf assumption of the paper's Theorem 1); by basic
composition an iteration costs l·ε per user and T iterations T·l·ε. The
paper only divides by l within one iteration; this report gives the whole.`,
		Example: `  fedtopic privacy fedlda --epsilon 0.5 --max-doc-length 150 --iterations 50
  fedtopic privacy fedlda --mechanism krr --epsilon 8 --vocab 3309 --max-doc-length 150 --iterations 50
  fedtopic privacy fedlda --target-epsilon 10 --max-doc-length 150 --iterations 50`,
		Args: privacyNoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := pf.check(); err != nil {
				return err
			}
			if pf.maxDocLength < 1 {
				return usagef("--max-doc-length is required: the padding length M (longest document)")
			}
			if iters < 1 {
				return usagef("--iterations %d: want at least 1", iters)
			}
			if !(ratio > 0 && ratio <= 1) {
				return usagef("--sample-ratio %v: want r in (0, 1]", ratio)
			}
			l := int(math.Ceil(ratio * float64(pf.maxDocLength)))
			rep := &privacyReport{Method: "fedlda", Parameters: map[string]any{"iterations": iters, "max_doc_length": pf.maxDocLength, "sample_ratio": ratio, "tuples_per_iteration": l}}
			if pf.target != 0 {
				per := pf.target / float64(iters*l)
				rep.Calibration = &privacyCalibration{TargetEpsilon: pf.target, Unit: "user", Parameter: "epsilon per tuple", Value: per}
				if eps == 0 {
					eps = per
				}
			}
			if err := privacy.CheckEpsilon(eps); err != nil {
				return usagef("--epsilon %v: want a positive, finite ε per tuple (or --target-epsilon)", eps)
			}
			rep.Parameters["epsilon"] = eps
			var ev privacy.Event
			switch mech {
			case "rrp":
				m, err := privacy.NewRRP(privacy.RRPConfig{Epsilon: eps, Delta: trunc, Gamma: gamma})
				if err != nil {
					return usagef("%v", err)
				}
				ev = m.Event(1)
				rep.Parameters["truncation_delta"] = trunc
				rep.Parameters["gamma"] = m.Config().Gamma
				rep.Parameters["eta"] = m.Eta()
			case "krr", "tkrr":
				if vocabSize < 2 {
					return usagef("--vocab is required for %s: the number of words it randomizes over (≥ 2)", mech)
				}
				m, err := privacy.NewKRR(eps, vocabSize, "user")
				if err != nil {
					return usagef("%v", err)
				}
				ev = m.Event(1)
				if mech == "tkrr" {
					ev.Mechanism = privacy.MechanismTruncatedKRR
				}
				rep.Parameters["vocab"] = vocabSize
				rep.Parameters["keep_probability"] = m.KeepProb()
			default:
				return usagef("--mechanism %q: want rrp, krr or tkrr", mech)
			}
			rep.Mechanism = ev.Mechanism
			tuple, err := accountant.Compose([]privacy.Event{ev}, 0)
			if err != nil {
				return err
			}
			rep.Costs = append(rep.Costs, costOf("tuple", "user", tuple))
			it := ev
			it.Count = l
			if err := addRounds(rep, it, iters, 0, 0); err != nil {
				return err
			}
			rep.Assumptions = tuple.Assumptions
			if tot := rep.Costs[len(rep.Costs)-1]; tot.Delta >= 1 {
				rep.Notes = append(rep.Notes, fmt.Sprintf("the total δ = %s is ≥ 1: basic composition of RRP's per-tuple δ gives no guarantee at this setting", fmtDelta(tot.Delta)))
			}
			rep.Notes = append(rep.Notes, "the unit is a user holding one document; tuples of one iteration and all iterations compose (basic composition)")
			return writePrivacyReport(e.stdout, rep, pf.asJSON)
		},
	}
	fs := cmd.Flags()
	fs.Float64Var(&eps, "epsilon", 0, "ε per tuple")
	fs.StringVar(&mech, "mechanism", "rrp", "rrp, krr or tkrr")
	fs.Float64Var(&trunc, "truncation", 0.05, "RRP's δ: the tail mass of each topic never used as a replacement (the guarantee is (ε, 2δ) per tuple)")
	fs.Float64Var(&gamma, "gamma", 1, "γ ≥ 1 of RRP's Zipf assumption (Theorem 1)")
	fs.Float64Var(&ratio, "sample-ratio", 0.7, "r: fraction of the padded tuples sent per iteration (l = ⌈r·M⌉)")
	fs.IntVar(&iters, "iterations", 0, "T: training iterations")
	fs.IntVar(&vocabSize, "vocab", 0, "vocabulary size (kRR) or truncated vocabulary size (tkRR)")
	pf.register(cmd, "", 0)
	return cmd
}

func newPrivacyFedNMFCmd(e *env) *cobra.Command {
	var (
		pf        privacyFlags
		z         float64
		clip      float64
		rounds    int
		q         float64
		threshold int
	)
	cmd := &cobra.Command{
		Use:   "fednmf --noise-multiplier Z --rounds R [--sampling-fraction Q]",
		Short: "FedNMF with DP-FedAvg: clipped client updates plus Gaussian noise",
		Long: `DP-FedAvg (an optional addition to FedNMF): every sampled client's update is
clipped to L2 norm C and the server adds N(0, (z·C)²) noise to the sum, so
each round is a Gaussian mechanism with noise multiplier z per client. The
report gives the exact GDP cost without credit for sampling (every client in
every round) and, when a sampling fraction q < 1 is given, the RDP cost with
amplification by Poisson sampling of rate q.

With --threshold t (simulate --secure-aggregation --threshold t) the noise
is distributed: the coordinator adds none, each party adds its share of a
discrete Gaussian so that the sum of at least t survivors carries it all,
and each party is charged as if exactly t survived, every round, with no
credit for sampling (the coordinator chose the sample). The report composes
the run's own events, per document.`,
		Example: `  fedtopic privacy fednmf --noise-multiplier 1.1 --rounds 100 --sampling-fraction 0.2
  fedtopic privacy fednmf --target-epsilon 5 --rounds 100 --sampling-fraction 0.2
  fedtopic privacy fednmf --noise-multiplier 1.1 --rounds 100 --sampling-fraction 0.5 --threshold 3`,
		Args: privacyNoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := pf.check(); err != nil {
				return err
			}
			if rounds < 1 {
				return usagef("--rounds %d: want at least 1", rounds)
			}
			if !(q > 0 && q <= 1) {
				return usagef("--sampling-fraction %v: want q in (0, 1]", q)
			}
			if !(pf.delta > 0 && pf.delta < 1) {
				return usagef("--delta %v: want δ in (0, 1)", pf.delta)
			}
			if err := privacy.CheckSensitivity(clip); err != nil {
				return usagef("--clip %v: want a positive, finite L2 norm bound", clip)
			}
			if pf.maxDocLength > 0 {
				return usagef("--max-doc-length does not apply: the unit of DP-FedAvg is a whole client")
			}
			if threshold != 0 {
				return privacyFedNMFSecure(e, pf, fednmf.Config{Rounds: rounds, ClientFraction: q, Clip: clip, NoiseMultiplier: z, SecureThreshold: threshold})
			}
			rep := &privacyReport{Method: "fednmf", Mechanism: privacy.MechanismGaussian, Parameters: map[string]any{"rounds": rounds, "sampling_fraction": q, "clip": clip, "delta": pf.delta}}
			if pf.target != 0 {
				zg, err := calibrateMultiplier(pf.target, pf.delta, rounds, 1)
				if err != nil {
					return usagef("--target-epsilon: %v", err)
				}
				rep.Calibration = &privacyCalibration{TargetEpsilon: pf.target, Delta: pf.delta, Unit: "client", Parameter: "noise multiplier", Value: zg}
				if q < 1 {
					zs, err := calibrateMultiplier(pf.target, pf.delta, rounds, q)
					if err != nil {
						return usagef("--target-epsilon: %v", err)
					}
					rep.Calibration.WithSampling = zs
				}
				if z == 0 {
					z = zg
					if q < 1 {
						z = rep.Calibration.WithSampling
					}
				}
			}
			if err := privacy.CheckSigma(z); err != nil {
				return usagef("--noise-multiplier %v: want a positive, finite z = σ/C (or --target-epsilon)", z)
			}
			rep.Parameters["noise_multiplier"] = z
			rep.Parameters["sigma"] = z * clip
			ev := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: z * clip, Sensitivity: clip, Unit: "client", Count: 1}
			if err := addRounds(rep, ev, rounds, pf.delta, 0); err != nil {
				return err
			}
			if q < 1 {
				sev := privacy.Event{Mechanism: privacy.MechanismSubsampledGaussian, Sigma: z * clip, Sensitivity: clip, SamplingRate: q, Unit: "client", Count: 1}
				one, err := accountant.Compose([]privacy.Event{sev}, pf.delta)
				if err != nil {
					return err
				}
				sev.Count = rounds
				all, err := accountant.Compose([]privacy.Event{sev}, pf.delta)
				if err != nil {
					return err
				}
				tag := fmt.Sprintf("poisson q=%g", q)
				c1, ct := costOf("round", "client", one), costOf("total", "client", all)
				c1.Sampling, ct.Sampling = tag, tag
				rep.Costs = append(rep.Costs, c1, ct)
				rep.Notes = append(rep.Notes, "the sampled costs assume each client joins each round independently with probability q (Poisson sampling); a fixed-size sample needs a different bound")
			}
			return writePrivacyReport(e.stdout, rep, pf.asJSON)
		},
	}
	fs := cmd.Flags()
	fs.Float64Var(&z, "noise-multiplier", 0, "z: noise standard deviation divided by the clipping norm")
	fs.Float64Var(&clip, "clip", 1, "C: L2 norm each client's update is clipped to (does not change ε)")
	fs.IntVar(&rounds, "rounds", 0, "R: training rounds")
	fs.Float64Var(&q, "sampling-fraction", 1, "q: fraction of clients sampled per round (1 = all, no amplification)")
	fs.IntVar(&threshold, "threshold", 0, "under secure aggregation (simulate --secure-aggregation --threshold t): the noise is split among the parties and charged for t survivors, without credit for sampling")
	pf.register(cmd, "δ to convert the Gaussian guarantee to (ε, δ)", 1e-5)
	return cmd
}

// privacyFedNMFSecure reports DP-FedAvg with distributed noise under
// secure aggregation from the events fednmf.Config states for it
// (Config.Events, what a run's parties are charged), so the report and a
// run agree. With --target-epsilon it solves for the noise multiplier on
// those events.
func privacyFedNMFSecure(e *env, pf privacyFlags, cfg fednmf.Config) error {
	t := cfg.SecureThreshold
	if t < 1 || t > fed.MaxSecAggParties {
		return usagef("--threshold %d: want t from 1 to %d parties (or 0: no secure aggregation)", t, fed.MaxSecAggParties)
	}
	rep := &privacyReport{Method: "fednmf", Mechanism: privacy.MechanismDiscreteGaussian,
		Parameters: map[string]any{"rounds": cfg.Rounds, "sampling_fraction": cfg.ClientFraction, "clip": cfg.Clip, "delta": pf.delta, "threshold": t}}
	total := func(c fednmf.Config) (float64, error) {
		ct, err := accountant.Compose(c.Events(), pf.delta)
		return ct.Epsilon, err
	}
	if pf.target != 0 {
		zt, err := calibrate(pf.target, func(z float64) (float64, error) {
			c := cfg
			c.NoiseMultiplier = z
			return total(c)
		})
		if err != nil {
			return usagef("--target-epsilon: %v", err)
		}
		rep.Calibration = &privacyCalibration{TargetEpsilon: pf.target, Delta: pf.delta, Unit: fednmf.UnitDocument, Parameter: "noise multiplier", Value: zt}
		if cfg.NoiseMultiplier == 0 {
			cfg.NoiseMultiplier = zt
		}
	}
	if err := privacy.CheckSigma(cfg.NoiseMultiplier); err != nil {
		return usagef("--noise-multiplier %v: want a positive, finite z = σ/C (or --target-epsilon)", cfg.NoiseMultiplier)
	}
	if err := cfg.Validate(); err != nil {
		return usagef("--threshold %d: %v", t, err)
	}
	ev := cfg.Events()
	if len(ev) != 1 {
		return fmt.Errorf("fednmf: %d events per run, want one", len(ev))
	}
	rep.Mechanism = ev[0].Mechanism
	rep.Parameters["noise_multiplier"] = cfg.NoiseMultiplier
	rep.Parameters["sigma"] = cfg.NoiseMultiplier * cfg.Clip
	one := ev[0]
	one.Count = 1
	if err := addRounds(rep, one, ev[0].Count, pf.delta, 0); err != nil {
		return err
	}
	rep.Notes = append(rep.Notes,
		fmt.Sprintf("secure aggregation with distributed noise: the coordinator adds none; each party adds its share of a discrete Gaussian so that the sum of at least %d parties carries σ = z·C on a grid; each party is charged as if exactly %d survived", t, t),
		"no credit for sampling: the coordinator, against whom the noise protects, chose the sample, so every party is charged every round, sampled or not",
		"the unit is a whole client, charged per document: a client's guarantee holds for each of its documents")
	return writePrivacyReport(e.stdout, rep, pf.asJSON)
}

// calibrateMultiplier returns the smallest noise multiplier (to 1e-6
// relative) for which rounds rounds at sampling rate q cost at most eps.
func calibrateMultiplier(eps, delta float64, rounds int, q float64) (float64, error) {
	return calibrate(eps, func(z float64) (float64, error) {
		ev := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: z, Sensitivity: 1, Unit: "client", Count: rounds}
		if q < 1 {
			ev.Mechanism, ev.SamplingRate = privacy.MechanismSubsampledGaussian, q
		}
		c, err := accountant.Compose([]privacy.Event{ev}, delta)
		return c.Epsilon, err
	})
}

// calibrate returns the smallest noise multiplier (to 1e-6 relative) whose
// cost, decreasing in it, is at most eps.
func calibrate(eps float64, cost func(z float64) (float64, error)) (float64, error) {
	lo, hi := 0.0, 1.0
	for {
		c, err := cost(hi)
		if err != nil {
			return 0, err
		}
		if c <= eps {
			break
		}
		lo, hi = hi, 2*hi
		if hi > 1e6 {
			return 0, fmt.Errorf("no noise multiplier below 10^6 reaches ε = %g", eps)
		}
	}
	for hi-lo > 1e-6*hi {
		mid := (lo + hi) / 2
		c, err := cost(mid)
		if err != nil {
			return 0, err
		}
		if c <= eps {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}

// fmtEps formats an ε for people: four significant digits, whole numbers
// from 10,000 on.
func fmtEps(x float64) string {
	if math.Abs(x) >= 1e4 && !math.IsInf(x, 0) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.4g", x)
}

// describeAccountant spells out an accountant name for people.
func describeAccountant(a string) string {
	var parts []string
	for _, p := range strings.Split(a, "+") {
		switch p {
		case "pure":
			p = "pure ε-DP, ε adds up"
		case "basic":
			p = "basic composition"
		case "gdp":
			p = "exact μ-GDP, analytic Gaussian conversion"
		case "rdp":
			p = "Rényi DP, improved conversion"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " + ")
}

// fmtDelta formats a δ.
func fmtDelta(x float64) string { return fmt.Sprintf("%.3g", x) }

// scopeName names a report line's scope for people.
func scopeName(scope string) string {
	switch scope {
	case "once":
		return "privatization (once)"
	case "round":
		return "each round"
	case "tuple":
		return "each tuple"
	}
	return scope
}

func writePrivacyReport(w io.Writer, rep *privacyReport, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	name := map[string]string{"ftm": "FTM / iFTM", "pctd": "PC-TD", "fedlda": "FedLDA", "fednmf": "FedNMF with DP-FedAvg"}[rep.Method]
	fmt.Fprintf(w, "%s (%s)\n", name, rep.Mechanism)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range rep.Costs {
		how := describeAccountant(c.Accountant)
		if c.Mu > 0 {
			how = fmt.Sprintf("%s, μ = %.4g", how, c.Mu)
		}
		label := fmt.Sprintf("%s, per %s", scopeName(c.Scope), c.Unit)
		if c.Sampling != "" {
			label += ", " + strings.Replace(c.Sampling, "poisson q=", "sampled at q = ", 1)
		}
		switch {
		case c.Accountant == "post-processing":
			fmt.Fprintf(tw, "  %s:\tε = 0\t(post-processing of the noisy counts)\n", label)
		default:
			fmt.Fprintf(tw, "  %s:\tε = %s, δ = %s\t(%s)\n", label, fmtEps(c.Epsilon), fmtDelta(c.Delta), how)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if c := rep.Calibration; c != nil {
		line := fmt.Sprintf("  calibration: %s %s for ε = %s per %s", c.Parameter, fmtEps(c.Value), fmtEps(c.TargetEpsilon), c.Unit)
		if c.Delta > 0 {
			line += fmt.Sprintf(" at δ = %s", fmtDelta(c.Delta))
		}
		if c.WithSampling > 0 {
			line += fmt.Sprintf(" (%s with sampling credited)", fmtEps(c.WithSampling))
		}
		fmt.Fprintln(w, line)
	}
	for _, a := range rep.Assumptions {
		fmt.Fprintf(w, "  assumption: %s\n", a)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	var params []string
	for _, k := range slices.Sorted(maps.Keys(rep.Parameters)) {
		params = append(params, fmt.Sprintf("%s=%v", k, rep.Parameters[k]))
	}
	_, err := fmt.Fprintf(w, "  parameters: %s\n", strings.Join(params, " "))
	return err
}
