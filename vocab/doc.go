// Package vocab maps words to the dense ids a topic model is trained on, and
// turns tokenized text into a compact corpus.Corpus.
//
// A Vocabulary is built from a corpus (Build, with minimum and maximum
// document frequency and a size cap), or read from a file with one word per
// line (Load), so that every party of a federation gives a word the same id.
// Encode maps tokenized documents to ids, dropping and
// counting out-of-vocabulary tokens, emptied units and emptied documents.
// Prepare is the whole pipeline behind the command line: read, tokenize,
// build or apply a vocabulary, encode.
//
//	c, v, stats, err := vocab.Prepare(ctx, []string{"docs.jsonl"},
//		corpus.ReadOptions{}, corpus.TokenizerConfig{},
//		vocab.BuildOptions{MinDF: 2, MaxDF: 0.5}, nil)
//	// c.Words holds word ids in [0, v.Len()); v.Save("vocab.txt") keeps the ids.
//
// The pipeline follows common practice of topic-modeling tools (Mallet,
// gensim's Dictionary.filter_extremes, scikit-learn's min_df/max_df);
// pruning by document frequency is discussed by Boyd-Graber, Hu and Mimno,
// "Applications of Topic Models" (2017), §2.2. See example_test.go.
//
// Words: a word is non-empty valid UTF-8 without a line break or NUL, and
// does not begin or end with white space as corpus.IsSpace defines it — the
// definition the tokenizer splits on, so every token it emits is a valid
// word. A word that is refused is named with where it came from: the
// document (file and line) it was first seen in, or the vocabulary file's
// line.
//
// Determinism: ids depend only on the multiset of documents and the
// options — by default words are numbered by decreasing document frequency,
// ties broken by byte order — never on map iteration or document order.
//
// Privacy: this package sees raw text and releases nothing. Building a
// vocabulary from a party's own corpus reveals which words that party uses;
// a federation must use a shared vocabulary file or the private vocabulary
// selection round, which charges its ε to each party.
package vocab
