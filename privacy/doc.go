// Package privacy holds fedtopic's differential-privacy mechanisms. Each one
// validates its parameters before drawing anything (errors wrap
// ErrInvalidParameter), draws from a *rand.Rand it is handed, and describes
// every release with an Event (mechanism, ε or σ, δ, sensitivity, privacy
// unit, count) — only package accountant turns Events into (ε, δ).
//
// Mechanisms:
//
//   - Laplace: the Laplace mechanism on a power-of-two grid (discrete
//     Laplace noise), pure ε-DP.
//   - ThresholdedLaplace: FTM's noisy count vector with entries ≤ τ zeroed
//     (Wang et al., "Federated Topic Modeling", CIKM 2019, Eq. 9-10, 16),
//     drawn directly as sparse (word, value) entries in O(q·V) by geometric
//     skips, with the V-draw version beside it for tests.
//   - Gaussian: the discrete Gaussian on a grid (Canonne, Kamath and
//     Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS
//     2020); ContinuousGaussian: float64 Gaussian noise where linear algebra
//     must act on it (PC-TD's fast path), with its floating-point caveat.
//   - KRR, TruncatedKRR, RRP: the local randomizers of FedLDA (Wang et al.,
//     "Federated Latent Dirichlet Allocation", AAAI 2020, Algorithm 3 and
//     Theorem 1; RRP's guarantee assumes Zipf-like topics and says so).
//   - PartitionSelection: the private vocabulary round, Laplace
//     thresholding with each document contributing at most l₀ words and δ
//     including the boundary mass.
//   - Quantile: the private quantile of bounded integers (Smith,
//     "Privacy-preserving statistical estimation with optimal convergence
//     rates", STOC 2011): the exponential mechanism over the candidates
//     1, …, Max with utility −|#{x < c} − q·n|, sampled exactly by
//     rejection (uniform proposals accepted by exact Bernoulli coins), pure
//     ε-DP per value.
//   - DiscreteLaplace, DiscreteGaussian: the integer samplers underneath.
//
// Usage:
//
//	src := privacy.NewSecureSource()          // production; NewSeededSource(seed) in tests
//	m, err := privacy.NewLaplace(privacy.LaplaceConfig{Epsilon: 1})
//	if err != nil { ... }
//	ev, err := m.Release(src.Stream("party", 2, "round", 5), counts) // counts += noise
//	// charge ev to the party's ledger (accountant.Ledger) before counts leave
//
// Exact sampling. Noise that is released is drawn on a grid and from its
// exact distribution. A sampler inverts a uniform U ∈ [0, 1) that it reads
// lazily, 16 bits at a time, against rigorous enclosures of the cumulative
// probabilities (interval arithmetic with directed rounding in math/big);
// when the bits read so far cannot decide a comparison — probability about
// 2⁻¹⁶ per boundary after 16 bits, 2⁻⁶³ after 64 — it reads more bits and
// tightens the enclosure until they can. The law sampled is therefore
// exactly the discrete Laplace, discrete Gaussian or thresholded law stated,
// without the floating-point holes that break textbook samplers (Mironov,
// "On Significance of the Least Significant Bits for Differential Privacy",
// CCS 2012). Only ContinuousGaussian (documented there) and RRP's internal
// coins use float64 arithmetic. Parameters given as float64 are rounded in
// the safe direction (a realised noise scale is never below the one asked
// for).
//
// Randomness and determinism. Mechanisms read only the *rand.Rand they are
// given, in an order fixed by their inputs, so a seeded stream reproduces a
// release bit for bit and a per-token stream regenerates a token's noise
// vector on demand. Production noise must come from NewSecureSource (keys
// from crypto/rand); NewSeededSource is for tests and simulations. All
// mechanism values are safe for concurrent use; streams are not.
//
// Speed, per core, from a seeded ChaCha8 stream (go test -run '^$' -bench
// 'Thresholded|Discrete|Gaussian' -count 5 ./privacy; each benchmark runs
// on one goroutine), on a shared two-core machine whose speed varies by up
// to 2× over minutes, so each figure gives its fast and its slow phases:
//   - a thresholded Laplace vector at V = 20,000, ε = 11, τ = 0.2 (about
//     1,100 entries) takes 3.9 to 4.9 µs, 203,000 to 259,000 vectors per
//     second (slow phases: 7.0 to 8.1 µs, 123,000 to 142,000); the V-draw
//     version takes 380 to 460 µs. Reading the vector's 547 stream words
//     alone (BenchmarkThresholdedStream) takes 1.8 to 2.3 µs of it;
//   - discrete Gaussian draws: 31 to 39 million per second at σ = 16 and
//     30 to 34 million at σ = 1000 (slow phases: 21 to 25 million);
//   - discrete Laplace draws: 74 to 80 million per second at scale 23 and
//     60 to 70 million at scale 1000 (slow phases: 40 to 52 million).
//
// Timing. The nightly timing test times 10⁵ single draws of
// each integer sampler and fails when the draw time is significantly
// correlated (Spearman, two-sided 1e-5) with |noise|:
//
//	go test -tags nightly -run TestTimingNightly -count 1 ./privacy
//
// The discrete Laplace sampler of scales up to 8192 steps decides the
// magnitude's table outcome from two 16-bit chunks through a two-chunk
// lookup table, without branching on the entry, so every draw takes the
// same steps whatever its value, except the slow ones (below 2⁻¹¹ of the
// draws: the far tail and the sub-cells on a boundary). Its tables are
// stored in a scrambled cell order, so that no memory page holds a range of
// values: with the cells in order, a page that happened to be slower to
// reach made a range of values slower to draw, which the test saw as
// √(n−1)·ρ of −7.6 to +4.7 in some runs. Measured over 37 runs of 10⁵
// draws each at scales 16, 160 and 3000: √(n−1)·ρ between −2.5 and +3.3
// (the threshold is 4.42); the discrete Gaussian stays within ±1.6 at
// σ = 16, 32 and 1000. The Laplace and Gaussian mechanisms draw each
// value's noise without looking at the value, so what their timing could
// tell is about the noise, not the data.
//
// See example_test.go for runnable examples.
package privacy
