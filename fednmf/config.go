package fednmf

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Name is the algorithm's name in configurations and run records.
const Name = "fednmf"

// Features of Config.Features: what a document's column A(:,j) holds.
const (
	// FeaturesTFIDF is the default: raw term counts times the smoothed
	// inverse document frequency ln((1+N)/(1+df)) + 1 of the client's own
	// documents, each column scaled to unit L2 norm (scikit-learn's
	// TfidfVectorizer defaults).
	FeaturesTFIDF = "tfidf"
	// FeaturesCounts is the raw term counts of each document.
	FeaturesCounts = "counts"
)

// Server optimizers of Config.ServerOpt (Reddi et al. 2021, Algorithm 2).
const (
	OptFedAvg     = "fedavg"
	OptFedAdagrad = "fedadagrad"
	OptFedYogi    = "fedyogi"
	OptFedAdam    = "fedadam"
)

// ServerOpts lists the server optimizers in the order help texts show them.
var ServerOpts = []string{OptFedAvg, OptFedAdagrad, OptFedYogi, OptFedAdam}

// Critic sizes: the MI critic T_θ is a feed-forward network with hidden
// layers of Hidden1 and Hidden2 units (the paper's 32 and 256).
const (
	Hidden1 = 32
	Hidden2 = 256
)

// Defaults of Config, used where a field is zero. doc.go says how each was
// chosen.
const (
	DefaultK              = 10
	DefaultRounds         = 100
	DefaultClientFraction = 0.2 // the paper's C
	DefaultLocalEpochs    = 1
	DefaultBatch          = 64
	DefaultLR             = 0.1 // the largest of the paper's grid {0.01, 0.02, 0.05, 0.1}
	DefaultSMILEClip      = 5.0 // the paper's τ
	DefaultDelta          = 1e-5
	// MaxTopics bounds K: the critic and the server state are dense in K.
	MaxTopics = 4096
)

// Config holds FedNMF's parameters; it travels as fed.Setup.Params (JSON)
// and is the same at the coordinator and every client. The zero value of
// every field means the default in its comment, so Config{} is complete.
type Config struct {
	// K is the number of topics, the rank of W; default DefaultK.
	K int `json:"k,omitempty"`
	// Rounds is the number of federated rounds; default DefaultRounds.
	Rounds int `json:"rounds,omitempty"`
	// ClientFraction is C, the fraction of clients sampled each round;
	// default DefaultClientFraction. Without DP, m = max(⌊C·n⌋, 1) of the n
	// clients are drawn without replacement (Algorithm 1); with DP, every
	// client joins independently with probability C (Poisson sampling, the
	// assumption of the accounting).
	ClientFraction float64 `json:"client_fraction,omitempty"`
	// ServerOpt is the aggregation: fedavg (default), fedadagrad, fedyogi or
	// fedadam.
	ServerOpt string `json:"server_opt,omitempty"`
	// ServerLR is the server learning rate η; default 1 for fedavg (the
	// weighted mean of the clients' models) and Flower's default for the
	// adaptive optimizers (0.1 for fedadagrad and fedadam, 0.01 for fedyogi).
	ServerLR float64 `json:"server_lr,omitempty"`
	// Beta1 and Beta2 are the moment decays β₁, β₂ of the adaptive
	// optimizers; defaults 0.9 and 0.99 (fedadagrad: β₁ = 0, as in Flower).
	Beta1 float64 `json:"beta1,omitempty"`
	Beta2 float64 `json:"beta2,omitempty"`
	// Adaptivity is τ of the adaptive optimizers, added to √v; default
	// Flower's: 1e-9 for fedadagrad and fedadam, 1e-3 for fedyogi.
	Adaptivity float64 `json:"adaptivity,omitempty"`
	// MILambda is λ ≥ 0, the weight of the SMILE mutual-information term;
	// 0 (default) is plain FedNMF and sends no critic.
	MILambda float64 `json:"mi_lambda,omitempty"`
	// SMILEClip is the SMILE clip τ; default DefaultSMILEClip.
	SMILEClip float64 `json:"smile_clip,omitempty"`
	// LocalEpochs is E, the passes over its documents a sampled client
	// makes per round; default DefaultLocalEpochs.
	LocalEpochs int `json:"local_epochs,omitempty"`
	// Batch is B, the mini-batch size; default DefaultBatch.
	Batch int `json:"batch,omitempty"`
	// LR is η, the client learning rate of W, H and θ; default DefaultLR.
	LR float64 `json:"lr,omitempty"`
	// Features is tfidf (default) or counts.
	Features string `json:"features,omitempty"`

	// Clip is S > 0, the L2 norm each client's update is clipped to, and
	// turns on DP-FedAvg (an addition: the paper has no privacy); 0 means
	// no clipping and no noise.
	Clip float64 `json:"clip,omitempty"`
	// NoiseMultiplier is z > 0: the coordinator adds N(0, (z·S)²) to the sum
	// of the clipped updates. Required with Clip.
	NoiseMultiplier float64 `json:"noise_multiplier,omitempty"`
	// SecureNoise draws the coordinator's noise from keys read from
	// crypto/rand instead of the setup's seed (production runs).
	SecureNoise bool `json:"secure_noise,omitempty"`
	// SecureThreshold is t when the run uses secure aggregation of
	// threshold t (the same t as the engine's secure_aggregation); 0
	// otherwise. With DP-FedAvg it makes the noise distributed and is then
	// required under secure aggregation (secure.go).
	SecureThreshold int `json:"secure_threshold,omitempty"`
}

