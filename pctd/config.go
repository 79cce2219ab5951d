package pctd

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// Variants of Config.Variant.
const (
	// VariantUnit is the paper's mechanism: fresh Gaussian noise on every
	// semantic unit's count vector in every iteration (Eq. 4).
	VariantUnit = "unit"
	// VariantSSP is sufficient-statistics perturbation: Gaussian noise
	// once per party and iteration on M_t, computed from the exact counts
	// of length-clipped documents.
	VariantSSP = "ssp"
)

// Noise paths of Config.NoisePath (VariantUnit only).
const (
	// PathFast draws L·Ω_u as chol(σ²LLᵀ)·ξ per unit and the rest of the
	// noise as one V×K Gaussian matrix per party and iteration: exact in
	// distribution, O(units·K² + V·K²) per iteration.
	PathFast = "fast"
	// PathLiteral draws every Ω_u over the whole vocabulary, as Eq. 4 is
	// written: O(units·V·K) per iteration. It is the reference.
	PathLiteral = "literal"
)

// Privacy units of the events a party reports.
const (
	UnitWord     = privacy.DefaultUnit // "word occurrence"
	UnitDocument = "document"
)

// Units of Config.Units.
const (
	// UnitsCorpus uses the corpus's semantic units as they are (sentences,
	// paragraphs, windows or documents, as the tokenizer cut them).
	UnitsCorpus = "corpus"
	// UnitsDocument makes every document one semantic unit, whatever
	// units the corpus has: all its words share one topic per E-step.
	UnitsDocument = "document"
	// DefaultUnits cuts every unit of the corpus (a sentence by default)
	// into windows of three tokens, the paper's semantic unit.
	DefaultUnits = "window:3"
)

// Defaults of Config, used where a field is zero. doc.go says how each was
// chosen.
const (
	DefaultVariant = VariantSSP
	// PaperSigma is the paper's noise standard deviation per count.
	PaperSigma = 0.25
	// DefaultEpsilon is the target ε per document of the SSP variant over
	// a whole run, at Config.Delta.
	DefaultEpsilon    = 10.0
	DefaultDelta      = 1e-5
	DefaultK          = 10
	DefaultRounds     = 20
	DefaultBeta       = 0.01
	DefaultAlphaSum   = 5.0 // α = DefaultAlphaSum/K for inference with the model
	DefaultRelTau     = 0.3
	DefaultRelCutoff  = 0.5
	DefaultNeighbours = 10
	MaxTopics         = 1 << 12
	// MaxScheduleGrowth bounds Config.ScheduleGrowth: beyond it the first
	// rounds' noise is too large to be worth running them.
	MaxScheduleGrowth = 100
)

