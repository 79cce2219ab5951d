package ftm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"

	"github.com/fedtopic/fedtopic/lda"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// Models a Config can name.
const (
	ModelLDA  = lda.ModelLDA  // FTM: one topic per token
	ModelSLDA = lda.ModelSLDA // iFTM's SentenceLDA: one topic per sentence
)

// MaxTopics is the largest K_p: topics are stored as uint16.
const MaxTopics = lda.MaxK

// Privacy units of Config.Unit.
const (
	UnitWord     = privacy.DefaultUnit // "word occurrence"
	UnitDocument = "document"
)

// Debiasing modes of Config.Debias.
const (
	DebiasDraw   = "draw"
	DebiasOutput = "output"
)

// Defaults of Config, used where a field is zero. doc.go says how each was
// chosen.
const (
	DefaultEpsilon         = 11.0 // the papers' headline setting (FTM-11, iFTM-11)
	PaperTau               = 0.2  // the papers' threshold; the floor of AutoTau
	DefaultK               = 10
	DefaultAlphaSum        = lda.DefaultAlphaSum // α = DefaultAlphaSum/K_p
	DefaultBeta            = lda.DefaultBeta
	DefaultLocalIterations = 10
	DefaultRounds          = 5
	DefaultTopL            = 20
	DefaultXi              = 0.7
	DefaultMHSteps         = 1
	DefaultBlockSize       = 1 << 13
	// DefaultNoiseMemory is the default budget, in bytes, for the compact
	// encoding of a party's privatized vectors; items beyond it are
	// regenerated from their seeds on every visit.
	DefaultNoiseMemory = 1 << 30
)

// Config holds FTM's parameters; it travels as fed.Setup.Params (JSON) and
// is the same at the coordinator and every party. The zero value of every
// field means the default in its comment, so Config{} is complete.
type Config struct {
	// Epsilon is ε per word occurrence of the thresholded Laplace mechanism
	// (Laplace scale 1/ε); default DefaultEpsilon (11).
	Epsilon float64 `json:"epsilon,omitempty"`
	// NoNoise turns privatization off (ε = ∞): the sampler reads the true
	// count vectors and nothing is charged. For baselines and tests only.
	NoNoise bool `json:"no_noise,omitempty"`
	// Tau is the threshold τ ≥ 0: noisy entries ≤ τ are set to zero; nil
	// means AutoTau(ε, V), which keeps about one noise entry per token.
	// PaperTau (0.2) reproduces the papers. τ = 0 is valid and keeps half
	// of the vocabulary in every vector (slow).
	Tau *float64 `json:"tau,omitempty"`
	// Topics gives K_p: one value for every party, or one per party in
	// party order; default [DefaultK].
	Topics []int `json:"topics,omitempty"`
	// Alpha is the symmetric document-topic prior per topic; default
	// DefaultAlphaSum/K_p.
	Alpha float64 `json:"alpha,omitempty"`
	// Beta is the symmetric topic-word prior of the Dirichlet draw of Φ
	// (Eq. 7); default DefaultBeta (0.01).
	Beta float64 `json:"beta,omitempty"`
	// LocalIterations is the number of sweeps a party runs per round;
	// default DefaultLocalIterations.
	LocalIterations int `json:"local_iterations,omitempty"`
	// Rounds is the number of global rounds; default DefaultRounds (5, the
	// papers' setting for three parties).
	Rounds int `json:"rounds,omitempty"`
	// TopL is L, the number of top words a topic keeps for the similarity
	// ρ; default DefaultTopL.
	TopL int `json:"top_l,omitempty"`
	// Xi is ξ ∈ (0, 1]: topics with ρ ≥ ξ are redundant (merged, or
	// substituted into a party's model); default DefaultXi.
	Xi float64 `json:"xi,omitempty"`
	// Model is ModelLDA (default, FTM) or ModelSLDA (iFTM's SentenceLDA,
	// which needs sentence boundaries in every party's corpus).
	Model string `json:"model,omitempty"`
	// MHSteps is the number of Metropolis–Hastings steps per item and
	// sweep, each a word proposal followed by a document proposal;
	// default DefaultMHSteps.
	MHSteps int `json:"mh_steps,omitempty"`
	// Debias subtracts the expected noise mass of the privatized vectors,
	// n_k·q·E[n̂ | survives] per word of a topic with n_k items, from the
	// topic-word counts (clipped at zero), a post-processing
	// (a post-processing; docs/methods.md): DebiasDraw before every Dirichlet draw of Φ and
	// in the local model sent; DebiasOutput only in the local model sent
	// (the sampler keeps the noisy counts, and a composed model received
	// gets the party's expected noise floor added back before it serves as
	// Φ). Empty: no debiasing.
	Debias string `json:"debias,omitempty"`
	// CarryGlobal makes the coordinator integrate the previous round's
	// global model together with the new local models (the papers'
	// Algorithm 2 input M) instead of building M* afresh each round.
	CarryGlobal bool `json:"carry_global,omitempty"`
	// MaxDocTokens, if positive, truncates longer documents (for
	// SentenceLDA: to whole sentences, at least one) before
	// privatization, which bounds the document-level privacy cost at
	// MaxDocTokens·ε.
	MaxDocTokens int `json:"max_doc_tokens,omitempty"`
	// Unit is the privacy unit of the events a party reports: UnitWord
	// (default; the papers' unit, ε per word occurrence) or UnitDocument,
	// which needs MaxDocTokens and reports MaxDocTokens·ε by group
	// privacy, for ledgers that also count document-level releases such as
	// the private vocabulary round.
	Unit string `json:"unit,omitempty"`
	// SecureNoise draws the privatization noise from keys read from
	// crypto/rand instead of from the seed: required for real
	// deployments, where noise derived from a recorded seed protects
	// nothing. Runs are then not reproducible.
	SecureNoise bool `json:"secure_noise,omitempty"`
	// NoiseMemory bounds the bytes a party spends on the compact encoding
	// of its privatized vectors (about 2·q·V bytes per item); items beyond
	// it are regenerated from their seeds on every visit, which is slower
	// but gives the same results. 0 means DefaultNoiseMemory; negative
	// means keep nothing.
	NoiseMemory int64 `json:"noise_memory,omitempty"`
	// BlockSize is the number of items after which a block of whole
	// documents is closed; each block draws from its own random stream.
	// Changing it changes the result; default DefaultBlockSize.
	BlockSize int `json:"block_size,omitempty"`
	// Workers is the number of goroutines a party samples with; it never
	// changes the result. Default GOMAXPROCS.
	Workers int `json:"workers,omitempty"`
}