// ParseConfig decodes and validates JSON parameters; empty means defaults.
func ParseConfig(params []byte) (Config, error) {
	var c Config
	if len(strings.TrimSpace(string(params))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(params)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return Config{}, fmt.Errorf("fednmf: params: %w", err)
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
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("fednmf: "+format, args...)) }
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	if c.K < 0 || c.K > MaxTopics {
		bad("k = %d, want 1 to %d (0 for %d)", c.K, MaxTopics, DefaultK)
	}
	if c.Rounds < 0 {
		bad("rounds = %d, want at least 1 (0 for %d)", c.Rounds, DefaultRounds)
	}
	if !finite(c.ClientFraction) || c.ClientFraction < 0 || c.ClientFraction > 1 {
		bad("client_fraction = %v, want C in (0, 1] (0 for %v)", c.ClientFraction, DefaultClientFraction)
	}
	switch c.ServerOpt {
	case "", OptFedAvg, OptFedAdagrad, OptFedYogi, OptFedAdam:
	default:
		bad("server_opt = %q, want one of %s", c.ServerOpt, strings.Join(ServerOpts, ", "))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"server_lr", c.ServerLR}, {"adaptivity", c.Adaptivity}, {"lr", c.LR}, {"smile_clip", c.SMILEClip}} {
		if !finite(f.v) || f.v < 0 {
			bad("%s = %v, want a finite number > 0 (0 for the default)", f.name, f.v)
		}
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"beta1", c.Beta1}, {"beta2", c.Beta2}} {
		if !finite(f.v) || f.v < 0 || f.v >= 1 {
			bad("%s = %v, want a decay in [0, 1) (0 for the default)", f.name, f.v)
		}
	}
	if !finite(c.MILambda) || c.MILambda < 0 {
		bad("mi_lambda = %v, want λ ≥ 0", c.MILambda)
	}
	if c.LocalEpochs < 0 {
		bad("local_epochs = %d, want E ≥ 1 (0 for %d)", c.LocalEpochs, DefaultLocalEpochs)
	}
	if c.Batch < 0 || c.Batch == 1 && c.MILambda > 0 {
		bad("batch = %d, want B ≥ 1 (B ≥ 2 with mi_lambda: SMILE needs shuffled pairs; 0 for %d)", c.Batch, DefaultBatch)
	}
	switch c.Features {
	case "", FeaturesTFIDF, FeaturesCounts:
	default:
		bad("features = %q, want %s or %s", c.Features, FeaturesTFIDF, FeaturesCounts)
	}
	if !finite(c.Clip) || c.Clip < 0 {
		bad("clip = %v, want a finite S > 0 (0: no DP)", c.Clip)
	}
	if !finite(c.NoiseMultiplier) || c.NoiseMultiplier < 0 {
		bad("noise_multiplier = %v, want a finite z > 0", c.NoiseMultiplier)
	}
	if (c.Clip > 0) != (c.NoiseMultiplier > 0) {
		bad("clip = %v and noise_multiplier = %v: DP-FedAvg needs both (or neither, for no privacy)", c.Clip, c.NoiseMultiplier)
	}
	if len(errs) == 0 {
		errs = append(errs, c.validateSecure()...)
	}
	return errors.Join(errs...)
}

// DP reports whether c turns on DP-FedAvg.
func (c Config) DP() bool { return c.Clip > 0 && c.NoiseMultiplier > 0 }

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	def := func(p *float64, v float64) {
		if *p == 0 {
			*p = v
		}
	}
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Rounds == 0 {
		c.Rounds = DefaultRounds
	}
	def(&c.ClientFraction, DefaultClientFraction)
	if c.ServerOpt == "" {
		c.ServerOpt = OptFedAvg
	}
	switch c.ServerOpt {
	case OptFedAvg:
		def(&c.ServerLR, 1)
	case OptFedAdagrad:
		def(&c.ServerLR, 0.1)
		def(&c.Adaptivity, 1e-9)
	case OptFedYogi:
		def(&c.ServerLR, 0.01)
		def(&c.Beta1, 0.9)
		def(&c.Beta2, 0.99)
		def(&c.Adaptivity, 1e-3)
	case OptFedAdam:
		def(&c.ServerLR, 0.1)
		def(&c.Beta1, 0.9)
		def(&c.Beta2, 0.99)
		def(&c.Adaptivity, 1e-9)
	}
	def(&c.SMILEClip, DefaultSMILEClip)
	if c.LocalEpochs == 0 {
		c.LocalEpochs = DefaultLocalEpochs
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	def(&c.LR, DefaultLR)
	if c.Features == "" {
		c.Features = FeaturesTFIDF
	}
	return c
}

// SampleSize returns m = max(⌊C·n⌋, 1), the clients a round samples
// without DP.
func (c Config) SampleSize(n int) int {
	c = c.WithDefaults()
	// The small addend keeps C·n = 3 when 0.3·10 rounds to 2.9999….
	return max(int(math.Floor(c.ClientFraction*float64(n)+1e-9)), 1)
}