// Config holds PC-TD's parameters; it travels as fed.Setup.Params (JSON)
// and is the same at the coordinator and every party. The zero value of
// every field means the default in its comment.
type Config struct {
	// Variant is VariantSSP (default) or VariantUnit (the paper's).
	Variant string `json:"variant,omitempty"`
	// Sigma is the noise: for VariantUnit the standard deviation σ of the
	// noise on every count (the paper's σ; the sensitivity of one word
	// occurrence is 1); for VariantSSP the noise multiplier, the standard
	// deviation of the noise on M_t divided by its sensitivity
	// √MaxDocTokens. Zero: calibrated from Epsilon.
	Sigma float64 `json:"sigma,omitempty"`
	// Epsilon, when Sigma is zero, is the target ε over the whole run at
	// Delta, per document (per word occurrence for VariantUnit with
	// Unit = UnitWord), from which Sigma is calibrated; default
	// DefaultEpsilon.
	Epsilon float64 `json:"epsilon,omitempty"`
	// Delta is the δ at which Epsilon calibrates Sigma; default
	// DefaultDelta.
	Delta float64 `json:"delta,omitempty"`
	// NoNoise turns the noise off (σ = 0): the non-private EM, for
	// baselines. Nothing is charged.
	NoNoise bool `json:"no_noise,omitempty"`
	// Topics is K; default DefaultK.
	Topics int `json:"topics,omitempty"`
	// Rounds is T, the number of EM iterations, one per round; default
	// DefaultRounds.
	Rounds int `json:"rounds,omitempty"`
	// Units is DefaultUnits ("window:N", N-token windows inside the
	// corpus's units), UnitsCorpus or UnitsDocument.
	Units string `json:"units,omitempty"`
	// Beta is the pseudo-count added to every entry of the summed,
	// clipped M before a topic is normalized (Eq. 11), so that no
	// log p(w|z) is −∞; default DefaultBeta.
	Beta float64 `json:"beta,omitempty"`
	// MaxDocTokens, if positive, clips every document to its longest
	// prefix whose word counts a_w satisfy Σ_w a_w² ≤ MaxDocTokens (so at
	// most MaxDocTokens tokens, and all of them when they are distinct
	// words) before anything is computed; required by VariantSSP and by
	// Unit = UnitDocument, where it bounds the sensitivity of a document:
	// MaxDocTokens for VariantUnit (group privacy over its tokens),
	// √MaxDocTokens for VariantSSP.
	MaxDocTokens int `json:"max_doc_tokens,omitempty"`
	// Unit is the privacy unit of the events a party reports for
	// VariantUnit: UnitWord (default, the paper's) or UnitDocument (group
	// privacy over MaxDocTokens). VariantSSP always reports UnitDocument.
	Unit string `json:"unit,omitempty"`
	// NoisePath is PathFast (default) or PathLiteral, VariantUnit only.
	NoisePath string `json:"noise_path,omitempty"`
	// Embeddings names a word2vec or GloVe text file read by the
	// coordinator for the word-relation step (Eq. 12-13); empty: no
	// relation step.
	Embeddings string `json:"embeddings,omitempty"`
	// RelationTau is the tradeoff τ of Eq. 13; default DefaultRelTau.
	RelationTau float64 `json:"relation_tau,omitempty"`
	// RelationCutoff is the least cosine similarity kept in R; default
	// DefaultRelCutoff.
	RelationCutoff float64 `json:"relation_cutoff,omitempty"`
	// RelationNeighbours is the most neighbours a word keeps in R;
	// default DefaultNeighbours.
	RelationNeighbours int `json:"relation_neighbours,omitempty"`
	// SecureNoise draws the noise from keys read from crypto/rand instead
	// of from the seed: required for real deployments.
	SecureNoise bool `json:"secure_noise,omitempty"`
	// Workers is the number of goroutines a party computes with; it never
	// changes the result. Default GOMAXPROCS.
	Workers int `json:"workers,omitempty"`
	// SecureThreshold, for VariantSSP, is the threshold t of the secure
	// aggregation the run uses (the same as the engine's): the noise is
	// then distributed, each party adding a t-th of its variance, and
	// Epsilon calibrates it for the discrete Gaussian (secure.go). Zero:
	// every party adds its full noise.
	SecureThreshold int `json:"secure_threshold,omitempty"`
	// ScheduleGrowth is g of the noise schedule across rounds: round t
	// (1..T) gets the share w_t = g^(t−1)/Σ_s g^(s−1) of the run's μ² (GDP;
	// of the Rényi divergence alike), so its noise multiplier is
	// Sigma/√(T·w_t) and Σ_t 1/σ_t² = T/Sigma²: the run costs what T
	// rounds at Sigma cost. g > 1 spends more on the last rounds, which
	// make the model; 0 or 1: every round the same (Sigma).
	ScheduleGrowth float64 `json:"schedule_growth,omitempty"`
	// AverageLast is m: the final topics come from the precision-weighted
	// average (weights w_t) of the last m rounds' summed M instead of the
	// last one alone — post-processing of released values at the
	// coordinator, free. 0 or 1: the last round's sum only.
	AverageLast int `json:"average_last,omitempty"`
	// ThetaPrior is a pseudo-count added to every topic of θ_d when a
	// party updates it (Eq. 7 becomes the MAP update under a symmetric
	// Dirichlet prior of parameter 1 + ThetaPrior): θ_d never leaves the
	// party and each responsibility stays a distribution depending on its
	// own document only, so the sensitivity is unchanged. 0: the paper's
	// maximum-likelihood update.
	ThetaPrior float64 `json:"theta_prior,omitempty"`
}

