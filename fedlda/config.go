package fedlda

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/fedtopic/fedtopic/privacy"
)

// Mechanisms a Config can name.
const (
	MechanismRRP  = "rrp"  // randomized response with priori (Algorithm 3): (ε, 2δ) per tuple under a Zipf assumption
	MechanismKRR  = "krr"  // k-ary randomized response over the vocabulary: exact ε-LDP per tuple
	MechanismTKRR = "tkrr" // kRR over the truncated vocabulary: exact ε-LDP per tuple
	MechanismNone = "none" // no perturbation: no privacy, for baselines
)

// Collector rules a Config can name.
const (
	CollectorClip = "clip" // a −1 that finds no count is clipped at 0, the +1 applied
	CollectorDrop = "drop" // a tuple whose −1 finds no count is dropped whole
)

// Samplers a Config can name.
const (
	SamplerGibbs = "gibbs" // collapsed Gibbs over the K topics: O(K) per token
	SamplerMH    = "mh"    // Metropolis–Hastings with alias tables of φ: O(1) per token
)

// Unit is the privacy unit of every event: one user, who holds one document.
const Unit = "document"

// Defaults of Config, used where a field is zero. doc.go says how each was
// chosen.
const (
	DefaultK            = 10
	DefaultAlphaSum     = 5.0 // α = DefaultAlphaSum/K
	DefaultBeta         = 0.01
	DefaultRounds       = 20
	DefaultMechanism    = MechanismKRR
	DefaultEpsilon      = 10.0
	DefaultTruncation   = 0.05
	DefaultGamma        = 1.0
	DefaultSampleRatio  = 0.7
	DefaultMaxDocTokens = 20
	DefaultSampler      = SamplerGibbs
	DefaultMHSteps      = 2
	DefaultBlockUsers   = 1 << 10
	DefaultMaxUsers     = 1 << 20
)

// MaxK is the largest number of topics: topics travel as uint16, and
// 0xFFFF means "no topic".
const MaxK = 1 << 14

// Config holds FedLDA's parameters; it travels as fed.Setup.Params (JSON)
// and is the same at the collector and every party. The zero value of
// every field means the default in its comment.
type Config struct {
	// K is the number of topics; default 10.
	K int `json:"k,omitempty"`
	// Rounds is T, the number of iterations (one round each); default 20.
	Rounds int `json:"rounds,omitempty"`
	// Alpha is the symmetric document-topic prior; default 5/K.
	Alpha float64 `json:"alpha,omitempty"`
	// Beta is the symmetric topic-word prior of φ_k ∝ n_k· + β; default 0.01.
	Beta float64 `json:"beta,omitempty"`
	// Mechanism perturbs each sent tuple's word: rrp, krr, tkrr or none;
	// default krr.
	Mechanism string `json:"mechanism,omitempty"`
	// Collector is how the collector keeps its counts non-negative when a
	// tuple's −1 finds no count at (k_old, w): CollectorClip (the default)
	// clips the −1 at 0 and applies the +1; CollectorDrop drops the tuple
	// whole, as the public FedLDA code does (its word was perturbed: no
	// user's assignment is there). Both are post-processing, free in
	// privacy. Drop needs the tuples, so it cannot run under secure
	// aggregation, where the collector sees only summed counts.
	Collector string `json:"collector,omitempty"`
	// Epsilon is ε per tuple; default 10. A user sends l tuples per
	// iteration, so one iteration costs l·ε and the run T·l·ε per user.
	Epsilon float64 `json:"epsilon,omitempty"`
	// Truncation is δ ∈ (0, ½): the tail mass of each topic RRP never uses
	// as a replacement (its guarantee is (ε, 2δ) per tuple), and the tail
	// mass of the corpus word distribution t-kRR leaves out of its domain;
	// default 0.05.
	Truncation float64 `json:"truncation,omitempty"`
	// Gamma is γ ≥ 1 of RRP's Zipf assumption (Theorem 1); default 1.
	Gamma float64 `json:"gamma,omitempty"`
	// SampleRatio is r ∈ (0, 1]: a user sends l = ⌈r·M⌉ of its M padded
	// tuples per iteration; default 0.7.
	SampleRatio float64 `json:"sample_ratio,omitempty"`
	// MaxDocTokens is M, the padding length: documents are truncated to
	// their first M tokens, and every user's tuple list is padded to M;
	// default 20.
	MaxDocTokens int `json:"max_doc_tokens,omitempty"`
	// Sampler re-samples the topics: gibbs or mh; default gibbs.
	Sampler string `json:"sampler,omitempty"`
	// MHSteps is the number of MH steps (a word proposal and a document
	// proposal each) per token; default 2.
	MHSteps int `json:"mh_steps,omitempty"`
	// BlockUsers is the number of users per block with its own random
	// stream; default 1024. It changes the draws, never their law.
	BlockUsers int `json:"block_users,omitempty"`
	// MaxUsers bounds the users of one party (the size of an update);
	// default 2²⁰.
	MaxUsers int `json:"max_users,omitempty"`
	// Workers is the number of goroutines per party; default 1. It never
	// changes the result.
	Workers int `json:"workers,omitempty"`
}

