package lda

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
)

// Models and samplers a Config can name.
const (
	ModelLDA  = "lda"  // one topic per token
	ModelSLDA = "slda" // SentenceLDA: one topic per sentence (semantic unit)

	SamplerMH    = "mh"    // partially collapsed Metropolis–Hastings, O(1) per token, parallel
	SamplerGibbs = "gibbs" // exact collapsed Gibbs, O(K) per token, one goroutine
	SamplerADLDA = "adlda" // approximate distributed collapsed LDA with MH steps, O(1) per token, parallel; LDA only
)

// MaxK is the largest number of topics: topics are stored as uint16.
const MaxK = math.MaxUint16

// Defaults of Config, used where a field is zero.
const (
	DefaultK          = 10
	DefaultAlphaSum   = 5.0 // α = DefaultAlphaSum/K, Mallet's default
	DefaultBeta       = 0.01
	DefaultIterations = 1000
	DefaultMHSteps    = 2
	DefaultBlockSize  = 1 << 10
	DefaultExactLen   = 256
	// DefaultExactSweeps is how many sweeps of the partially collapsed
	// kernel end a default LDA chain of 100 iterations or more (see
	// Config.BurnIn).
	DefaultExactSweeps = 10
)

// Config configures training. The zero value of every field means the
// default given in its comment, so Config{K: 50} is a complete configuration.
type Config struct {
	// K is the number of topics, 1..MaxK; default DefaultK (10).
	K int `json:"k"`
	// Alpha is the symmetric document-topic Dirichlet prior per topic;
	// default DefaultAlphaSum/K (5/K, Mallet's α_sum = 5; 0.1 at K = 50 as
	// in tomotopy). Keeping the prior's total at 5 pseudo-counts stops it
	// from swamping short documents when K is large.
	Alpha float64 `json:"alpha"`
	// Beta is the symmetric topic-word Dirichlet prior; default 0.01
	// (Mallet, tomotopy).
	Beta float64 `json:"beta"`
	// Iterations is the number of sweeps Train runs; default 1000.
	Iterations int `json:"iterations"`
	// Workers is the number of goroutines that sample blocks of documents;
	// default GOMAXPROCS. It never changes the result, only the speed.
	// The Gibbs sampler always uses one.
	Workers int `json:"workers"`
	// Seed determines every random draw. Zero is a valid seed.
	Seed uint64 `json:"seed"`
	// Model is ModelLDA (default) or ModelSLDA, which needs a corpus with
	// sentence (unit) boundaries.
	Model string `json:"model"`
	// Sampler is SamplerMH (default) or SamplerGibbs.
	Sampler string `json:"sampler"`
	// MHSteps is the number of Metropolis–Hastings steps per token (or
	// sentence) and sweep, each a word proposal followed by a document
	// proposal; default 2.
	MHSteps int `json:"mh_steps"`
	// BlockSize is the number of items (tokens, or sentences for SentenceLDA)
	// after which a block of whole documents is closed; each block draws
	// from its own random stream. The burn-in kernel runs blocks in waves of
	// eight that see each other's changes only after the wave; the MH
	// chains close a wave's last two blocks at a quarter of BlockSize and
	// its other six at 1.25 times it, so that a wave holds about eight
	// blocks' worth and ends in short blocks (see makeWaveBlocks). Smaller
	// blocks make it closer to collapsed Gibbs and larger ones cost fewer
	// synchronisations. Changing it changes the result; default 1024. With
	// blocks of one size, on WordNet glosses (K = 50, V = 51,058, 250
	// sweeps of the burn-in kernel with 2 workers, seeds 1–4) blocks of
	// 1,024 left the state at a collapsed log-likelihood of −9.301 per
	// token on average against −9.310 with blocks of 4,096, and at a
	// held-out perplexity of 4,108 against 4,139 (bench/ldabench), in the
	// same time. Smaller blocks did not help (bench/ldabench -mode quality,
	// seeds 1–4, held-out perplexity after 250 sweeps of a 300-sweep chain,
	// one worker): blocks of 256 gave 4,142 on average against 4,108 on
	// WordNet glosses (min-df 2) and 1,037 against 1,036 on the kernel's
	// documentation (min-df 5). Blocks of 960 and 1,100 gave 4,129 and
	// 4,164 on WordNet: chains that differ only in where the blocks fall
	// spread about as widely as chains of different seeds.
	BlockSize int `json:"block_size"`
	// BurnIn is the number of initial sweeps of an MH chain that run the
	// collapsed AD-LDA kernel (see SamplerADLDA) instead of the partially
	// collapsed one — for SentenceLDA on the tokens as plain LDA, after
	// which each sentence takes its tokens' majority topic; negative for
	// none. Default for LDA: all but the last DefaultExactSweeps (10)
	// sweeps, or all but the last tenth when that is fewer; for SentenceLDA
	// 1/2 of Iterations.
	// The partially collapsed chain keeps an item pinned to its topic
	// while its own count props up φ there, and a topic that empties gets
	// a spiky Dirichlet(β) row few items can enter, so it forms topics
	// about half as fast per sweep as collapsed Gibbs even with exact
	// draws; the collapsed kernel, with exact-conditional proposals in short
	// documents, forms them nearly as fast as collapsed Gibbs. Its first
	// sweeps after the burn-in cost held-out perplexity, since each draws
	// the topics against a sampled Φ, so the exact phase is kept short: on
	// WordNet glosses at K = 50 (bench/ldabench, min-df 2, seeds 1–3) 225
	// sweeps ending in 23 exact ones gave 4,173 on average and ending in 10
	// gave 4,159; 250 sweeps ending in 10 gave 4,117, against 4,083 for 300
	// sweeps of collapsed Gibbs. With bench/foundation.sh (seeds 1–3), 225
	// sweeps with 2 workers reach a held-out perplexity of 3,582 on average
	// (1.75% above collapsed Gibbs' 3,520 after 300 sweeps) in about 12 s,
	// where Gibbs took about 59 s on one core in the same run; the
	// partially collapsed chain alone needs about 550 sweeps for
	// comparable quality. The burn-in only sets the starting point of the
	// exact chain, so it must leave the chain near the posterior: with
	// AD-LDA's once-per-iteration synchronisation instead of the kernel's
	// waves (see BlockSize) the exact chain first lost held-out perplexity
	// for about 50 sweeps while it climbed out of the burn-in's bias
	// (WordNet, min-df 5: 2,841 after 300 sweeps against 2,801 with waves
	// of blocks of 4,096 and 2,778 for Gibbs).
	BurnIn int `json:"burn_in"`
	// ExactLen is the length up to which the partially collapsed plain-LDA
	// kernel draws a token's topic exactly from its conditional
	// π(k) ∝ (C_dk^(−i) + α)·φ_kw instead of taking MH steps: the
	// document part is summed over the document's other tokens, or over
	// its distinct topics from 16 tokens on, in O(length), the prior part
	// α·φ_kw comes from the word's alias table. Documents with more tokens
	// take Config.MHSteps MH steps per token, O(1) each. Both leave the same
	// target invariant; an exact draw mixes like many MH steps. The burn-in
	// draws every token from its collapsed conditional over all K topics
	// where K ≤ 64; at larger K it takes its near-exact proposal (see
	// SamplerADLDA) in documents of at most ExactLen tokens, and in longer
	// ones draws from the conditional over all K where K ≤ 160 and takes
	// MH steps above. Default
	// DefaultExactLen (256): on GCIDE's dictionary entries (30% of the
	// tokens in entries of more than 64; bench/gcide_entries.py, K = 50,
	// 2 workers, seeds 1 and 2) 250 sweeps came 0.76% and 1.3% above
	// collapsed Gibbs' held-out perplexity after 300 sweeps with 256, and
	// 3.2% and 1.6% with 64, training in 31 and 27 s against 32 and 28 s
	// (single runs; the host varies by a third between runs); WordNet's
	// glosses have no document that long. Negative: MH steps for every
	// document.
	ExactLen int `json:"exact_len"`
	// Average is how many final sweeps Train averages the model over: the
	// mean of their posterior means (C_kw + β)/(C_k + Vβ), the
	// Rao–Blackwellized estimate of E[φ | data] from those states; default
	// the last tenth of the sweeps (at least one). 1 gives the final state's
	// posterior mean, the estimate of a plain collapsed Gibbs sampler. The
	// draws are the same whatever Average is. On WordNet glosses (K = 50,
	// min-df 2, seeds 1–6, bench/foundation.sh) averaging the last tenth
	// lowered held-out perplexity after 300 sweeps by 2.5% for collapsed
	// Gibbs (3,504 to 3,417 on average) and by 2.0% for the default sampler
	// with 2 workers (3,534 to 3,465); after 250 sweeps of the default
	// sampler, averaging the last 10 lowered it by 0.6–0.8% on seeds 1–3,
	// and the last 25 by 1.5–2.0% (3,574, 3,606 and 3,599 to 3,544, 3,583
	// and 3,572, and to 3,503, 3,552 and 3,541).
	Average int `json:"average"`
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.K == 0 {
		c.K = DefaultK
	}
	if c.Alpha == 0 {
		c.Alpha = DefaultAlphaSum / float64(c.K)
	}
	if c.Beta == 0 {
		c.Beta = DefaultBeta
	}
	if c.Iterations == 0 {
		c.Iterations = DefaultIterations
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Model == "" {
		c.Model = ModelLDA
	}
	if c.Sampler == "" {
		c.Sampler = SamplerMH
	}
	if c.MHSteps == 0 {
		c.MHSteps = DefaultMHSteps
	}
	if c.BlockSize == 0 {
		c.BlockSize = DefaultBlockSize
	}
	switch {
	case c.ExactLen == 0:
		c.ExactLen = DefaultExactLen
	case c.ExactLen < 0:
		c.ExactLen = 0
	}
	switch {
	case c.BurnIn == 0 && c.Model == ModelSLDA:
		c.BurnIn = c.Iterations / 2
	case c.BurnIn == 0:
		c.BurnIn = c.Iterations - min(DefaultExactSweeps, c.Iterations-c.Iterations*9/10)
	case c.BurnIn < 0:
		c.BurnIn = 0
	}
	if c.Average == 0 {
		c.Average = max(1, c.Iterations/10)
	}
	return c
}

// Validate reports every problem with the configuration, joined with
// errors.Join.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("lda: "+format, args...)) }
	if c.K < 0 || c.K > MaxK {
		bad("k = %d, want 1..%d", c.K, MaxK)
	}
	if !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0) {
		bad("alpha = %v, want a finite number > 0", c.Alpha)
	}
	if !(c.Beta >= 0) || math.IsInf(c.Beta, 0) {
		bad("beta = %v, want a finite number > 0", c.Beta)
	}
	if c.Iterations < 0 {
		bad("iterations = %d, want ≥ 1", c.Iterations)
	}
	if c.Workers < 0 {
		bad("workers = %d, want ≥ 1", c.Workers)
	}
	switch c.Model {
	case "", ModelLDA, ModelSLDA:
	default:
		bad("model = %q, want %q or %q", c.Model, ModelLDA, ModelSLDA)
	}
	switch c.Sampler {
	case "", SamplerMH, SamplerGibbs, SamplerADLDA:
	default:
		bad("sampler = %q, want %q, %q or %q", c.Sampler, SamplerMH, SamplerGibbs, SamplerADLDA)
	}
	if c.MHSteps < 0 {
		bad("mh_steps = %d, want ≥ 1", c.MHSteps)
	}
	if c.BlockSize < 0 {
		bad("block_size = %d, want ≥ 1", c.BlockSize)
	}
	if c.Average < 0 {
		bad("average = %d, want ≥ 1", c.Average)
	} else if n := c.withDefaults().Iterations; c.Iterations >= 0 && c.Average > n {
		bad("average = %d, want at most the %d iterations", c.Average, n)
	}
	return errors.Join(errs...)
}

// params returns the configuration as provenance strings.
func (c Config) params() map[string]string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return map[string]string{
		"k":          strconv.Itoa(c.K),
		"alpha":      f(c.Alpha),
		"beta":       f(c.Beta),
		"iterations": strconv.Itoa(c.Iterations),
		"model":      c.Model,
		"sampler":    c.Sampler,
		"mh_steps":   strconv.Itoa(c.MHSteps),
		"block_size": strconv.Itoa(c.BlockSize),
		"burn_in":    strconv.Itoa(c.BurnIn),
		"exact_len":  strconv.Itoa(c.ExactLen),
	}
}
