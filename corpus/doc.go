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
// exact comparisons with other tools.
//
// White space and invisible characters are treated alike in both modes,
// so that a token is always a valid vocabulary word:
//
//   - White space (IsSpace) is Unicode's White_Space property plus the
//     zero-width space U+200B: besides the ASCII space, tab and line ends
//     it includes the no-break space U+00A0, the narrow no-break space
//     U+202F (written before ? ! : ; in French), the thin, figure and
//     ideographic spaces, NEL and the line and paragraph separators. Every
//     one separates tokens, even where UAX #29 would join the letters
//     around it (it joins across U+202F), and no token contains one.
//     Package vocab uses the same function, so it refuses no token.
//   - Ignorable characters (IsIgnorable) are deleted from tokens: controls
//     (Cc) and format characters (Cf) other than white space — the
//     byte-order mark U+FEFF wherever it appears (the readers also drop
//     one at the start of a file), the soft hyphen U+00AD, the zero-width
//     joiner and non-joiner U+200D and U+200C, the word joiner U+2060,
//     the bidirectional marks and controls, and the tag characters. So
//     "hy\u00ADphen" is "hyphen" and a word with a joiner inside is the word
//     without it, as Unicode's NFKC_Casefold mapping has it. A token left
//     empty is dropped, and a line of only white space and ignorable
//     characters is blank.
//
// Documents are cut into semantic units after filtering: sentences (UAX #29
// sentence boundaries; in whitespace mode a line break or a token ending in
// . ! or ?), N-token windows inside sentences (the units of PC-TD, Shi et
// al., IEEE Intelligent Systems 2020), paragraphs (blank-line separated),
// or whole documents.
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
