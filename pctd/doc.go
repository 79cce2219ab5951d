// Package pctd implements PC-TD, Private and Consistent Topic Discovery,
// as an algorithm for the federation engine:
//
//   - Y. Shi, Y. Tong, Z. Su, D. Jiang, Z. Zhou and W. Zhang, "Federated
//     Topic Discovery: A Semantic Consistent Approach", IEEE Intelligent
//     Systems 36(5), 2021 (doi 10.1109/MIS.2020.3033459).
//
// docs/pctd.md describes it for users. Where the paper leaves a gap, the
// choice made here is stated below.
//
// # Protocol
//
// A PLSA-like model trained by federated EM, one iteration per round.
// Documents are cut into semantic units, all words of a unit sharing one
// topic: by default windows of three tokens inside the corpus's units
// (sentences), as in the paper (Config.Units). The coordinator
// (Aggregator) draws the first topics p(w|z) from the run's seed
// (InitialTopics: ∝ ½ + U(0, 1)) and broadcasts them. Each round a party
// (Learner) runs the E-step of Eq. 5 for every unit u of document d,
//
//	r̂_u = softmax(log θ_d + L·N̂_u),   L = log p(w|z) (K×V),
//
// updates θ_d = normalized Σ_{u∈d} r̂_u (Eq. 7), which never leaves the
// party, and sends M_t = Σ_u N̂_u r̂_uᵀ (V×K, Eq. 10). The coordinator sums
// the parties' M_t, clips negative entries to zero, adds Config.Beta to
// every entry (so that no log p(w|z) is −∞: a choice, the paper is
// silent), normalizes each topic (Eq. 11), applies the word-relation step
// of Eq. 13 when embeddings are given, and broadcasts the result; the
// broadcast after Config.Rounds rounds is the final model. θ_d starts
// uniform (the paper: random). The coordinator keeps the topics exactly
// as the parties decode them (float32 on the wire), so every party and the
// coordinator hold the same model.
//
// Word relations (Eq. 12-13). R is sparse: each word with a vector keeps
// its Config.RelationNeighbours most similar words at cosine ≥
// Config.RelationCutoff, the lists are symmetrized, and R_ww = 1 for every
// word (words without a vector relate only to themselves). Each topic
// becomes p + τ·p∘(Rp)/(pᵀRp), normalized. The coordinator reads the
// embedding file once, when it is built.
//
// # Noise: the two variants
//
// VariantUnit is the paper's mechanism (Eq. 4): N̂_u = N_u + Ω_u with fresh
// Ω_u ~ N(0, σ²I_V) on all V entries of every unit in every iteration.
// Done literally (PathLiteral) that costs O(units·V·K) per iteration.
// PathFast, the default, is exact in distribution and costs
// O(units·K² + V·K²): r̂_u depends on Ω_u only through g_u = L·Ω_u ~
// N(0, σ²LLᵀ), drawn as B·ξ_u with BBᵀ = σ²LLᵀ (eigendecomposition, so a
// singular LLᵀ is handled through its pseudo-inverse); given g_u,
// Ω_u = Lᵀ(LLᵀ)⁺g_u + e_u with e_u ~ N(0, σ²(I − P)), P = Lᵀ(LLᵀ)⁺L,
// independent of g_u and of every r̂. Hence
//
//	Σ_u Ω_u r̂_uᵀ = Lᵀ(LLᵀ)⁺·G + σ·(I − P)·Z·Cᵀ,
//
// G = Σ_u g_u r̂_uᵀ, CCᵀ = Σ_u r̂_u r̂_uᵀ, Z a V×K standard normal matrix
// drawn once per party and iteration. TestFastPathMatchesLiteral compares
// the two paths' M_t in mean and covariance and rejects a path without the
// remainder term. BenchmarkIterationFast measures 1.65 s per million
// tokens for one party's iteration at V = 12,000, K = 50, window:3, one
// core; the literal path, timed on 1,000 units and scaled linearly,
// 310-450 s per million tokens: 190-275 times slower.
//
// The noise swamps the E-step. σ·L·Ω_u has standard deviation
// σ·‖L_k − L_l‖ in the difference of two topics' scores; on the WordNet
// glosses (V = 440, K = 10) the median ‖L_k − L_l‖ of a trained model is
// 98 nats, so at the paper's σ = 0.25 the noise is about 24 nats against
// about 11 nats of evidence from a 3-word unit: the responsibilities are
// mostly noise, and the topics come out nearly alike. It grows as √V.
//
// VariantSSP (sufficient-statistics perturbation, this package's
// addition, the default) computes M_t from the exact counts (r_u from N_u)
// and adds N(0, (σ·√L)²) to each of its V·K entries once per party and
// iteration, σ being the noise multiplier and L = Config.MaxDocTokens.
//
// # Privacy
//
// Documents are clipped first (Config.MaxDocTokens = L): each keeps its
// longest prefix whose word counts a_w satisfy Σ_w a_w² ≤ L — at most L
// tokens, all of them when they are distinct words. Everything a party
// sends is M_t, one release per round; Plan returns its event before any
// noise is drawn, and Learn's Step.Spent carries the same event.
//
// VariantUnit, per word occurrence (the paper's adjacency: one occurrence
// present or absent, the units kept). One round releases a function of
// the noisy unit vectors N̂_u = N_u + Ω_u only — r̂_u, θ_d and M_t are
// computed from them and from earlier broadcasts — so it is
// post-processing of a Gaussian mechanism on the table of all N_u, whose
// L2 sensitivity is 1 (one entry of one unit changes by one). T rounds
// compose adaptively to μ = √T/σ GDP: at σ = 0.25 and T = 35, μ = 23.7,
// ε ≈ 380 at δ = 1e-5, which protects nothing.
//
// VariantUnit, per document (the ledger's unit). Emptying a document d —
// removing its words, its units kept — changes the table by the vectors
// N_u of its units: ‖ΔN‖₂² = Σ_{u∈d} Σ_w N_uw² ≤ (Σ_{u,w} N_uw)² ≤ L², so
// the sensitivity is L per round, exactly accountant.Group over L word
// occurrences, and T rounds are μ = L·√T/σ GDP. (For windows of W tokens
// the same sum is at most W·L, and Σ_w a_w² ≤ L bounds it by L too; a
// tighter event would need `fedtopic privacy pctd` to agree, so the
// ledger counts L.) The number of units of a document is not protected.
//
// VariantSSP, per document (add or remove one). Within a round, unit u's
// responsibility r_u depends only on N_u, θ_d of its own document and the
// broadcast; θ_d depends only on d's own counts and earlier broadcasts.
// So removing d leaves every other document's contribution unchanged, and
// ΔM_t = Σ_{u∈d} N_u r_uᵀ, with non-negative entries. For each word w,
// Σ_k ΔM_t(w,k)² ≤ (Σ_k ΔM_t(w,k))² = (Σ_u N_uw Σ_k r_uk)² = a_w², so
// ‖ΔM_t‖_F² ≤ Σ_w a_w² ≤ L: the L2 sensitivity is √L. With noise of
// standard deviation σ·√L each round is (1/σ)-GDP and T rounds μ = √T/σ;
// Config.Epsilon calibrates σ = √T/μ(ε, δ). TestSSPSensitivity measures
// ‖ΔM_t‖_F for every document of a party (the longest and those repeating
// words included) against the bound. A word occurrence is protected only
// as part of its document: changing one word changes the document's θ_d
// and all its responsibilities.
//
// Not protected, in either variant: the number of documents and tokens of
// each party. Noise comes from privacy.Source streams per party id,
// round and shard: seeded from the run's seed in simulations, keyed from
// crypto/rand with Config.SecureNoise, which deployments must use. The
// noise is continuous (privacy.ContinuousGaussian's floating-point caveat
// applies): it passes through the E-step before release, which no grid
// survives.
//
// # Options that cost nothing more
//
// Config.ScheduleGrowth (g) gives round t the share w_t = g^(t−1)/Σ_s
// g^(s−1) of the run's μ²: its noise multiplier is Sigma/√(T·w_t). GDP
// composes μ² = Σ_t (Δ/std_t)² and RDP adds α·Δ²/(2·std_t²) per round, so
// both depend on the noise only through Σ_t 1/std_t² = T/Sigma², the
// equal split's, and Epsilon calibrates the same Sigma (schedule.go).
// Plan(t) and Events state each round's own event; under secure
// aggregation the distributed noise follows the schedule (SumSpec gives
// the next round's) and the bound's headroom is that of the noisiest
// round. With g > 1 the first rounds, which move the random start, carry
// more noise and the last ones, which make the model, less.
//
// Config.AverageLast (m) makes the final topics from the average of the
// last m rounds' summed M, each weighted by its precision 1/std_t² (equal
// without noise): the coordinator reads only released sums, so it is
// post-processing. Its noise is 1/√Σ_t 1/std_t² per entry
// (ReleaseNoiseStd); the rounds before the last are broadcast as before.
//
// Config.ThetaPrior adds a pseudo-count to every topic when θ_d is
// updated (Eq. 7 as a MAP update). θ_d never leaves the party and every
// r_u stays a distribution depending on its own document and the
// broadcast, so the SSP bound below holds unchanged
// (TestSSPSensitivity runs with it). On short documents the
// maximum-likelihood θ_d puts nearly all of a document on one topic; the
// prior keeps the responsibilities softer, as the α of the model's
// inference does.
//
// Config.Units = UnitsDocument makes each (clipped) document one unit.
//
// # Determinism
//
// A party's documents are cut into eight fixed shards, each drawing from
// its own stream, summed in order: the number of workers never changes
// the result (TestWorkersDoNotChangeResult), and runs in process and over
// gRPC are identical (TestTransportsAgree). One party without noise
// computes exactly Train, the centralized EM, the non-private baseline
// (TestNoNoiseOnePartyMatchesTrain).
//
// # Memory
//
// A party holds its unit table (12 bytes per distinct word of a unit,
// about 12 bytes per token, plus 8 per unit), θ (8·D·K bytes) and, during
// an iteration, about 8·11·V·K bytes (eight shard sums, log φ, the noise
// matrix): O(tokens + V·K). Learner.Memory reports it.
//
// # Usage
//
//	res, err := sim.Run(ctx, sim.Scenario{Algorithm: pctd.Algorithm,
//		Params:  json.RawMessage(`{"topics": 10, "epsilon": 10, "max_doc_tokens": 30}`),
//		Corpora: parts, Vocab: vocab, Seed: 7})
//
// See example_test.go.
package pctd
