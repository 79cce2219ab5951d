// Package ftm implements Federated Topic Modeling (FTM) and its SentenceLDA
// extension (iFTM) as an algorithm for the federation engine:
//
//   - D. Jiang, Y. Song, Y. Tong, X. Wu, W. Zhao, Q. Xu and Q. Yang,
//     "Federated Topic Modeling", CIKM 2019;
//   - D. Jiang, Y. Tong, Y. Song, X. Wu, W. Zhao, J. Peng, R. Lian, Q. Xu and
//     Q. Yang, "Industrial Federated Topic Modeling", ACM TIST 12(1), 2021.
//
// docs/methods.md describes FTM for users. Where the papers leave a gap,
// the choice this package made is stated below.
//
// # Protocol
//
// A party (Learner) privatizes its data once, before its first round: every
// token's count vector over the vocabulary (for SentenceLDA, every
// sentence's) gets Laplace(1/ε) noise on each of its V entries and every
// entry ≤ τ is set to zero (FTM Eq. 9-10, iFTM Eq. 16). The vectors are
// drawn directly from their exact sparse distribution by
// privacy.ThresholdedLaplace, on a grid, from a stream per document. Each
// round the party trains its local model by private Metropolis–Hastings on
// the privatized vectors only (FTM Algorithm 1, iFTM Algorithm 2; see
// below) and sends M̂_p — each row of its topic-word counts C^KW, smoothed
// by β, divided by its sum — with n_p, its number of documents. The
// coordinator (Aggregator) concatenates the local models, marks every pair
// of topics whose weighted Jaccard similarity ρ on their top-L words
// (Eq. 17) is at least ξ as redundant, merges each connected component of
// the redundancy graph (union-find) into one topic averaged with weights
// n_p (FTM Algorithm 2), and composes for each party a new local model:
// each of its topics, in order, takes the most similar remaining global
// topic if ρ ≥ ξ, and that global topic leaves the candidates either way
// (Algorithm 3), so no global topic is used twice. The party uses the
// composed model as Φ of its next round's first sweep and re-initializes
// its topics from its word proposal alone. After Rounds rounds the global
// model M* is the result, and every party keeps its last local model.
// Parties may have different numbers of topics K_p (Config.Topics).
//
// A party restarted from its state directory makes no second release: the
// Learner's state (MarshalBinary) keeps whether the privatization was
// charged and the noise source, whose key regenerates exactly the vectors
// released before (for SecureNoise the key is secret, and the state file
// is the party's own, mode 0600).
//
// Choices the papers leave open: M* is built afresh every round from that
// round's local models (Config.CarryGlobal integrates the previous M* as
// well, as the papers' Algorithm 2 input suggests; merged weights then
// accumulate over rounds); a party missing a round contributes nothing to
// it and is sent a model composed from its last local one; the first round
// starts from uniformly random topics; a merged topic's rows are averaged
// in input order.
//
// # The sampler
//
// The target of item i in document d is π(z) ∝ (C_dz^(−i) + α) ·
// exp(Σ_w n̂_iw·log φ_zw), θ integrated out and Φ explicit. Each MH step
// makes a word proposal — a word drawn uniformly from the item's proposal
// words, then a topic from that word's column of Φ by an alias table — and
// a document proposal — the topic of a uniformly chosen item of the
// document, or with probability Kα/(n + Kα) a uniform topic — and accepts
// with the exact target and the exact proposal probabilities. The sampler
// never sees the original words: a token's proposal word is the largest
// entry of its n̂ (the true word for 84% of the tokens at ε = 11,
// τ = 0.2, V = 12,000); a sentence proposes a mixture of its entries above
// τ + ln(q·V)/ε, the level one noise entry per vector is expected to
// exceed (at most 16, at least its largest entry). TestChainStationary
// checks the chain against exact enumeration of π on a small problem.
// After each sweep C_kw = Σ_{i: z_i=k} n̂_iw, and the next sweep draws
// φ_k ~ Dirichlet(C_k· + β) (Eq. 7).
//
// Noise mass and debiasing. A privatized token carries about q·V·E[n̂ |
// survives] ≈ 193 units of noise against its one true count at V = 12,000,
// ε = 11, τ = 0.2, so every row of M̂_p — and of M* — is about 99.5% a flat
// noise floor: the models are close to uniform, whatever the sampler does.
// Config.Debias subtracts the expected noise mass n_k·q·E[n̂ | survives] of
// a topic with n_k items from every C_kw, clipped at zero. DebiasDraw does
// so before every Dirichlet draw and in M̂_p; it disturbs the sampler (a
// topic's Φ then has almost no mass on the words whose debiased count is
// zero, where the privatized vectors' noise entries land, so those entries
// decide the topic). DebiasOutput does
// so only in the models sent and reported, and adds the party's expected
// floor back to a composed model before it serves as Φ: the sampler is
// unchanged. Both are post-processing and cost no privacy. Measured with
// "fedtopic experiment e2" on the WordNet glosses (V = 3,000, ε = 11,
// τ = 0.2, three parties, 3 rounds): held-out perplexity 2,909 without
// debiasing, 2,369 with DebiasDraw, 2,177 with DebiasOutput, and 1,564
// without noise.
//
// The kernel is this package's own rather than lda.NewTargetMH: through
// lda.Target an item's entries would be regenerated for every LogLik call
// and again for AddCounts, up to six passes per item and sweep, where this
// kernel makes one and keeps the counts as integers per worker. Its MH steps
// are lda's (the same proposals and acceptance), checked the same way.
//
// An item's ~q·V surviving entries (q = ½e^(−ετ); 657 at V = 12,000,
// ε = 11, τ = 0.2) are read once per sweep: every proposal is drawn first
// and ℓ_i(z) = Σ_w n̂_iw·log φ_zw is computed for the distinct proposed
// topics in one pass; counts move only for items that changed topic. The
// vectors are kept in a compact encoding of two bytes per entry (1.3 kB per
// token at that setting, against 5.3 kB as (int32, float32) pairs) up to
// Config.NoiseMemory per party, and regenerated from their document's
// stream on every visit beyond it (6 bytes per token, about a third of the
// speed); both give identical results. BenchmarkPrivateMH measures
// 260,000 to 300,000 tokens per second per core in the compact form at that
// setting (K = 50, after burn-in), about 100,000 when regenerating, and
// 180 to 230 times the naive private Gibbs sampler of Eq. 6
// (BenchmarkNaiveGibbs, O(K·V) per token, about 1,400 tokens per second).
//
// # Defaults
//
// ε = 11 and τ = 0.2 are the papers' headline setting ("FTM-11"); the
// papers report ε from 8 to 11. α = 5/K_p and β = 0.01 are the project's
// LDA defaults (Mallet's). Rounds = 5 is the papers' count for three
// parties. The others were chosen on development data with
// "fedtopic experiment dev" (WordNet glosses, seed 101, a 30% subsample:
// 230,096 training tokens in three parties split 1:2:3 by label groups,
// V = 12,000, ε = 11, τ = 0.2, one round, held-out log-likelihood of the
// global model on 11,732 other documents), for FTM as specified and with
// DebiasOutput:
//
//   - L = 20, ξ = 0.7: merging less does better — at L = 20, ξ = 0.7 keeps
//     20 of the 60 local topics and scores −372,416 (−358,482 debiased)
//     against −374,096 (−361,415) at ξ = 0.5 and −375,533 (−363,090) at
//     ξ = 0.2; L changes little between 10 and 50.
//   - K = 10: debiased, −358,312 at K = 10 against −360,119 at 20 and
//     −362,276 at 40 (10 sweeps); without debiasing K hardly matters
//     (−370,758, −370,806, −370,181).
//   - 10 local iterations: more sweeps do not help — at K = 20, 10 sweeps
//     score −370,806 (−360,119 debiased), 30 sweeps −372,373 (−362,064),
//     60 sweeps −372,951 (−361,918); longer chains fit the noise.
//   - One MH step per item and sweep: two steps score within 0.4% either
//     way and take 20–60% longer.
//
// # Privacy
//
// The unit is one word occurrence: under the papers' include/exclude
// adjacency one token's count vector gains or loses its indicator, and
// each privatized vector is ε-DP for it (the thresholding is
// post-processing); every token is in exactly one vector, so privatizing
// the corpus once costs ε in total (parallel composition). That release is
// the only one: the local models, and everything sent in later rounds, are
// computed from the privatized vectors and the broadcasts alone
// (post-processing), so Learn reports one privacy.Event in the round that
// privatizes and none after. At the document level, group privacy gives
// ε·(document length) for adding or removing a document's words
// (2ε·length for replacing them); Config.MaxDocTokens truncates documents
// so that this is at most ε·MaxDocTokens. Not protected, and released or
// visible by design: n_p (sent every round), and the number of documents,
// tokens and sentences and their lengths, which the sampler's structure
// follows. The noise is drawn from privacy.Source streams: seeded from the
// run's seed (simulations, tests), or with Config.SecureNoise keyed from
// crypto/rand, which real deployments must use.
//
// # Determinism
//
// A Setup (seed and parameters) and the corpora give the same models over
// every transport and for any number of workers: documents are cut into
// fixed blocks, each block draws from its own stream (rng.Derive of the
// seed, party, round, iteration and block), counts are summed as integers
// on the noise grid, and the Dirichlet draw of Φ merges per-block partial
// results in block order. TestTransportsAgree runs three parties in
// process and over gRPC; TestChainWorkersAndCounts varies the workers.
//
// # Usage
//
//	res, err := sim.Run(ctx, sim.Scenario{Algorithm: ftm.Algorithm,
//		Params:  json.RawMessage(`{"epsilon": 11, "tau": 0.2, "topics": [40, 50, 60]}`),
//		Corpora: parts, Vocab: vocab, Seed: 7})
//	// res.Global: M*; res.Locals: each party's last local model.
//
// With "model": "slda" the items are sentences (iFTM). See example_test.go.
package ftm
