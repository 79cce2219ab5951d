// Package lda trains LDA and SentenceLDA topic models: Walker alias tables,
// a partially collapsed Metropolis–Hastings sampler that is O(1) per token
// and parallel over documents, approximate distributed LDA (AD-LDA) with the
// same O(1) steps, and the exact collapsed Gibbs sampler used as the
// reference.
//
// Papers: Blei, Ng and Jordan, "Latent Dirichlet Allocation", JMLR 2003;
// Griffiths and Steyvers, "Finding scientific topics", PNAS 2004 (collapsed
// Gibbs); Newman et al., "Distributed Algorithms for Topic Models", JMLR 2009
// (AD-LDA); Yuan et al., "LightLDA: Big Topic Models on Modest Computer
// Clusters", WWW 2015 (alternating document and word proposals); Balikas,
// Amini and Clausel, "On a Topic Model for Sentences", SIGIR 2016
// (SentenceLDA); Jiang et al., "Federated Topic Modeling", CIKM 2019, whose
// private sampler reuses the MH kernel through Target.
//
// The MH sampler is partially collapsed: θ is integrated out and Φ is
// explicit. An iteration samples every token's topic z_i from
// π(k) ∝ (C_dk^(−i) + α)·φ_kw with Φ fixed — a word proposal from an alias
// table of the column φ_{·,w}, then a document proposal that picks the topic
// of a random token of the document — and then draws
// φ_k ~ Dirichlet(C_k· + β) with gamma variates. Because Φ is fixed during a
// sweep, documents are independent given Φ and are sampled in parallel.
// SentenceLDA gives every sentence one topic: π(k) ∝ (C_dk^(−s) + α)·Π_{w∈s} φ_kw
// (log space), with the word proposal mixing the columns of the sentence's
// words. A Target replaces the per-token likelihood, which is how FTM
// samples privatized count vectors with the same kernel.
//
// Word proposals come from sparse alias tables that leave out the topics
// where φ_kw is below 10⁻³ of the word's largest entry, so building them
// costs little next to the O(K·V) draw of Φ itself. In documents of at most
// Config.ExactLen tokens (default 256) plain LDA draws each token's topic
// exactly from its conditional instead — a document part summed over the
// document's other tokens (over its distinct topics from 16 tokens on) and
// a prior part from the word's alias table (the
// sparse partially collapsed sampler of Magnusson, Jonsson, Villani and
// Broman, "Sparse Partially Collapsed MCMC for Parallel Inference in Topic
// Models", JCGS 27(2), 2018) — which mixes like many MH steps for about the
// cost of two. The partially collapsed chain forms topics more slowly from
// a random start than collapsed samplers — an item's own count props up φ
// at its topic, and a topic that empties gets a spiky Dirichlet(β) row that
// few items can enter — so by default an MH chain starts with a burn-in of
// the collapsed AD-LDA kernel (Config.BurnIn): all but the last 10 sweeps
// (or the last tenth, if fewer) for LDA, where at K ≤ 64 every token is
// drawn exactly from its collapsed conditional over all K topics (a Gibbs
// step on the block's counts) and at larger K short documents take an
// independence MH step whose proposal is nearly that conditional, so
// topics form as fast as with collapsed Gibbs; the first half for
// SentenceLDA, on the tokens as plain LDA, after which every sentence takes
// its tokens' majority topic.
//
// Train's model is the mean of the posterior means (C_kw + β)/(C_k + Vβ)
// of the chain's states after each of its last Config.Average sweeps, by
// default the last tenth (Config.Average 1: the final state's alone); a
// Chain's Model is its current state's.
//
// Usage:
//
//	model, err := lda.Train(ctx, c, lda.Config{K: 50, Iterations: 1000, Seed: seed}, nil)
//	// model.Phi is K×V, p(w|k), averaged over the last 100 sweeps.
//
// For control over the chain (several Run calls, log-likelihood, document-
// topic counts) use NewMH or NewGibbs; for a custom likelihood NewTargetMH.
// example_test.go trains on a synthetic corpus.
//
// Determinism: a run is a function of the corpus and Config alone; the
// number of workers never changes it. Documents are cut into fixed blocks
// (sized by Config.BlockSize), block b of sweep t draws from
// rng.Derive(seed, "lda", "sweep", t, b), the Dirichlet draw of Φ uses one
// stream per block of 256 words, integer counts are merged without order
// effects and float sums run in a fixed order. The Gibbs sampler is
// sequential by nature and uses one goroutine.
//
// Exactness: the partially collapsed kernels (LDA, SentenceLDA, Target)
// leave their target exactly invariant (the acceptance ratios use the exact
// target and proposal probabilities); TestMHStationary* compares the chains
// with exact enumeration. Alias slot probabilities and acceptance uniforms
// have 32-bit resolution, and Φ is held in float32 during a sweep, with
// entries below the smallest normal float32 (1.2·10⁻³⁸) stored as 0. The
// gamma variates of the Φ draw are exact up to floating point (53-bit
// uniforms; a zero-count entry reads the leading bits of its acceptance
// uniform from the same 64-bit word and draws the rest only when they
// decide), and TestDrawPhiMarginalKS checks the Beta marginals of single
// entries with zero and non-zero counts. The AD-LDA kernel is exact within one block of documents only
// (TestCollapsedStationary) and ignores the other blocks' changes within a
// sweep, as AD-LDA does; it serves as burn-in and as the conventional
// distributed baseline.
//
// Privacy: none. This package is the non-private baseline; FTM adds the
// privatization around it.
package lda
