// Package corpus reads text corpora, tokenizes them, cuts them into semantic
// units, and splits encoded corpora among the parties of a federation.
//
// Readers stream three input formats (Open, ReadAll): one document per line;
// JSONL with a "text" field and optional "id" and "label"; and a directory of
// .txt files, one document per file, read in name order. Lines have no
// length limit. Input must be UTF-8: invalid bytes, a NUL byte (a binary
// file) and malformed JSONL records are errors naming the file and line
// (*InputError), or, with ReadOptions.SkipInvalid, documents with invalid
// UTF-8 are skipped and counted. Empty lines are skipped and counted.
//
// The Tokenizer has two modes. "unicode" segments words by Unicode rules
// (UAX #29, Davis & Chapman, Unicode Standard Annex #29), normalizes to NFC,
// folds case, drops tokens without a letter, stop words (an embedded English
// list, replaceable by a file) and tokens shorter than two runes, and can
// apply the Snowball English stemmer (Porter, "Snowball: A language for
// stemming algorithms", 2001). "whitespace" only splits on white space, for
// exact comparisons with other tools. Documents are cut into semantic units
// after filtering: sentences (UAX #29 sentence boundaries; in whitespace
// mode a line break or a token ending in . ! or ?), N-token windows inside
// sentences (the units of PC-TD, Shi et al., IEEE Intelligent Systems
// 2020), paragraphs (blank-line separated), or whole documents.
//
// A Corpus is the compact encoded form the samplers train on (vocab.Encode
// and vocab.Prepare make one). Split divides it among parties: IID by sizes
// or counts, by label groups (the non-IID 1:2:3 splits of FTM, Jiang et
// al., CIKM 2019), by Dirichlet(α·p) label mixes (Hsu, Qi & Brown, "Measuring the
// Effects of Non-Identical Data Distribution for Federated Visual
// Classification", 2019), or by input file; ParseSplit reads the command
// line's spec strings.
//
//	r, err := corpus.Open("docs.jsonl", corpus.ReadOptions{})
//	tok, err := corpus.NewTokenizer(corpus.TokenizerConfig{Units: "window:3"})
//	for d, err := range r.All() { units := tok.Units(d.Text); ... }
//	parties, err := corpus.Split(c, corpus.SplitSpec{Method: "labels", Sizes: []float64{1, 2, 3}}, rng.Derive(seed, "split"))
//
// See example_test.go for runnable examples.
//
// Determinism: readers return documents in input order (directory entries
// sorted by name); tokenization is a pure function of text and config; Split
// depends only on the corpus, the spec and the *rand.Rand it is given.
//
// Privacy: this package handles raw text and releases nothing. A split is
// an experimental device: in a real federation each party reads only its
// own files.
package corpus