// ParseConfig decodes a Config from fed.Setup.Params (JSON; empty means
// all defaults), rejecting unknown fields, and validates it.
func ParseConfig(params []byte) (Config, error) {
	var c Config
	if len(strings.TrimSpace(string(params))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(params)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("ftm: params: %w", err)
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
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("ftm: "+format, args...)) }
	if math.IsNaN(c.Epsilon) || math.IsInf(c.Epsilon, 0) || c.Epsilon < 0 {
		bad("epsilon = %v, want a finite number > 0 (no_noise for ε = ∞)", c.Epsilon)
	}
	if c.Tau != nil && (math.IsNaN(*c.Tau) || math.IsInf(*c.Tau, 0) || *c.Tau < 0) {
		bad("tau = %v, want a finite number ≥ 0", *c.Tau)
	}
	for i, k := range c.Topics {
		if k < 1 || k > MaxTopics {
			bad("topics[%d] = %d, want 1..%d", i, k, MaxTopics)
		}
	}
	if math.IsNaN(c.Alpha) || math.IsInf(c.Alpha, 0) || c.Alpha < 0 {
		bad("alpha = %v, want a finite number > 0", c.Alpha)
	}
	if math.IsNaN(c.Beta) || math.IsInf(c.Beta, 0) || c.Beta < 0 {
		bad("beta = %v, want a finite number > 0", c.Beta)
	}
	if c.LocalIterations < 0 {
		bad("local_iterations = %d, want ≥ 1", c.LocalIterations)
	}
	if c.Rounds < 0 {
		bad("rounds = %d, want ≥ 1", c.Rounds)
	}
	if c.TopL < 0 {
		bad("top_l = %d, want ≥ 1", c.TopL)
	}
	if math.IsNaN(c.Xi) || c.Xi < 0 || c.Xi > 1 {
		bad("xi = %v, want a number in (0, 1]", c.Xi)
	}
	switch c.Model {
	case "", ModelLDA, ModelSLDA:
	default:
		bad("model = %q, want %q or %q", c.Model, ModelLDA, ModelSLDA)
	}
	if c.MHSteps < 0 {
		bad("mh_steps = %d, want ≥ 1", c.MHSteps)
	}
	switch c.Debias {
	case "", DebiasDraw, DebiasOutput:
	default:
		bad("debias = %q, want %q, %q or empty", c.Debias, DebiasDraw, DebiasOutput)
	}
	if c.MaxDocTokens < 0 {
		bad("max_doc_tokens = %d, want ≥ 0 (0 = no limit)", c.MaxDocTokens)
	}
	switch c.Unit {
	case "", UnitWord:
	case UnitDocument:
		if c.MaxDocTokens <= 0 && !c.NoNoise {
			bad("unit %q needs max_doc_tokens: the document-level cost is max_doc_tokens·ε", c.Unit)
		}
	default:
		bad("unit = %q, want %q or %q", c.Unit, UnitWord, UnitDocument)
	}
	if c.BlockSize < 0 {
		bad("block_size = %d, want ≥ 1", c.BlockSize)
	}
	if c.Workers < 0 {
		bad("workers = %d, want ≥ 1", c.Workers)
	}
	return errors.Join(errs...)
}

