// Package embed trains word vectors on a public corpus, for the places
// fedtopic needs them and no pretrained vectors can be fetched: PC-TD's
// word-relation step (pctd, --embeddings) and embedding coherence
// (eval.EmbeddingCoherence). The vectors are written in the word2vec text
// format that eval.ReadEmbeddings reads.
//
// # Method
//
// Positive pointwise mutual information with a truncated SVD, the count
// model that Levy, Goldberg and Dagan ("Improving Distributional
// Similarity with Lessons Learned from Word Embeddings", TACL 3, 2015)
// found on a par with word2vec when given word2vec's choices:
//
//  1. Words: those seen at least Config.MinCount times, at most the
//     Config.MaxWords most frequent (ties by id). Other tokens are neither
//     words nor contexts, but keep their place: they still count in the
//     distance between two kept tokens.
//  2. Co-occurrences: every pair of kept tokens of one document at
//     distance d ≤ Config.Window counts (W − d + 1)/W, both ways
//     (word2vec's dynamic window, in expectation). Windows never cross
//     documents.
//  3. PPMI(w, c) = max(0, log(#(w,c)·Σ_c' #c'^α / (#w·#c^α))) with #w and
//     #c the row and column sums and context-distribution smoothing
//     α = 0.75 (word2vec's negative-sampling exponent), which keeps rare
//     contexts from dominating.
//  4. A rank-Config.Dim randomized SVD of the sparse, symmetric V×V PPMI
//     matrix (Halko, Martinsson and Tropp, "Finding Structure with
//     Randomness", SIAM Review 53(2), 2011, Algorithms 4.4 and 5.1): a
//     Gaussian test matrix of Dim + Config.Oversample columns, drawn from
//     the seed, Config.PowerIters power iterations re-orthonormalized by
//     QR, then the exact SVD of the small projected matrix. A word's
//     vector is its row of U·Σ^½ (the symmetric weighting of Levy et
//     al.). Cost: O(nnz·(Dim + Oversample)·(2·PowerIters + 2)) for the
//     products with the sparse matrix plus O(V·(Dim + Oversample)²) for
//     the QR factorizations, and memory O(nnz + V·(Dim + Oversample));
//     no V×V dense matrix is ever formed.
//
// # Defaults
//
// Dim 100: enough for a corpus of about a million tokens (Levy et al. use
// 500 on billions); more dimensions mostly fit noise on a small corpus.
// Window 5: word2vec's default; on short texts such as dictionary glosses
// (about nine content words after stop words) it spans most of a text.
// MinCount 5: word2vec's default; a word seen fewer times has no reliable
// statistics. MaxWords 20,000: bounds memory and time (the PPMI matrix and
// the V×(Dim+Oversample) blocks), and covers any vocabulary fedtopic's
// topic models keep by default (12,000 words). Oversample 10 and
// PowerIters 3 are Halko et al.'s recommendations for matrices whose
// spectrum decays slowly, as a PPMI matrix's does.
//
// # Determinism
//
// The result depends only on the corpus and the Config (its Seed drawing
// the test matrix). Rows are computed in fixed blocks and every sum runs
// in a fixed order, so Config.Workers changes only the speed.
//
// # Usage
//
//	vecs, err := embed.Train(ctx, c, words, embed.Config{Dim: 100, Seed: 1})
//	err = vecs.WriteText(w) // word2vec text, read by eval.ReadEmbeddings
//
// fedtopic embed --corpus FILE --dim D --out vectors.txt is the command.
//
// Privacy: none. The vectors are a function of every word of the corpus
// and must be trained on public text only.
package embed
