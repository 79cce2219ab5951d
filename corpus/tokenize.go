package corpus

import (
	"bufio"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/sentences"
	"github.com/clipperhouse/uax29/v2/words"
	"github.com/kljensen/snowball/english"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Tokenizer modes.
const (
	// ModeUnicode segments words by Unicode rules (UAX #29), folds case,
	// normalizes to NFC, drops stop words, tokens without a letter and short
	// tokens, and optionally stems.
	ModeUnicode = "unicode"
	// ModeWhitespace splits on white space (IsSpace), deletes ignorable
	// characters (IsIgnorable) and does nothing else.
	ModeWhitespace = "whitespace"
)

// Stop-word list selectors for TokenizerConfig.StopWords; any other value is
// the path of a one-word-per-line file.
const (
	StopWordsEnglish = "english" // the embedded English list (the default)
	StopWordsNone    = "none"    // keep stop words
)

// DefaultMinLength is the minimum token length, in runes, of ModeUnicode
// when TokenizerConfig.MinLength is 0.
const DefaultMinLength = 2

//go:embed stopwords_en.txt
var englishStopWords string

// EnglishStopWords returns the embedded English stop-word list (lower case,
// sorted, ASCII apostrophes).
func EnglishStopWords() []string { return strings.Fields(englishStopWords) }

// TokenizerConfig configures a Tokenizer. The zero value is the unicode mode
// with the embedded English stop words, minimum length 2, no stemming, and
// sentence units.
type TokenizerConfig struct {
	// Mode is ModeUnicode ("" means unicode) or ModeWhitespace.
	Mode string `json:"mode,omitempty"`
	// StopWords is StopWordsEnglish ("" means english in unicode mode and
	// none in whitespace mode), StopWordsNone, or the path of a file with one
	// stop word per line (folded like tokens before use). Whitespace mode
	// accepts only "" or "none".
	StopWords string `json:"stop_words,omitempty"`
	// MinLength is the minimum token length in runes; 0 means
	// DefaultMinLength in unicode mode. Tokens made only of Han, Hiragana or
	// Katakana characters are exempt, because UAX #29 makes each ideograph a
	// word. Whitespace mode accepts only 0.
	MinLength int `json:"min_length,omitempty"`
	// KeepNumbers keeps tokens that have a digit but no letter ("1999");
	// by default only tokens with a letter are kept. Unicode mode only.
	KeepNumbers bool `json:"keep_numbers,omitempty"`
	// Stem applies the Snowball English stemmer (Porter2) after stop-word
	// removal. Unicode mode only.
	Stem bool `json:"stem,omitempty"`
	// Units is the semantic unit: "sentence" (the default), "paragraph",
	// "document", or "window:N" (N-token windows inside sentences).
	Units string `json:"units,omitempty"`
}

// Validate reports every problem with the configuration.
func (c TokenizerConfig) Validate() error {
	var errs []error
	ws := false
	switch c.Mode {
	case "", ModeUnicode:
	case ModeWhitespace:
		ws = true
	default:
		errs = append(errs, fmt.Errorf("corpus: tokenizer mode %q unknown (want %q or %q)", c.Mode, ModeUnicode, ModeWhitespace))
	}
	if c.MinLength < 0 {
		errs = append(errs, fmt.Errorf("corpus: tokenizer min_length %d is negative", c.MinLength))
	}
	if ws {
		if c.StopWords != "" && c.StopWords != StopWordsNone {
			errs = append(errs, errors.New("corpus: whitespace tokenizer takes no stop words (it only splits on spaces)"))
		}
		if c.MinLength != 0 {
			errs = append(errs, errors.New("corpus: whitespace tokenizer takes no min_length (it only splits on spaces)"))
		}
		if c.KeepNumbers {
			errs = append(errs, errors.New("corpus: whitespace tokenizer takes no keep_numbers (it keeps every token)"))
		}
		if c.Stem {
			errs = append(errs, errors.New("corpus: whitespace tokenizer does no stemming (it only splits on spaces)"))
		}
	}
	if _, err := parseUnits(c.Units); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// unitKind is the kind of semantic unit.
type unitKind int

const (
	unitSentence unitKind = iota
	unitParagraph
	unitDocument
	unitWindow
)

type unitSpec struct {
	kind unitKind
	n    int // window size
}

func parseUnits(s string) (unitSpec, error) {
	switch s {
	case "", "sentence":
		return unitSpec{kind: unitSentence}, nil
	case "paragraph":
		return unitSpec{kind: unitParagraph}, nil
	case "document":
		return unitSpec{kind: unitDocument}, nil
	}
	if rest, ok := strings.CutPrefix(s, "window:"); ok {
		n, err := strconv.Atoi(rest)
		if err == nil && n >= 1 {
			return unitSpec{kind: unitWindow, n: n}, nil
		}
	}
	return unitSpec{}, fmt.Errorf("corpus: units %q unknown (want sentence, paragraph, document or window:N with N ≥ 1)", s)
}

// TokenizedDoc is a document cut into semantic units of tokens. Units are
// never empty; a document whose every token was filtered out has no units.
type TokenizedDoc struct {
	ID     string
	Label  string
	Source string     // input file, as in Document
	Line   int        // line in Source, as in Document (0 for whole-file documents)
	Units  [][]string // tokens of each unit, in order
}

// NumTokens returns the number of tokens in all units.
func (d *TokenizedDoc) NumTokens() int {
	n := 0
	for _, u := range d.Units {
		n += len(u)
	}
	return n
}

// Tokenizer turns text into tokens and semantic units. It is immutable once
// made and safe for concurrent use.
type Tokenizer struct {
	cfg        TokenizerConfig
	whitespace bool
	minLen     int
	stop       map[string]struct{}
	units      unitSpec

	// stems caches Snowball stems (word → stem); the stemmer costs more
	// than the rest of the pipeline, and a corpus has far fewer distinct
	// words than tokens. Bounded by maxStems entries.
	stems  sync.Map
	nstems atomic.Int64
}

// maxStems bounds the stem cache of a Tokenizer.
const maxStems = 1 << 20

// NewTokenizer returns a Tokenizer for cfg, reading the stop-word file if
// cfg names one.
func NewTokenizer(cfg TokenizerConfig) (*Tokenizer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tokenizer{cfg: cfg, whitespace: cfg.Mode == ModeWhitespace}
	t.units, _ = parseUnits(cfg.Units)
	if t.whitespace {
		return t, nil
	}
	t.minLen = cfg.MinLength
	if t.minLen == 0 {
		t.minLen = DefaultMinLength
	}
	var list []string
	switch cfg.StopWords {
	case "", StopWordsEnglish:
		list = EnglishStopWords()
	case StopWordsNone:
	default:
		var err error
		if list, err = readStopWords(cfg.StopWords); err != nil {
			return nil, err
		}
	}
	t.stop = make(map[string]struct{}, len(list))
	var s scanState
	for _, w := range list {
		t.stop[s.fold(w)] = struct{}{}
	}
	return t, nil
}

// readStopWords reads a stop-word file: one word per line, blank lines and
// lines starting with '#' ignored.
func readStopWords(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: stop words: %w", err)
	}
	defer f.Close()
	var list []string
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if line == 1 {
			b = []byte(strings.TrimPrefix(string(b), "\uFEFF"))
		}
		if !utf8.Valid(b) {
			return nil, &InputError{File: path, Line: line, Err: invalidAt(b)}
		}
		w := dropIgnorable(strings.TrimFunc(string(b), IsSpace))
		if w == "" || strings.HasPrefix(w, "#") {
			continue
		}
		if strings.IndexFunc(w, IsSpace) >= 0 {
			return nil, &InputError{File: path, Line: line, Err: fmt.Errorf("stop word %q contains white space", w)}
		}
		list = append(list, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("corpus: stop words: %s: %w", path, err)
	}
	return list, nil
}

// Config returns the configuration the Tokenizer was made from.
func (t *Tokenizer) Config() TokenizerConfig { return t.cfg }

// Tokenize cuts d's text into units of tokens.
func (t *Tokenizer) Tokenize(d Document) TokenizedDoc {
	return TokenizedDoc{ID: d.ID, Label: d.Label, Source: d.Source, Line: d.Line, Units: t.Units(d.Text)}
}

// Units returns the tokens of text grouped into semantic units; empty units
// are left out. All units share one backing array.
func (t *Tokenizer) Units(text string) [][]string {
	var (
		toks []string
		cuts []int
	)
	t.Each(text, func(tok string) { toks = append(toks, tok) }, func() { cuts = append(cuts, len(toks)) })
	units := make([][]string, len(cuts))
	start := 0
	for i, c := range cuts {
		units[i] = toks[start:c:c]
		start = c
	}
	return units
}

// Words returns the tokens of text, ignoring unit boundaries.
func (t *Tokenizer) Words(text string) []string {
	var toks []string
	t.Each(text, func(tok string) { toks = append(toks, tok) }, func() {})
	return toks
}

// Each tokenizes text without collecting the tokens: it calls emit for every
// kept token in order, and cut after the last token of every non-empty
// semantic unit (so cut is called once per unit and never for an empty one).
// Invalid UTF-8 (which the readers never return) is first replaced by
// U+FFFD, so tokens are always valid UTF-8. In both modes a token is never
// empty and holds no white space (IsSpace) and no ignorable character
// (IsIgnorable), so package vocab accepts every token as a word.
func (t *Tokenizer) Each(text string, emit func(tok string), cut func()) {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	var state scanState
	t.scan(text, &state, emit, cut)
}

// scanState is per-call scratch space for scan.
type scanState struct {
	caser  cases.Caser
	folder bool // caser is set
}

// scan tokenizes text, calling emit for every kept token in order and cut
// after the last token of every non-empty unit. state is scratch space that
// may be reused across calls by one goroutine; a zero scanState is ready.
func (t *Tokenizer) scan(text string, state *scanState, emit func(tok string), cut func()) {
	n := 0 // tokens in the current unit
	put := func(tok string) {
		emit(tok)
		n++
		if t.units.kind == unitWindow && n == t.units.n {
			cut()
			n = 0
		}
	}
	end := func() {
		if n > 0 {
			cut()
			n = 0
		}
	}
	forParagraphs(text, func(p string) {
		switch t.units.kind {
		case unitSentence, unitWindow:
			t.sentences(p, state, put, end)
		default:
			t.words(p, state, put)
		}
		if t.units.kind != unitDocument {
			end()
		}
	})
	end()
}

// forParagraphs calls f on each paragraph of text: runs of lines separated
// by blank lines (lines of only white space and ignorable characters).
func forParagraphs(text string, f func(string)) {
	start, pos := 0, 0
	inPara := false
	for pos <= len(text) {
		nl := strings.IndexByte(text[pos:], '\n')
		end := len(text)
		if nl >= 0 {
			end = pos + nl
		}
		if isBlankText(text[pos:end]) {
			if inPara {
				f(text[start:pos])
				inPara = false
			}
		} else if !inPara {
			start, inPara = pos, true
		}
		pos = end + 1
	}
	if inPara {
		f(text[start:])
	}
}

// sentences cuts paragraph p into sentences, calling end after each.
func (t *Tokenizer) sentences(p string, state *scanState, put func(string), end func()) {
	if t.whitespace {
		// A sentence ends at a line break and after a token whose last
		// character is sentence-final punctuation (. ! ? and their
		// full-width forms), the convention of pre-tokenized corpora.
		forWhitespaceTokens(p, func(tok string, eol bool) {
			if tok != "" {
				put(tok)
			}
			if eol || endsSentence(tok) {
				end()
			}
		})
		return
	}
	it := sentences.FromString(p)
	for it.Next() {
		s := it.Value()
		t.words(s, state, put)
		if !endsInTitle(s) {
			end()
		}
	}
}

// endsInTitle reports whether sentence s ends with a title abbreviation and
// its period. UAX #29 takes "Dr." before a capitalized name for the end of a
// sentence; such a sentence is joined to the next. Abbreviations that often
// do end a sentence (etc., U.S.) are not titles.
func endsInTitle(s string) bool {
	s = strings.TrimRightFunc(s, IsSpace)
	s, ok := strings.CutSuffix(s, ".")
	if !ok {
		return false
	}
	i := strings.LastIndexFunc(s, func(c rune) bool { return !unicode.IsLetter(c) })
	w := s[i+1:]
	if len(w) > 4 {
		return false
	}
	switch strings.ToLower(w) {
	case "capt", "col", "dr", "gen", "gov", "jr", "lt", "mr", "mrs", "ms", "mt", "prof", "rev", "sen", "sgt", "sr", "st", "vs":
		return true
	}
	return false
}

func endsSentence(tok string) bool {
	r, _ := utf8.DecodeLastRuneInString(tok)
	switch r {
	case '.', '!', '?', '。', '！', '？':
		return true
	}
	return false
}

// forWhitespaceTokens calls f on each white-space separated token of s,
// with its ignorable characters deleted (so possibly empty); eol reports
// that a line break (or the end of s) follows the token.
func forWhitespaceTokens(s string, f func(tok string, eol bool)) {
	start := -1
	for i, c := range s {
		if IsSpace(c) {
			if start >= 0 {
				f(dropIgnorable(s[start:i]), lineBreakAhead(s[i:]))
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		f(dropIgnorable(s[start:]), true)
	}
}

// lineBreakAhead reports whether the white space at the start of s contains
// a line break before the next token.
func lineBreakAhead(s string) bool {
	for _, c := range s {
		switch {
		case c == '\n' || c == '\r' || c == '\u2028' || c == '\u2029':
			return true
		case !IsSpace(c):
			return false
		}
	}
	return true
}

// words emits the kept tokens of s.
func (t *Tokenizer) words(s string, state *scanState, put func(string)) {
	if t.whitespace {
		forWhitespaceTokens(s, func(tok string, _ bool) {
			if tok != "" {
				put(tok)
			}
		})
		return
	}
	keep := func(tok string) {
		if w, ok := t.filter(tok, state); ok {
			put(w)
		}
	}
	it := words.FromString(s)
	for it.Next() {
		if tok := it.Value(); isPlainASCII(tok) {
			keep(tok)
		} else {
			eachPiece(tok, keep)
		}
	}
}

// filter applies the unicode-mode pipeline to one UAX #29 word.
func (t *Tokenizer) filter(tok string, state *scanState) (string, bool) {
	hasLetter, hasDigit, ascii := false, false, true
	for _, c := range tok {
		switch {
		case c < utf8.RuneSelf:
			if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' {
				hasLetter = true
			} else if '0' <= c && c <= '9' {
				hasDigit = true
			}
		default:
			ascii = false
			if unicode.IsLetter(c) {
				hasLetter = true
			} else if unicode.IsNumber(c) {
				hasDigit = true
			}
		}
	}
	if !hasLetter && !(t.cfg.KeepNumbers && hasDigit) {
		return "", false
	}
	var w string
	if ascii {
		w = state.lowerASCII(tok)
	} else {
		w = state.fold(tok)
	}
	if _, stop := t.stop[w]; stop {
		return "", false
	}
	if ascii {
		if len(w) < t.minLen {
			return "", false
		}
	} else if utf8.RuneCountInString(w) < t.minLen && !ideographic(w) {
		return "", false
	}
	if t.cfg.Stem && stemmable(w) {
		w = t.stem(w)
	}
	return w, true
}

// stem returns the Snowball English stem of w, through the cache.
func (t *Tokenizer) stem(w string) string {
	if s, ok := t.stems.Load(w); ok {
		return s.(string)
	}
	s := english.Stem(w, true)
	if t.nstems.Load() < maxStems {
		s = strings.Clone(s) // do not pin the document text
		if _, loaded := t.stems.LoadOrStore(strings.Clone(w), s); !loaded {
			t.nstems.Add(1)
		}
	}
	return s
}

// stemmable reports whether the Snowball English stemmer applies to w: a
// word of letters and apostrophes only ("u.s", "b2b" and "e-mail" are left
// alone).
func stemmable(w string) bool {
	for _, c := range w {
		if !unicode.IsLetter(c) && c != '\'' {
			return false
		}
	}
	return true
}

// ideographic reports whether w consists only of Han, Hiragana and Katakana
// characters, which UAX #29 emits one (or a few) at a time.
func ideographic(w string) bool {
	for _, c := range w {
		if !unicode.In(c, unicode.Han, unicode.Hiragana, unicode.Katakana) && c != 'ー' {
			return false
		}
	}
	return w != ""
}

// lowerASCII lower-cases an ASCII token, without allocating when it has no
// upper-case letter.
func (s *scanState) lowerASCII(tok string) string {
	upper := false
	for i := 0; i < len(tok); i++ {
		if 'A' <= tok[i] && tok[i] <= 'Z' {
			upper = true
			break
		}
	}
	if !upper {
		return tok
	}
	b := make([]byte, len(tok))
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

// fold normalizes a token to NFC, folds its case, and writes apostrophe-like
// U+2019 as the ASCII apostrophe, so "Don’t" and "don't" are one word.
func (s *scanState) fold(tok string) string {
	if !s.folder {
		s.caser = cases.Fold()
		s.folder = true
	}
	w := s.caser.String(norm.NFC.String(tok))
	if strings.ContainsRune(w, '’') {
		w = strings.ReplaceAll(w, "’", "'")
	}
	return w
}
