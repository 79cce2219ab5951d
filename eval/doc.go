// Package eval computes the metrics fedtopic reports for topic models:
// document-completion perplexity and held-out log-likelihood, topic
// coherence (UMass, NPMI, embedding coherence), topic diversity, recovery of
// planted topics, and the classification metrics used when topic vectors are
// features.
//
// The definitions:
//
//   - Document-completion perplexity: Wallach, Murray, Salakhutdinov and
//     Mimno, "Evaluation methods for topic models", ICML 2009. Even token
//     positions of a test document are observed, odd positions held out; θ
//     is fitted on the observed half with Φ fixed (topic.Infer), and
//     perplexity = exp(−Σ log Σ_k θ_dk φ_kw / #held-out tokens).
//   - UMass coherence: Mimno, Wallach, Talley, Leenders and McCallum,
//     "Optimizing semantic coherence in topic models", EMNLP 2011. A
//     topic's score is the mean over the pairs of its top words, as
//     gensim's CoherenceModel("u_mass") and Palmetto report it (the paper
//     writes the sum, N(N−1)/2 times the mean for N top words).
//   - NPMI: Bouma, "Normalized (pointwise) mutual information in collocation
//     extraction", GSCL 2009; used for topics by Lau, Newman and Baldwin,
//     "Machine reading tea leaves", EACL 2014; a topic's score is the mean
//     over its pairs.
//
// Both coherence measures count documents: two words co-occur when one
// document of the counted corpus contains both, wherever they stand (no
// sliding window); a Coherence names that corpus by its files, and every
// score is averaged over topics.
//   - Topic diversity: Dieng, Ruiz and Blei, "Topic modeling in embedding
//     spaces", TACL 2020.
//   - Embedding coherence: Eq. 4 of the FedNMF+MI paper (mean pairwise cosine
//     of the top words' vectors).
//   - Planted-topic recovery: Kuhn–Munkres matching (Kuhn 1955; Munkres 1957)
//     of learned to planted topics on the Hellinger distance.
//   - Downstream classification with topic vectors as features: accuracy,
//     macro precision/recall/F1 and two-class ROC AUC; multinomial logistic
//     regression trained by L-BFGS (gonum/optimize) and a one-vs-rest linear
//     SVM trained by dual coordinate descent (Hsieh et al., "A dual
//     coordinate descent method for large-scale linear SVM", ICML 2008);
//     seeded train/test Split and KFold.
//
// Usage:
//
//	rep, err := eval.Evaluate(ctx, model, eval.Data{Test: test, Train: train, Reference: ref},
//		eval.Config{Infer: topic.InferConfig{Seed: 1}})
//	rep.WriteTable(os.Stdout) // or json.Marshal(rep) for `fedtopic eval --json`
//
//	res, err := eval.Recovery(planted.Phi, model.Phi, k, v)
//	fmt.Println(res.Recovered, "of", k, "topics recovered; mean distance", res.Mean)
//
// See example_test.go for runnable examples.
//
// Determinism: every metric is a deterministic function of its inputs (and,
// for perplexity, of the seed passed to the fold-in sampler; for the SVM, of
// the *rand.Rand that orders its coordinates); reductions run
// in a fixed order and no map iteration order reaches a result. Privacy: the
// metrics read test and reference corpora directly and are not
// differentially private; a number computed on a party's private documents
// must not leave that party unless its release is accounted for elsewhere.
package eval
