// Package fedlda is FedLDA (Wang, Tong, Shi and Zhong, "Federated Latent
// Dirichlet Allocation: A Local Differential Privacy Based Framework",
// AAAI 2020): LDA trained by an untrusted collector from users who each
// hold one document and perturb what they send under local differential
// privacy. A party process hosts many users (a mobile backend, a
// hospital's patients); the guarantee is per user, and a party's operator
// learns nothing the collector does not, because every user's tuples are
// perturbed before they are pooled.
//
// # The algorithm
//
// The collector (Aggregator) holds the topic-word counts n_kw and
// broadcasts them every iteration; every party computes
// φ_kw = (n_kw + β)/(n_k + Vβ). The party (Learner) then runs, for each of
// its users in turn:
//
//  1. Re-sampling. Every token's topic is re-sampled with φ fixed:
//     collapsed Gibbs over the K topics, p(z = k) ∝ (n_dk^¬j + α)·φ_kw
//     (Config.Sampler "gibbs"), or Metropolis–Hastings targeting the same
//     conditional with a word proposal ∝ φ_·w drawn from an alias table per
//     word and a document proposal ∝ n_dk + α, O(1) per token ("mh"). In
//     the first iteration the topics are drawn uniformly instead.
//  2. Tuples. Every token whose topic changed becomes a tuple
//     (w, k_old, k_new); a token's first assignment has k_old = none.
//  3. Padding and sampling. The list is padded with dummy tuples to M =
//     Config.MaxDocTokens slots (documents are truncated to M tokens, so
//     at most M tokens change), and l = ⌈r·M⌉ slots are drawn uniformly
//     without replacement (r = Config.SampleRatio, 0.7 by default): every
//     user sends exactly l tuples, and every change is sent with
//     probability l/M.
//  4. Perturbation. Each sent tuple's word is perturbed: kRR over the V
//     words (exact ε-LDP), t-kRR (kRR over the truncated vocabulary: the
//     words covering 1 − δ of the collector's word distribution Σ_k n_kw +
//     Kβ, public since it comes from the broadcast), RRP (the paper's
//     Algorithm 3: with probability η replace w by w' ~ φ_k', k' ~ θ_i, if
//     w' is in the head of φ_k', the words left after dropping a tail of
//     mass ≤ δ; η from Theorem 1 with γ configurable), or none.
//  5. Local state. A user applies to its own topics only the changes it
//     sent; the others are dropped and re-sampled next iteration. So with
//     no perturbation the collector's counts equal the users' counts after
//     every iteration (tested), and with perturbation they differ only by
//     the perturbed words.
//
// The collector adds −1 at (k_old, w), clipped at 0, and +1 at (k_new, w)
// for every tuple, in party order, and ignores dummies. With
// Config.Collector = CollectorDrop it drops instead a tuple whose −1 finds
// no count, as the reference's collector does: its word was perturbed (no
// user's assignment is there), and its +1 would only add noise (measured
// on the demo glosses at ε = 10 per tuple, kRR: held-out perplexity 4,595
// clipping, 4,092 dropping). Drop needs the tuples, so it cannot run under
// secure aggregation, where the collector sees only summed counts.
//
// # Privacy
//
// The unit is a user, who holds one document: each tuple costs ε (RRP: ε
// and 2δ, under the Zipf assumption of Theorem 1, privacy.RRPAssumption),
// an iteration l·ε and the run T·l·ε by basic composition. The paper
// divides ε by l within an iteration only; Config.Events states one
// iteration's cost, and a run records every iteration's. The topics of a
// tuple travel in the clear, as in the paper, so the collector sees which
// tuples are dummies and how many of a user's topics changed; only the
// words are protected. kRR needs ε per tuple of about ln V or more before
// its counts carry any signal (on 8,020 words, ε = 4 per tuple gives a
// model no better than uniform words); the defaults (ε = 10 per tuple,
// T = 20, M = 20, l = 14) cost 2,800 per user, which is honest about what
// local privacy of this kind costs, not a meaningful protection.
//
// # Differences from the public code
//
// The authors' Python (github.com/dingyuan-shi/Federated-LDA) simulates
// one process; fedtopic differs where it had to be correct or private:
//
//   - Its sampling step is a no-op: the sampled list (drawn with
//     replacement) is assigned to a local variable and dropped. Its
//     padding is not, in the Gibbs path: it pads a user's list to 100
//     entries (50 tuples) with copies of the user's own tuples, not
//     dummies, and the copies are perturbed and applied, so on short
//     documents every change reaches the counts several times (a gloss of
//     about 7 tokens sends 50 tuples an iteration). Its MH path comments
//     padding and sampling out and sends exactly its changes. Here every
//     user sends exactly l tuples, dummies included, and each change at
//     most once.
//   - Its Gibbs path sends a tuple for every token, changed or not; here
//     only changes are tuples.
//   - Its users sample against the collector's counts, which include their
//     own assignments, and update their state with every change whether
//     sent or not; here users sample against the broadcast φ and keep only
//     the changes they sent, so the collector and the users stay
//     consistent.
//   - Its initial assignments are added to the counts without
//     perturbation; here they are the first iteration's tuples, perturbed
//     and charged like any other.
//   - Its document prior is α = 50/K + 1 (6 at K = 10, on documents of a
//     few tokens); here 5/K.
//   - Its RRP uses η = 1/(0.01·e^ε + 1) whatever δ is, and draws the
//     replacement topic and word by subtracting cumulative sums, one index
//     late, so w' does not follow φ_k'; here η is Theorem 1's and w' ~ φ_k'
//     exactly.
//   - Its kRR keeps a word with probability e^ε/(e^ε + V) and otherwise
//     draws one uniform over all V words, the kept one included, which is
//     ln(e^ε + 1)-LDP rather than ε; here kRR is exact, with its keep coin
//     drawn against enclosures of e^ε/(e^ε + V − 1) (package privacy).
//   - Its t-kRR replaces a word by one uniform over the whole vocabulary
//     and skips the replacement at random; here t-kRR is kRR over a public
//     truncated vocabulary, exact ε-LDP.
//   - Its perplexity is measured on the training documents; fedtopic
//     reports held-out document-completion perplexity.
//
// On the same tokens, ε per tuple and K (docs/fedlda.md has the figures
// and the script), fedtopic's held-out perplexity is 16 % lower than the
// reference's without perturbation, and the two agree within 1 % once the
// reference runs without its padding and with α = 5/K and fedtopic sends
// every change (SampleRatio 1); with kRR and t-kRR the reference's is 13 %
// lower, nearly all of it from its collector's rule (above).
//
// # Scale and determinism
//
// A Learner keeps 6 bytes a token (word id and topic) and 4 bytes a user
// (its offset); a user's θ and topic counts are recomputed from its topics
// when its turn comes, so a party process holds millions of users. Users
// are cut into blocks of Config.BlockUsers, each with its own random stream
// derived from the seed, the party's id, the round and the block, so the
// number of workers never changes the result; the collector applies the
// parties' tuples in party order. A seed reproduces a run exactly, in
// process or over gRPC.
//
// See Example for a seeded three-party run.
package fedlda