// ParseConfig decodes params (JSON, unknown fields refused) and validates
// the result.
func ParseConfig(params []byte) (Config, error) {
	var c Config
	if len(strings.TrimSpace(string(params))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(params)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("fedlda: params: %w", err)
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate reports every problem with c, joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("fedlda: "+format, args...)) }
	if c.K < 0 || c.K > MaxK {
		bad("k = %d, want 1..%d", c.K, MaxK)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"rounds", c.Rounds}, {"max_doc_tokens", c.MaxDocTokens}, {"mh_steps", c.MHSteps},
		{"block_users", c.BlockUsers}, {"max_users", c.MaxUsers}, {"workers", c.Workers}} {
		if f.v < 0 {
			bad("%s = %d, want ≥ 1 (0 for the default)", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"alpha", c.Alpha}, {"beta", c.Beta}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			bad("%s = %v, want a finite number > 0", f.name, f.v)
		}
	}
	switch c.Mechanism {
	case "", MechanismRRP, MechanismKRR, MechanismTKRR, MechanismNone:
	default:
		bad("mechanism %q, want rrp, krr, tkrr or none", c.Mechanism)
	}
	switch c.Collector {
	case "", CollectorClip, CollectorDrop:
	default:
		bad("collector %q, want clip or drop", c.Collector)
	}
	switch c.Sampler {
	case "", SamplerGibbs, SamplerMH:
	default:
		bad("sampler %q, want gibbs or mh", c.Sampler)
	}
	if c.Epsilon != 0 {
		if err := privacy.CheckEpsilon(c.Epsilon); err != nil {
			bad("epsilon = %v, want a finite ε per tuple > 0", c.Epsilon)
		}
	}
	if c.Truncation != 0 && !(c.Truncation > 0 && c.Truncation < 0.5) {
		bad("truncation = %v, want δ in (0, 0.5)", c.Truncation)
	}
	if c.Gamma != 0 && (math.IsNaN(c.Gamma) || math.IsInf(c.Gamma, 0) || c.Gamma < 1) {
		bad("gamma = %v, want a finite γ ≥ 1", c.Gamma)
	}
	if c.SampleRatio != 0 && !(c.SampleRatio > 0 && c.SampleRatio <= 1) {
		bad("sample_ratio = %v, want r in (0, 1]", c.SampleRatio)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	d := c.withDefaults()
	if n := d.Tuples(); int64(d.MaxUsers)*int64(n)*tupleSize > maxPayload {
		bad("max_users = %d: %d users × %d tuples of %d bytes exceed an update's %d bytes", d.MaxUsers, d.MaxUsers, n, tupleSize, maxPayload)
	}
	return errors.Join(errs...)
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlphaSum / float64(c.K)
	}
	if c.Beta == 0 {
		c.Beta = DefaultBeta
	}
	if c.Mechanism == "" {
		c.Mechanism = DefaultMechanism
	}
	if c.Epsilon == 0 {
		c.Epsilon = DefaultEpsilon
	}
	if c.Truncation == 0 {
		c.Truncation = DefaultTruncation
	}
	if c.Collector == "" {
		c.Collector = CollectorClip
	}
	if c.Gamma == 0 {
		c.Gamma = DefaultGamma
	}
	if c.SampleRatio == 0 {
		c.SampleRatio = DefaultSampleRatio
	}
	if c.MaxDocTokens == 0 {
		c.MaxDocTokens = DefaultMaxDocTokens
	}
	if c.Sampler == "" {
		c.Sampler = DefaultSampler
	}
	if c.MHSteps == 0 {
		c.MHSteps = DefaultMHSteps
	}
	if c.BlockUsers == 0 {
		c.BlockUsers = DefaultBlockUsers
	}
	if c.MaxUsers == 0 {
		c.MaxUsers = DefaultMaxUsers
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	return c
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config { return c.withDefaults() }

// Tuples returns l = ⌈r·M⌉, the tuples every user sends per iteration.
func (c Config) Tuples() int {
	d := c.withDefaults()
	l := int(math.Ceil(d.SampleRatio * float64(d.MaxDocTokens)))
	return min(max(l, 1), d.MaxDocTokens)
}

// Events returns what one iteration releases per user (= per document): l
// tuples, each perturbed by the mechanism at ε (RRP: (ε, 2δ) under
// privacy.RRPAssumption). Basic composition makes that l·ε per iteration
// and T·l·ε per run. No perturbation releases nothing private: nil. The
// Learner's Plan and Step.Spent and the command line's pre-flight cost all
// come from here.
func (c Config) Events() ([]privacy.Event, error) {
	d := c.withDefaults()
	l := d.Tuples()
	switch d.Mechanism {
	case MechanismNone:
		return nil, nil
	case MechanismKRR:
		return []privacy.Event{{Mechanism: privacy.MechanismKRR, Epsilon: d.Epsilon, Unit: Unit, Count: l}}, nil
	case MechanismTKRR:
		return []privacy.Event{{Mechanism: privacy.MechanismTruncatedKRR, Epsilon: d.Epsilon, Unit: Unit, Count: l}}, nil
	case MechanismRRP:
		m, err := privacy.NewRRP(privacy.RRPConfig{Epsilon: d.Epsilon, Delta: d.Truncation, Gamma: d.Gamma, Unit: Unit})
		if err != nil {
			return nil, fmt.Errorf("fedlda: %w", err)
		}
		return []privacy.Event{m.Event(l)}, nil
	}
	return nil, fmt.Errorf("fedlda: mechanism %q, want rrp, krr, tkrr or none", d.Mechanism)
}

// Eta returns RRP's replacement probability η (Theorem 1) for c.
func (c Config) Eta() float64 {
	d := c.withDefaults()
	return privacy.RRPEta(d.Epsilon, d.Truncation, d.Gamma)
}

// provenance returns the parameters as model provenance strings.
func (c Config) provenance() map[string]string {
	d := c.withDefaults()
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	p := map[string]string{"k": strconv.Itoa(d.K), "rounds": strconv.Itoa(d.Rounds), "alpha": f(d.Alpha), "beta": f(d.Beta),
		"mechanism": d.Mechanism, "sample_ratio": f(d.SampleRatio), "max_doc_tokens": strconv.Itoa(d.MaxDocTokens),
		"tuples": strconv.Itoa(d.Tuples()), "sampler": d.Sampler}
	if d.Mechanism != MechanismNone {
		p["epsilon"] = f(d.Epsilon)
	}
	if d.Collector != CollectorClip {
		p["collector"] = d.Collector
	}
	if d.Mechanism == MechanismRRP || d.Mechanism == MechanismTKRR {
		p["truncation"] = f(d.Truncation)
	}
	if d.Mechanism == MechanismRRP {
		p["gamma"] = f(d.Gamma)
	}
	if d.Sampler == SamplerMH {
		p["mh_steps"] = strconv.Itoa(d.MHSteps)
	}
	return p
}