// ParseConfig decodes a Config from fed.Setup.Params (JSON; empty means
// all defaults), rejecting unknown fields, and validates it.
func ParseConfig(params []byte) (Config, error) {
	var c Config
	if len(strings.TrimSpace(string(params))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(params)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("pctd: params: %w", err)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// finite reports whether x is a finite number ≥ 0.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 }

// Validate reports every problem with c, joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("pctd: "+format, args...)) }
	switch c.Variant {
	case "", VariantUnit, VariantSSP:
	default:
		bad("variant = %q, want %q or %q", c.Variant, VariantUnit, VariantSSP)
	}
	if !finite(c.Sigma) {
		bad("sigma = %v, want a finite number > 0 (0: calibrated from epsilon)", c.Sigma)
	}
	if !finite(c.Epsilon) {
		bad("epsilon = %v, want a finite number > 0", c.Epsilon)
	}
	if c.Sigma > 0 && c.Epsilon > 0 {
		bad("sigma = %v and epsilon = %v: give one (epsilon calibrates sigma)", c.Sigma, c.Epsilon)
	}
	if !finite(c.Delta) || c.Delta >= 1 {
		bad("delta = %v, want a number in (0, 1)", c.Delta)
	}
	if c.Topics < 0 || c.Topics > MaxTopics {
		bad("topics = %d, want 1..%d", c.Topics, MaxTopics)
	}
	if c.Rounds < 0 {
		bad("rounds = %d, want ≥ 1", c.Rounds)
	}
	if _, err := windowOf(c.Units); err != nil {
		errs = append(errs, err)
	}
	if !finite(c.Beta) {
		bad("beta = %v, want a finite number > 0", c.Beta)
	}
	if c.MaxDocTokens < 0 {
		bad("max_doc_tokens = %d, want ≥ 0 (0 = no limit)", c.MaxDocTokens)
	}
	ssp := c.Variant == VariantSSP || c.Variant == ""
	switch c.Unit {
	case "", UnitWord:
		if ssp && c.Unit == UnitWord {
			bad("unit %q: the SSP variant protects documents only (one word changes a whole document's responsibilities)", c.Unit)
		}
	case UnitDocument:
	default:
		bad("unit = %q, want %q or %q", c.Unit, UnitWord, UnitDocument)
	}
	if !c.NoNoise && c.MaxDocTokens <= 0 && (ssp || c.Unit == UnitDocument) {
		bad("max_doc_tokens must be at least 1 for a cost per document: it bounds a document's sensitivity")
	}
	switch c.NoisePath {
	case "", PathFast:
	case PathLiteral:
		if ssp {
			bad("noise_path %q applies to the unit variant only", c.NoisePath)
		}
	default:
		bad("noise_path = %q, want %q or %q", c.NoisePath, PathFast, PathLiteral)
	}
	if !finite(c.ThetaPrior) {
		bad("theta_prior = %v, want a finite number ≥ 0", c.ThetaPrior)
	}
	if !finite(c.RelationTau) {
		bad("relation_tau = %v, want a finite number ≥ 0", c.RelationTau)
	}
	if math.IsNaN(c.RelationCutoff) || c.RelationCutoff < 0 || c.RelationCutoff > 1 {
		bad("relation_cutoff = %v, want a cosine in [0, 1]", c.RelationCutoff)
	}
	if c.RelationNeighbours < 0 {
		bad("relation_neighbours = %d, want ≥ 1", c.RelationNeighbours)
	}
	if c.Workers < 0 {
		bad("workers = %d, want ≥ 1", c.Workers)
	}
	if !finite(c.ScheduleGrowth) || c.ScheduleGrowth > MaxScheduleGrowth {
		bad("schedule_growth = %v, want a number in (0, %g] (1: every round the same noise)", c.ScheduleGrowth, float64(MaxScheduleGrowth))
	}
	if c.AverageLast < 0 {
		bad("average_last = %d, want ≥ 1 (1: the last round only)", c.AverageLast)
	} else if c.Rounds >= 0 && c.AverageLast > c.roundsOrDefault() {
		bad("average_last = %d, more than the %d rounds", c.AverageLast, c.roundsOrDefault())
	}
	if len(errs) == 0 {
		errs = append(errs, c.validateSecure()...)
	}
	return errors.Join(errs...)
}

// roundsOrDefault is Rounds, DefaultRounds when zero.
func (c Config) roundsOrDefault() int {
	if c.Rounds == 0 {
		return DefaultRounds
	}
	return c.Rounds
}

// windowOf parses Config.Units: the window size, 0 for UnitsCorpus, −1
// for UnitsDocument.
func windowOf(units string) (int, error) {
	switch units {
	case "":
		units = DefaultUnits
	case UnitsCorpus:
		return 0, nil
	case UnitsDocument:
		return -1, nil
	}
	if rest, ok := strings.CutPrefix(units, "window:"); ok {
		if n, err := strconv.Atoi(rest); err == nil && n >= 1 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("pctd: units = %q, want window:N (N ≥ 1), %q or %q", units, UnitsCorpus, UnitsDocument)
}

// withDefaults returns c with every zero field set to its default and
// Sigma calibrated. It assumes c is valid.
func (c Config) withDefaults() Config {
	if c.Variant == "" {
		c.Variant = DefaultVariant
	}
	if c.Delta == 0 {
		c.Delta = DefaultDelta
	}
	if c.Topics == 0 {
		c.Topics = DefaultK
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	if c.Units == "" {
		c.Units = DefaultUnits
	}
	if c.Beta == 0 {
		c.Beta = DefaultBeta
	}
	if c.Variant == VariantSSP {
		c.Unit = UnitDocument
	}
	if c.Unit == "" {
		c.Unit = UnitWord
	}
	if c.NoisePath == "" {
		c.NoisePath = PathFast
	}
	if c.RelationTau == 0 {
		c.RelationTau = DefaultRelTau
	}
	if c.RelationCutoff == 0 {
		c.RelationCutoff = DefaultRelCutoff
	}
	if c.RelationNeighbours == 0 {
		c.RelationNeighbours = DefaultNeighbours
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Sigma == 0 && !c.NoNoise {
		if c.Epsilon == 0 {
			c.Epsilon = DefaultEpsilon
		}
		c.Sigma = c.calibrate()
	}
	return c
}

// sensitivity returns the L2 sensitivity of one iteration's release at the
// unit the events are reported in (doc.go derives both):
//
//   - VariantUnit, UnitWord: 1 (one count of one unit changes by one);
//   - VariantUnit, UnitDocument: MaxDocTokens (group privacy: the counts
//     of a document of at most L tokens change by a vector of L2 norm at
//     most L);
//   - VariantSSP: √MaxDocTokens (‖ΔM_t‖_F ≤ ‖a_d‖₂ for the document's
//     word-count vector a_d, and documents are clipped to ‖a_d‖₂² ≤ L).
func (c Config) sensitivity() float64 {
	switch {
	case c.Variant == VariantSSP:
		return math.Sqrt(float64(c.MaxDocTokens))
	case c.Unit == UnitDocument:
		return float64(c.MaxDocTokens)
	}
	return 1
}

// noiseStd returns the standard deviation of the noise actually added:
// per count for VariantUnit, per entry of M_t for VariantSSP.
func (c Config) noiseStd() float64 {
	if c.Variant == VariantSSP {
		return c.Sigma * c.sensitivity()
	}
	return c.Sigma
}

// calibrate returns Sigma for Epsilon at Delta over Rounds iterations: the
// T releases compose to μ = √T·Δ/std GDP, so std = √T·Δ/μ(ε, δ). A
// schedule keeps μ (schedule.go), so Sigma is the same.
func (c Config) calibrate() float64 {
	if c.distributed() {
		return c.calibrateDistributed()
	}
	mu, err := accountant.GaussianMu(c.Epsilon, c.Delta)
	if err != nil || !(mu > 0) {
		return math.NaN() // reported by Events
	}
	std := math.Sqrt(float64(c.Rounds)) * c.sensitivity() / mu
	if c.Variant == VariantSSP {
		return std / c.sensitivity()
	}
	return std
}

// roundEvent is what one party releases in round t (one EM iteration,
// 1..Rounds): a continuous Gaussian mechanism at the unit c.Unit, with the
// round's noise under a schedule. c must have its defaults. With NoNoise
// it returns nil.
func (c Config) roundEvent(t int) ([]privacy.Event, error) {
	if c.NoNoise {
		return nil, nil
	}
	if !(c.Sigma > 0) || math.IsInf(c.Sigma, 0) {
		return nil, fmt.Errorf("pctd: sigma %v: cannot calibrate ε = %g at δ = %g", c.Sigma, c.Epsilon, c.Delta)
	}
	c = c.at(t)
	e := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: c.noiseStd(), Sensitivity: c.sensitivity(), Unit: c.Unit, Count: 1}
	if c.distributed() {
		e = c.distributedEvent()
	}
	if c.Variant == VariantUnit && c.Unit == UnitDocument {
		// The same event as accountant.Group over MaxDocTokens word
		// occurrences: sensitivity L·1.
		w := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: c.Sigma, Sensitivity: 1, Unit: UnitWord, Count: 1}
		g, err := accountant.Group(w, c.MaxDocTokens, UnitDocument)
		if err != nil {
			return nil, fmt.Errorf("pctd: document-level cost: %w", err)
		}
		e = g
	}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("pctd: %w", err)
	}
	return []privacy.Event{e}, nil
}

// Events returns what one party releases over a whole run with c,
// computed from the parameters alone, before any data is seen: Rounds
// Gaussian releases at the unit the events are reported in (one event of
// that count, or with a schedule one per round). A party's Plan returns
// round t's, so a pre-flight check made with them agrees with what the
// ledger is charged. With NoNoise it returns nil.
func (c Config) Events() ([]privacy.Event, error) {
	c = c.withDefaults()
	if c.scheduled() && c.Sigma > 0 && !math.IsInf(c.Sigma, 0) {
		return c.scheduledEvents()
	}
	ev, err := c.roundEvent(1)
	if err != nil || ev == nil {
		return nil, err
	}
	ev[0].Count = c.Rounds
	return ev, nil
}

// WordEvents returns, for VariantUnit, the run's releases per word
// occurrence (the paper's unit), whatever Unit the ledger counts; nil for
// VariantSSP, which protects documents only, and with NoNoise.
func (c Config) WordEvents() []privacy.Event {
	c = c.withDefaults()
	if c.NoNoise || c.Variant != VariantUnit {
		return nil
	}
	return []privacy.Event{{Mechanism: privacy.MechanismGaussian, Sigma: c.Sigma, Sensitivity: 1, Unit: UnitWord, Count: c.Rounds}}
}

// NoiseStd returns the standard deviation of the noise a party adds with
// c: per count and unit for VariantUnit, per entry of M_t for VariantSSP;
// 0 with NoNoise.
func (c Config) NoiseStd() float64 {
	c = c.withDefaults()
	if c.NoNoise {
		return 0
	}
	return c.noiseStd()
}

// Resolved returns c with every default filled in and Sigma calibrated,
// as a party and the coordinator use it.
func (c Config) Resolved() Config { return c.withDefaults() }

// params returns the configuration as provenance strings.
func (c Config) params() map[string]string {
	c = c.withDefaults()
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	p := map[string]string{
		"variant": c.Variant,
		"topics":  strconv.Itoa(c.Topics),
		"rounds":  strconv.Itoa(c.Rounds),
		"units":   c.Units,
		"beta":    f(c.Beta),
		"unit":    c.Unit,
	}
	if c.NoNoise {
		p["no_noise"] = "true"
	} else {
		p["sigma"] = f(c.Sigma)
		p["noise_std"] = f(c.noiseStd())
	}
	if c.Epsilon > 0 {
		p["epsilon"] = f(c.Epsilon)
		p["delta"] = f(c.Delta)
	}
	if c.MaxDocTokens > 0 {
		p["max_doc_tokens"] = strconv.Itoa(c.MaxDocTokens)
	}
	if c.SecureThreshold > 0 {
		p["secure_threshold"] = strconv.Itoa(c.SecureThreshold)
	}
	if c.Variant == VariantUnit {
		p["noise_path"] = c.NoisePath
	}
	if c.Embeddings != "" {
		p["relation_tau"] = f(c.RelationTau)
		p["relation_cutoff"] = f(c.RelationCutoff)
		p["relation_neighbours"] = strconv.Itoa(c.RelationNeighbours)
	}
	return p
}