// AutoTau returns the threshold fedtopic uses when none is given, for ε per
// word occurrence and a vocabulary of v words: τ = ln(v/2)/ε, the τ at
// which a token's vector keeps in expectation one entry that is pure noise
// (an entry with true count 0 survives with probability ½e^(−ετ)), kept
// within [PaperTau, 1 − 1/ε] so that the token's own entry, 1 plus noise,
// still survives with probability at least 1 − ½e^(−1). τ depends only on
// ε and the shared vocabulary's size, both public, so choosing it is
// post-processing and costs no privacy. At the papers' τ = 0.2 and ε = 11 a
// token of a 12,000-word vocabulary carries about 660 noise entries, which
// swamp its one true count.
func AutoTau(eps float64, v int) float64 {
	t := math.Log(float64(v)/2) / eps
	if hi := 1 - 1/eps; t > hi {
		t = hi
	}
	return math.Max(t, PaperTau)
}

// tauFor returns τ for a vocabulary of v words.
func (c Config) tauFor(v int) float64 {
	if c.Tau != nil {
		return *c.Tau
	}
	eps := c.Epsilon
	if eps == 0 {
		eps = DefaultEpsilon
	}
	return AutoTau(eps, v)
}

// Events returns what one party releases over a whole run with c, computed
// from the parameters alone, before any data is seen: one thresholded
// Laplace release per word occurrence (parallel composition over the
// tokens), at the unit c.Unit — for UnitDocument converted by group
// privacy over MaxDocTokens. Later rounds only post-process it. With
// NoNoise it returns nil. A party's Plan returns the same events, so a
// pre-flight check made with them agrees with what the ledger is charged.
func (c Config) Events() ([]privacy.Event, error) {
	if c.NoNoise {
		return nil, nil
	}
	c = c.withDefaults()
	unit := UnitWord
	e := privacy.Event{Mechanism: privacy.MechanismThresholdedLaplace, Epsilon: c.Epsilon, Sensitivity: 1, Unit: unit, Count: 1}
	if c.Unit == UnitDocument {
		g, err := accountant.Group(e, c.MaxDocTokens, UnitDocument)
		if err != nil {
			return nil, fmt.Errorf("ftm: document-level cost: %w", err)
		}
		e = g
	}
	return []privacy.Event{e}, nil
}

// withDefaults returns c with every zero field set to its default. Topics
// and Alpha stay as given: they depend on the party (see topicsFor and
// alphaFor).
func (c Config) withDefaults() Config {
	if c.Epsilon == 0 {
		c.Epsilon = DefaultEpsilon
	}
	if c.Beta == 0 {
		c.Beta = DefaultBeta
	}
	if c.LocalIterations == 0 {
		c.LocalIterations = DefaultLocalIterations
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	if c.TopL == 0 {
		c.TopL = DefaultTopL
	}
	if c.Xi == 0 {
		c.Xi = DefaultXi
	}
	if c.Model == "" {
		c.Model = ModelLDA
	}
	if c.MHSteps == 0 {
		c.MHSteps = DefaultMHSteps
	}
	if c.NoiseMemory == 0 {
		c.NoiseMemory = DefaultNoiseMemory
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// topicsFor returns K_p for each of parties parties.
func (c Config) topicsFor(parties int) ([]int, error) {
	switch len(c.Topics) {
	case 0:
		ks := make([]int, parties)
		for i := range ks {
			ks[i] = DefaultK
		}
		return ks, nil
	case 1:
		ks := make([]int, parties)
		for i := range ks {
			ks[i] = c.Topics[0]
		}
		return ks, nil
	case parties:
		return append([]int(nil), c.Topics...), nil
	}
	return nil, fmt.Errorf("ftm: topics lists %d values for %d parties, want 1 or %d", len(c.Topics), parties, parties)
}

// alphaFor returns α for a party with k topics.
func (c Config) alphaFor(k int) float64 {
	if c.Alpha > 0 {
		return c.Alpha
	}
	return DefaultAlphaSum / float64(k)
}

// params returns the configuration as provenance strings.
func (c Config) params() map[string]string {
	c = c.withDefaults()
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	ks := make([]string, len(c.Topics))
	for i, k := range c.Topics {
		ks[i] = strconv.Itoa(k)
	}
	p := map[string]string{
		"epsilon":          f(c.Epsilon),
		"tau":              "auto",
		"topics":           strings.Join(ks, ","),
		"beta":             f(c.Beta),
		"local_iterations": strconv.Itoa(c.LocalIterations),
		"rounds":           strconv.Itoa(c.Rounds),
		"top_l":            strconv.Itoa(c.TopL),
		"xi":               f(c.Xi),
		"model":            c.Model,
		"mh_steps":         strconv.Itoa(c.MHSteps),
		"block_size":       strconv.Itoa(c.BlockSize),
	}
	if c.Tau != nil {
		p["tau"] = f(*c.Tau)
	}
	if c.Alpha > 0 {
		p["alpha"] = f(c.Alpha)
	}
	if c.NoNoise {
		p["no_noise"] = "true"
	}
	if c.Debias != "" {
		p["debias"] = c.Debias
	}
	if c.CarryGlobal {
		p["carry_global"] = "true"
	}
	if c.MaxDocTokens > 0 {
		p["max_doc_tokens"] = strconv.Itoa(c.MaxDocTokens)
	}
	if c.Unit != "" {
		p["unit"] = c.Unit
	}
	return p
}
