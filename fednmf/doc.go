// Package fednmf implements FedNMF and FedNMF+MI (Si, Wang, Zhang, Su and
// Xiao, "Federated Non-negative Matrix Factorization for Short Texts Topic
// Modeling with Mutual Information", IJCNN 2022) for the federation engine
// (package fed), with centralized NMF (HALS) and centralized SGD NMF as
// baselines and DP-FedAvg as an optional, clearly separate addition.
//
// # The method
//
// Client i holds the V×N_i matrix A_i of its documents (tf-idf by default,
// or counts) and its topic weights H_i (K×N_i, never sent); W (V×K, ≥ 0)
// is global. Each round the coordinator samples a fraction C of the
// clients and sends them W (and, with λ > 0, the critic θ). A sampled
// client runs E epochs of mini-batch SGD (batch B, rate η) on
//
//	L = −λ·Î_SMILE + (1/B)·Σ_{j∈batch} ‖A(:,j) − W·H(:,j)‖²,
//
// projecting W and H onto ≥ 0 after each step and moving θ up the SMILE
// bound, and sends the change of W and θ with N_i. The coordinator turns
// the changes into a pseudo-gradient (their N_i-weighted mean) and applies
// FedAvg, FedAdagrad, FedYogi or FedAdam (Reddi et al. 2021), whose moments
// it keeps across rounds and in its checkpoint. λ = 0 is plain FedNMF.
//
// The critic T_θ(x, y), x = A(:,j), y = H(:,j), has hidden layers of 32 and
// 256 units; its first layer is linear in (x, y), so it is computed once
// per document and once per topic vector, and the B² pairs of a batch only
// add the two. Its gradients are written by hand and checked against
// finite differences (critic_test.go).
//
// # Choices where the paper is silent
//
//   - Features: tf-idf with each client's own smoothed idf and unit-norm
//     documents (scikit-learn's defaults). Counts let long documents and
//     frequent words dominate the squared loss; the idf comes from the
//     client's documents, so it costs no release.
//   - W⁽⁰⁾ is uniform with columns of expected unit norm (√(3/V) at most),
//     the scale of a tf-idf document. H_i starts from zero and is fitted to
//     the W of the first round the client is sampled in by 10 sweeps of
//     HALS, so that SGD starts from weights on W's scale (the paper does
//     not say how H starts). θ⁽⁰⁾ is PyTorch's default for linear layers.
//   - The gradients of a step are taken at the current (W, H, θ) and
//     applied together (the paper lists the three updates in sequence
//     without saying which values each reads).
//   - The critic and H follow the gradient of the Jensen–Shannon bound, and
//     the SMILE value of Eq. 2 is what is reported, as in Song and Ermon's
//     SMILE code: the gradient of Eq. 2 itself rewards T on the positive
//     pairs without bound (the clip caps only the shuffled pairs) and made
//     W and H overflow within a few rounds in our runs. Both gradients are
//     checked against finite differences.
//   - Sampling: m = max(⌊C·n⌋, 1) clients without replacement per round
//     (Algorithm 1); clients not sampled get a short skip message and
//     answer idle, so every client takes part in every round's protocol.
//   - Server optimizers: Reddi et al.'s rule (moments from zero, no bias
//     correction) with Flower's defaults: FedAdagrad η = 0.1, τ = 1e-9,
//     β₁ = 0; FedYogi η = 0.01, β₁ = 0.9, β₂ = 0.99, τ = 1e-3; FedAdam
//     η = 0.1, β₁ = 0.9, β₂ = 0.99, τ = 1e-9. W is projected onto ≥ 0 after
//     the server step.
//   - Defaults E = 1 and η = 0.1 (the paper tunes E ∈ {10, …, 40} and
//     η ∈ {0.01, …, 0.1} per dataset); B = 64, C = 0.2, τ = 5 as in the
//     paper.
//   - Topics: topic t is W's column t divided by its sum. NMF defines no
//     likelihood, so perplexity is not meaningful for these models; use
//     coherence, diversity and downstream classification.
//
// # Inference and cost
//
// Infer gives new documents topic proportions: their non-negative
// least-squares weights on Φᵀ (FitH, HALS with W fixed), normalized to
// sum to 1; ModelFeatures tells an NMF model by its provenance. A
// client's step never forms the dense residual A_b − W·H_bᵀ: its
// gradients come from G = H_bᵀH_b and Q = WᵀW, so the documents cost their
// non-zeros times K and W one product with a K×K matrix, W·G, Θ(V·K²) a
// step (projected SGD leaves W dense), spread over all cores in fixed
// chunks. Q is carried from step to step in O(K³) plus K per clipped
// entry instead of recomputed, and is computed afresh every 64 steps. The
// critic's pair layers skip the units relu left at zero.
//
// # Privacy
//
// Without DP, FedNMF is not private: the changes of W (and θ) are
// functions of the raw documents, sent exactly, with each client's
// document count. With Config.Clip and Config.NoiseMultiplier, DP-FedAvg
// (McMahan et al. 2018; not in the paper) clips each client's change to
// L2 norm S, samples clients by Poisson sampling of rate C, and the
// coordinator adds N(0, (z·S)²) to the sum and divides by the fixed C·n.
// The unit is a whole client; each round is a subsampled Gaussian
// mechanism accounted by RDP, charged to every client every round, sampled
// or not, at the document level (a guarantee for a client holds for each of
// its documents). In the clear the coordinator sees the clipped changes
// without noise and must be trusted with them (secure aggregation with
// distributed noise, below, removes that trust). The noise is the
// continuous Gaussian (privacy.ContinuousGaussian, with its floating-point
// caveat): the sum passes through the server optimizer before anything is
// released.
//
// # Secure aggregation
//
// The update is a sum, so a run can use secure aggregation (package
// fed/secagg): the coordinator learns only the sum over the surviving
// parties, as integers whose sums fit in 32 bits. Without DP a party sends
// N_i·round(Δ·2^32) for every entry of its change Δ (of W, then θ) and
// N_i itself, each in two 32-bit parts so that no sum can wrap; the
// coordinator recovers Σ N_i·Δ_i on the grid of step 2^−32 and Σ N_i
// exactly and divides, which is FedAvg's weighted mean. The coordinator
// chose the sample, so without noise the sum hides an update only among
// the other sampled survivors, and a run that samples one party a round is
// refused. With DP-FedAvg and secure_threshold = t the noise is
// distributed: the coordinator adds none, each party clips Δ, puts it on
// a grid of f fraction bits and adds a discrete Gaussian share before
// masking, so that the sum of at least t survivors carries noise of
// standard deviation z·S; each party is charged as if exactly t survived,
// per round a discrete Gaussian release (Config.Events), composed by RDP
// with no credit for sampling, and refuses to send its update in the
// clear. secure.go states the grids and their bounds.
//
// Plain runs sum the same grid: the aggregator adds N_i·round(Δ·2^32) in
// int64 and takes the mean by the same function, so without noise a run
// under secure aggregation gives the plain run's model bit for bit. The
// rounding moves each Δ by at most 2^−33 a round.
//
// # Determinism
//
// A seed fixes W⁽⁰⁾, θ⁽⁰⁾, the sampling and every client's batch order
// (streams derived from the seed, the client's id and the round), so a
// seeded run gives the same model over every transport. A client's update
// of W runs on all cores over fixed chunks of rows, gathered in a fixed
// order, so the result does not depend on the number of cores. Messages carry float64 values, summed on the grid of
// step 2^−32 (above); a one-client run with C = 1 and FedAvg still
// reproduces TrainSGD, within 1e-9·(1 + |W|) on every entry of W.
//
// # Usage
//
//	res, err := sim.Run(ctx, sim.Scenario{Algorithm: fednmf.Algorithm,
//		Params: json.RawMessage(`{"k": 20, "rounds": 100, "mi_lambda": 0.1, "server_opt": "fedadam"}`),
//		Corpora: parts, Vocab: vocab, Seed: 7})
//
// See example_test.go.
package fednmf
