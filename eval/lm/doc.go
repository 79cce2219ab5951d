// Package lm holds the language models of experiment E8
// (docs/experiments.md): an interpolated modified Kneser–Ney n-gram model
// and its topic-adapted mixture.
//
// The n-gram model (NGram) is interpolated Kneser–Ney with the three
// discounts D1, D2 and D3+ of modified Kneser–Ney (Chen and Goodman, "An
// empirical study of smoothing techniques for language modeling",
// Technical Report TR-10-98, Harvard, 1998, §3.5 and §4.1.6), of order 2
// or 3, as SRILM and KenLM build them:
//
//   - The highest order uses raw counts; every lower order uses
//     continuation counts N1+(• g), the number of distinct words seen
//     before g, except n-grams that begin with the start-of-document symbol
//     <s>, which cannot be extended to the left and keep their raw counts.
//   - P_n(w|h) = (max(a(hw) − D(a(hw)), 0) + γ(h)·P_{n−1}(w|h′)) / Σ_v a(hv),
//     where h′ drops the oldest word of h, D(a) is D1, D2 or D3+ by the
//     (adjusted) count a, and γ(h) is the mass the discounts removed from
//     context h. A context never seen passes P_{n−1} through unchanged.
//   - The lowest order interpolates with the uniform distribution over the
//     vocabulary, so every word of the shared vocabulary, seen in training
//     or not, has a probability above zero, and P(·|h) sums to 1 over the
//     V words for every history h.
//   - Each order's discounts are estimated from its counts of counts n1 …
//     n4 (Chen and Goodman, Eq. 26): Y = n1/(n1 + 2 n2) and
//     D_k = k − (k+1)·Y·n_{k+1}/n_k. Where a corpus is too small for the
//     estimate (Y outside (0, 1), an n_k of zero, or a D_k outside (0, k),
//     where the n-grams seen k times would lose all their mass), D_k falls
//     back to the discount below it (D1 to Y, Y to 1/2); KenLM refuses
//     such corpora instead. Config.Discounts fixes the discounts.
//
// Documents are the encoded token sequences of package corpus: the
// tokenizer keeps token order, but it has dropped stop words and the words
// outside the vocabulary, so the model predicts the next vocabulary word of
// a document from the vocabulary words before it. A document's history
// begins with <s>; there is no end-of-document event (the topic models
// have none), so each distribution is over the V words.
//
// The topic-adapted model (Adapted) mixes the n-gram model with a topic
// model's prediction from the document's history C (the FTM and iFTM
// papers, §4.5):
//
//	P(w|C) = λ·Σ_z P(w|z)·P(z|C) + (1 − λ)·P_ngram(w|C).
//
// P(z|C) is the topic mixture of the words of the document before w,
// inferred with the topics Φ fixed by EM fold-in (History): each prefix
// word j has responsibilities r_jz ∝ θ_z·φ_z,w_j and
// θ_z = (α_z + Σ_j r_jz)/(Σ_z α_z + n). When a word is appended, its
// responsibilities start from the current θ and Steps EM passes run over
// the whole prefix, so θ is updated incrementally and never sees the word
// being predicted. The empty history has θ = α/Σα.
//
// Evaluate scores held-out documents: per-word perplexity
// exp(−Σ log P(w_i|w_1 … w_{i−1}) / N) over every token of every document,
// for several λ at once (λ = 0 is the n-gram model alone).
//
//	ng, err := lm.Train(ctx, train, lm.Config{Order: 3})
//	scores, err := lm.Evaluate(ctx, ng, topics, test, []float64{0, 0.1}, lm.DefaultSteps)
//
// Determinism: training, fold-in and evaluation are deterministic
// functions of their inputs (no randomness; sums run in document and
// token order).
//
// Privacy: the n-gram model holds the counts of its training text and is
// not private; experiment E8 trains it on the pooled training documents as
// a fixed reference shared by every topic model it adapts.
package lm
