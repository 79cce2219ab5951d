package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// corpusFlags are the flags that say how to read and tokenize text; train,
// infer and eval share them.
type corpusFlags struct {
	paths       []string
	format      string
	skipInvalid bool
	tokenizer   string
	stopWords   string
	minLength   int
	keepNumbers bool
	stem        bool
	units       string
	flags       *pflag.FlagSet
}

func (f *corpusFlags) register(fs *pflag.FlagSet, what string) {
	f.flags = fs
	fs.StringSliceVar(&f.paths, "corpus", nil, what+": a file with one document per line, a .jsonl file (fields text, optional id and label), or a directory of .txt files; several may be given, comma-separated")
	fs.StringVar(&f.format, "input-format", "", "input format: lines, jsonl or dir (default: from the path)")
	fs.BoolVar(&f.skipInvalid, "skip-invalid", false, "skip documents with invalid UTF-8 and count them, instead of failing")
	fs.StringVar(&f.tokenizer, "tokenizer", "unicode", "unicode (word segmentation, case folding, stop words) or whitespace (split on spaces only, for exact comparisons)")
	fs.StringVar(&f.stopWords, "stopwords", "", "english (unicode default), none, or a file with one stop word per line")
	fs.IntVar(&f.minLength, "min-length", 0, "minimum token length in characters (unicode default 2)")
	fs.BoolVar(&f.keepNumbers, "keep-numbers", false, "keep tokens made of digits only")
	fs.BoolVar(&f.stem, "stem", false, "apply the Snowball English stemmer")
	fs.StringVar(&f.units, "units", "", "semantic units for SentenceLDA: sentence (default), paragraph, document or window:N")
}

// tokenizerConfig returns the tokenizer settings; settings not given on the
// command line come from the model's provenance when m is not nil, so that
// new text is tokenized the way the model's training text was.
func (f *corpusFlags) tokenizerConfig(m *topic.Model) (corpus.TokenizerConfig, error) {
	tc := corpus.TokenizerConfig{}
	if m != nil {
		p := m.Prov.Params
		tc.Mode = p["tokenizer"]
		tc.StopWords = p["stopwords"]
		tc.MinLength, _ = strconv.Atoi(p["min_length"])
		tc.KeepNumbers = p["keep_numbers"] == "true"
		tc.Stem = p["stem"] == "true"
		tc.Units = p["units"]
	}
	changed := func(name string) bool { return m == nil || f.flags.Changed(name) }
	if changed("tokenizer") {
		tc.Mode = f.tokenizer
	}
	if changed("stopwords") {
		tc.StopWords = f.stopWords
	}
	if changed("min-length") {
		tc.MinLength = f.minLength
	}
	if changed("keep-numbers") {
		tc.KeepNumbers = f.keepNumbers
	}
	if changed("stem") {
		tc.Stem = f.stem
	}
	if changed("units") {
		tc.Units = f.units
	}
	if err := tc.Validate(); err != nil {
		return tc, usageError{err}
	}
	return tc, nil
}

// tokenizerParams records tc in a model's provenance.
func tokenizerParams(tc corpus.TokenizerConfig, params map[string]string) {
	params["tokenizer"] = tc.Mode
	if tc.Mode == "" {
		params["tokenizer"] = corpus.ModeUnicode
	}
	params["stopwords"] = tc.StopWords
	params["min_length"] = strconv.Itoa(tc.MinLength)
	params["keep_numbers"] = strconv.FormatBool(tc.KeepNumbers)
	params["stem"] = strconv.FormatBool(tc.Stem)
	params["units"] = tc.Units
}

func (f *corpusFlags) readOptions() (corpus.ReadOptions, error) {
	ro := corpus.ReadOptions{Format: corpus.Format(f.format), SkipInvalid: f.skipInvalid}
	if err := ro.Validate(); err != nil {
		return ro, usageError{err}
	}
	return ro, nil
}

// load reads, tokenizes and encodes the corpus. With fixed != nil the
// vocabulary is fixed; otherwise it is built with bo.
func (f *corpusFlags) load(ctx context.Context, tc corpus.TokenizerConfig, bo vocab.BuildOptions, fixed *vocab.Vocabulary, log io.Writer) (*corpus.Corpus, *vocab.Vocabulary, vocab.Stats, error) {
	return f.loadPaths(ctx, "corpus", f.paths, tc, bo, fixed, log)
}

// loadPaths is load for other inputs than --corpus; what names them in
// messages.
func (f *corpusFlags) loadPaths(ctx context.Context, what string, paths []string, tc corpus.TokenizerConfig, bo vocab.BuildOptions, fixed *vocab.Vocabulary, log io.Writer) (*corpus.Corpus, *vocab.Vocabulary, vocab.Stats, error) {
	if len(paths) == 0 {
		return nil, nil, vocab.Stats{}, usagef("--corpus is required: give a text file, a .jsonl file or a directory of .txt files")
	}
	ro, err := f.readOptions()
	if err != nil {
		return nil, nil, vocab.Stats{}, err
	}
	c, v, st, err := vocab.Prepare(ctx, paths, ro, tc, bo, fixed)
	if err != nil {
		return nil, nil, st, err
	}
	fmt.Fprintf(log, "%s: %d documents, %d tokens, %d words in the vocabulary%s\n",
		what, c.NumDocs(), c.NumTokens(), v.Len(), droppedSummary(st))
	return c, v, st, nil
}

// droppedSummary says what reading and encoding left out, so nothing is
// dropped silently.
func droppedSummary(st vocab.Stats) string {
	var parts []string
	if n := st.Read.SkippedEmpty; n > 0 {
		parts = append(parts, fmt.Sprintf("%d empty documents skipped", n))
	}
	if n := st.Read.SkippedInvalid; n > 0 {
		parts = append(parts, fmt.Sprintf("%d documents with invalid UTF-8 skipped", n))
	}
	if n := st.Encode.SkippedDocs; n > 0 {
		parts = append(parts, fmt.Sprintf("%d documents with no vocabulary word skipped", n))
	}
	if n := st.Encode.OOVTokens; n > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens outside the vocabulary dropped", n))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// loadModel loads a model file, or a JSON export when the path ends in .json.
func loadModel(path string) (*topic.Model, error) {
	if path == "" {
		return nil, usagef("--model is required: give a model file written by 'fedtopic train' or 'fedtopic simulate'")
	}
	if strings.HasSuffix(path, ".json") {
		return topic.LoadJSON(path)
	}
	return topic.Load(path)
}

// modelVocab returns the vocabulary of m.
func modelVocab(m *topic.Model) (*vocab.Vocabulary, error) {
	v, err := vocab.New(m.Vocab)
	if err != nil {
		return nil, fmt.Errorf("model vocabulary: %w", err)
	}
	return v, nil
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("%s takes no arguments, only flags (got %q)", cmd.Name(), args[0])
	}
	return nil
}
