package corpus_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/google/go-cmp/cmp"
)

func mustTokenizer(t testing.TB, cfg corpus.TokenizerConfig) *corpus.Tokenizer {
	t.Helper()
	tok, err := corpus.NewTokenizer(cfg)
	if err != nil {
		t.Fatalf("NewTokenizer(%+v): %v", cfg, err)
	}
	return tok
}

func TestTokenizerWords(t *testing.T) {
	tests := []struct {
		name string
		cfg  corpus.TokenizerConfig
		text string
		want []string
	}{
		{name: "case folding", text: "Topic MODELS model Documents", want: []string{"topic", "models", "model", "documents"}},
		{name: "stop words dropped", text: "the cat and the hat were on it", want: []string{"cat", "hat"}},
		{name: "stop words kept", cfg: corpus.TokenizerConfig{StopWords: corpus.StopWordsNone}, text: "the cat and the hat", want: []string{"the", "cat", "and", "the", "hat"}},
		{name: "curly apostrophe folds to ASCII", text: "Don’t DON'T doesn’t dog’s", want: []string{"dog's"}},
		{name: "punctuation and numbers dropped", text: "x-ray, 1999 — 3.14 «bag» ... CO2 !!", want: []string{"ray", "bag", "co2"}},
		{name: "numbers kept", cfg: corpus.TokenizerConfig{KeepNumbers: true}, text: "in 1999 the 3.14 x", want: []string{"1999", "3.14"}},
		{name: "default minimum length 2", cfg: corpus.TokenizerConfig{StopWords: corpus.StopWordsNone}, text: "a b ox cat", want: []string{"ox", "cat"}},
		{name: "minimum length 4", cfg: corpus.TokenizerConfig{MinLength: 4}, text: "ox cat bird horse", want: []string{"bird", "horse"}},
		{name: "minimum length counts runes", cfg: corpus.TokenizerConfig{MinLength: 3}, text: "éé ééé", want: []string{"ééé"}},
		{name: "minimum length 1", cfg: corpus.TokenizerConfig{MinLength: 1, StopWords: corpus.StopWordsNone}, text: "a b", want: []string{"a", "b"}},
		{name: "stemming", cfg: corpus.TokenizerConfig{Stem: true}, text: "Running runners ran easily; generously connected connections", want: []string{"run", "runner", "ran", "easili", "generous", "connect", "connect"}},
		{name: "stemming leaves non-words", cfg: corpus.TokenizerConfig{Stem: true}, text: "U.S. b2b running", want: []string{"u.s", "b2b", "run"}},
		{name: "accents composed and decomposed", text: "Café CAFE\u0301 cafe naïve", want: []string{"café", "café", "cafe", "naïve"}},
		{name: "full case folding", text: "Straße STRASSE ΣΊΣΥΦΟΣ", want: []string{"strasse", "strasse", "σίσυφοσ"}},
		{name: "CJK ideographs exempt from minimum length", text: "東京は日本の首都です。", want: []string{"東", "京", "は", "日", "本", "の", "首", "都", "で", "す"}},
		{name: "Hangul words", text: "한국어 문장입니다.", want: []string{"한국어", "문장입니다"}},
		{name: "whitespace mode is exact", cfg: corpus.TokenizerConfig{Mode: corpus.ModeWhitespace}, text: "The  cat,\tTHE\u00a0hat!\n a I 1999 Café", want: []string{"The", "cat,", "THE", "hat!", "a", "I", "1999", "Café"}},
		{name: "whitespace mode keeps decomposed accents", cfg: corpus.TokenizerConfig{Mode: corpus.ModeWhitespace}, text: "CAFE\u0301", want: []string{"CAFE\u0301"}},
		{name: "empty text", text: "", want: nil},
		{name: "only stop words", text: "the and of", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustTokenizer(t, tt.cfg).Words(tt.text)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Words(%q) = %q; want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestStopWordFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "stop.txt")
	if err := os.WriteFile(p, []byte("# my list\nCat\n\n  hat  \nthé\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tok := mustTokenizer(t, corpus.TokenizerConfig{StopWords: p})
	text := "The cat in the HAT ate THÉ bread"
	want := []string{"the", "in", "the", "ate", "bread"}
	if got := tok.Words(text); !slices.Equal(got, want) {
		t.Errorf("Words(%q) with stop file = %q; want %q", text, got, want)
	}

	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("ok\nb\xffd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := corpus.NewTokenizer(corpus.TokenizerConfig{StopWords: bad})
	if !errors.Is(err, corpus.ErrInvalidUTF8) || !strings.Contains(err.Error(), bad+":2:") {
		t.Errorf("NewTokenizer with invalid stop file: %v; want invalid UTF-8 at %s:2", err, bad)
	}
	_, err = corpus.NewTokenizer(corpus.TokenizerConfig{StopWords: filepath.Join(dir, "missing.txt")})
	if err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("NewTokenizer with missing stop file: %v; want an error naming it", err)
	}
}

func TestEnglishStopWords(t *testing.T) {
	list := corpus.EnglishStopWords()
	if len(list) < 250 || len(list) > 400 {
		t.Errorf("EnglishStopWords() has %d words; want a standard list of about 300", len(list))
	}
	if !slices.IsSorted(list) {
		t.Error("EnglishStopWords() is not sorted")
	}
	if len(slices.Compact(slices.Clone(list))) != len(list) {
		t.Error("EnglishStopWords() has duplicates")
	}
	for _, w := range []string{"the", "and", "of", "don't", "which"} {
		if _, ok := slices.BinarySearch(list, w); !ok {
			t.Errorf("EnglishStopWords() lacks %q", w)
		}
	}
	for _, w := range []string{"topic", "model", "data", "computer"} {
		if _, ok := slices.BinarySearch(list, w); ok {
			t.Errorf("EnglishStopWords() has content word %q", w)
		}
	}
}

func TestTokenizerConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  corpus.TokenizerConfig
		errs []string // substrings; nil means valid
	}{
		{name: "zero value", cfg: corpus.TokenizerConfig{}},
		{name: "whitespace plain", cfg: corpus.TokenizerConfig{Mode: corpus.ModeWhitespace, StopWords: corpus.StopWordsNone, Units: "window:3"}},
		{name: "unknown mode", cfg: corpus.TokenizerConfig{Mode: "spacy"}, errs: []string{`mode "spacy" unknown`}},
		{name: "negative length", cfg: corpus.TokenizerConfig{MinLength: -1}, errs: []string{"min_length -1 is negative"}},
		{name: "bad units", cfg: corpus.TokenizerConfig{Units: "window:0"}, errs: []string{`units "window:0" unknown`}},
		{name: "bad units name", cfg: corpus.TokenizerConfig{Units: "line"}, errs: []string{`units "line" unknown`}},
		{
			name: "whitespace with filters reports all",
			cfg:  corpus.TokenizerConfig{Mode: corpus.ModeWhitespace, StopWords: "english", MinLength: 2, KeepNumbers: true, Stem: true},
			errs: []string{"no stop words", "no min_length", "no keep_numbers", "no stemming"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.errs == nil {
				if err != nil {
					t.Errorf("Validate() = %v; want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil; want errors %q", tt.errs)
			}
			for _, e := range tt.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("Validate() = %q; want it to contain %q", err, e)
				}
			}
			if _, err := corpus.NewTokenizer(tt.cfg); err == nil {
				t.Errorf("NewTokenizer(%+v) succeeded; want the Validate error", tt.cfg)
			}
		})
	}
}

func TestTokenizerUnits(t *testing.T) {
	text := "The first sentence is here. Dr. Smith wrote a second one!\n" +
		"A new line starts a sentence\n" +
		"\n  \n" +
		"Another paragraph holds seven distinct content words."
	tests := []struct {
		name string
		cfg  corpus.TokenizerConfig
		text string
		want [][]string
	}{
		{
			name: "sentence",
			text: text,
			want: [][]string{
				{"first", "sentence"},
				{"dr", "smith", "wrote", "second"},
				{"new", "line", "starts", "sentence"},
				{"paragraph", "holds", "seven", "distinct", "content", "words"},
			},
		},
		{
			name: "window:3",
			cfg:  corpus.TokenizerConfig{Units: "window:3"},
			text: text,
			want: [][]string{
				{"first", "sentence"},
				{"dr", "smith", "wrote"}, {"second"},
				{"new", "line", "starts"}, {"sentence"},
				{"paragraph", "holds", "seven"}, {"distinct", "content", "words"},
			},
		},
		{
			name: "paragraph",
			cfg:  corpus.TokenizerConfig{Units: "paragraph"},
			text: text,
			want: [][]string{
				{"first", "sentence", "dr", "smith", "wrote", "second", "new", "line", "starts", "sentence"},
				{"paragraph", "holds", "seven", "distinct", "content", "words"},
			},
		},
		{
			name: "document",
			cfg:  corpus.TokenizerConfig{Units: "document"},
			text: text,
			want: [][]string{{"first", "sentence", "dr", "smith", "wrote", "second", "new", "line", "starts", "sentence", "paragraph", "holds", "seven", "distinct", "content", "words"}},
		},
		{
			name: "one-line document is one paragraph",
			cfg:  corpus.TokenizerConfig{Units: "paragraph"},
			text: "Cats purr. Dogs bark.",
			want: [][]string{{"cats", "purr", "dogs", "bark"}},
		},
		{
			name: "sentence of stop words is no unit",
			text: "Cats purr. It is what it is. Dogs bark.",
			want: [][]string{{"cats", "purr"}, {"dogs", "bark"}},
		},
		{
			name: "whitespace sentences end at lines and final punctuation",
			cfg:  corpus.TokenizerConfig{Mode: corpus.ModeWhitespace},
			text: "the cat sat . the dog ran!\nno punctuation here\n\nwhy? yes 。 end",
			want: [][]string{{"the", "cat", "sat", "."}, {"the", "dog", "ran!"}, {"no", "punctuation", "here"}, {"why?"}, {"yes", "。"}, {"end"}},
		},
		{
			name: "whitespace windows",
			cfg:  corpus.TokenizerConfig{Mode: corpus.ModeWhitespace, Units: "window:2"},
			text: "a b c .\nd e",
			want: [][]string{{"a", "b"}, {"c", "."}, {"d", "e"}},
		},
		{
			name: "whitespace paragraphs",
			cfg:  corpus.TokenizerConfig{Mode: corpus.ModeWhitespace, Units: "paragraph"},
			text: "a b.\nc\r\n\r\nd",
			want: [][]string{{"a", "b.", "c"}, {"d"}},
		},
		{
			name: "no tokens, no units",
			text: "!!! ... 42",
			want: [][]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustTokenizer(t, tt.cfg).Units(tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Units(%q) differs (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestTokenize(t *testing.T) {
	tok := mustTokenizer(t, corpus.TokenizerConfig{})
	d := corpus.Document{ID: "d1", Label: "pets", Text: "Cats purr. Dogs bark loudly.", Source: "f.txt", Line: 3}
	got := tok.Tokenize(d)
	want := corpus.TokenizedDoc{ID: "d1", Label: "pets", Source: "f.txt", Line: 3, Units: [][]string{{"cats", "purr"}, {"dogs", "bark", "loudly"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Tokenize differs (-want +got):\n%s", diff)
	}
	if n := got.NumTokens(); n != 5 {
		t.Errorf("NumTokens() = %d; want 5", n)
	}
}

// FuzzTokenizer checks on arbitrary text that tokenization never panics,
// that tokens are non-empty valid UTF-8 (even from invalid input) without
// white space or ignorable characters (in whitespace mode: exactly the
// fields of valid input between IsSpace characters, ignorable characters
// deleted), and that Words is Units flattened.
func FuzzTokenizer(f *testing.F) {
	for _, s := range []string{"", "Hello, World. Dr. Who?", "東京\n\nCAFE\u0301 don’t", "a\x00b\xff", "  \n\t\r\n", "x. y! z?",
		"Quelle heure est-il\u202f? Il est midi", "\ufeffa\u200bb\u200dc\u00add\u2060e\u200ff", "a\u202f\u200d\nb"} {
		f.Add(s, uint8(0))
	}
	cfgs := []corpus.TokenizerConfig{
		{},
		{Stem: true, KeepNumbers: true, Units: "window:2"},
		{Units: "paragraph", MinLength: 1, StopWords: corpus.StopWordsNone},
		{Mode: corpus.ModeWhitespace},
		{Mode: corpus.ModeWhitespace, Units: "document"},
	}
	toks := make([]*corpus.Tokenizer, len(cfgs))
	for i, c := range cfgs {
		toks[i] = mustTokenizer(f, c)
	}
	f.Fuzz(func(t *testing.T, text string, which uint8) {
		i := int(which) % len(toks)
		tok := toks[i]
		units := tok.Units(text)
		var flat []string
		for _, u := range units {
			if len(u) == 0 {
				t.Fatalf("config %d: Units(%q) has an empty unit", i, text)
			}
			flat = append(flat, u...)
		}
		if words := tok.Words(text); !slices.Equal(words, flat) {
			t.Fatalf("config %d: Words(%q) = %q; Units flattened = %q", i, text, words, flat)
		}
		for _, w := range flat {
			if w == "" || strings.ContainsFunc(w, corpus.IsSpace) || strings.ContainsFunc(w, corpus.IsIgnorable) {
				t.Fatalf("config %d: token %q of %q is empty or has white space or an ignorable character", i, w, text)
			}
			if !utf8.ValidString(w) {
				t.Fatalf("config %d: token %q of %q is not valid UTF-8", i, w, text)
			}
		}
		if cfgs[i].Mode == corpus.ModeWhitespace && utf8.ValidString(text) {
			var want []string
			for _, field := range strings.FieldsFunc(text, corpus.IsSpace) {
				field = strings.Map(func(r rune) rune {
					if corpus.IsIgnorable(r) {
						return -1
					}
					return r
				}, field)
				if field != "" {
					want = append(want, field)
				}
			}
			if !slices.Equal(flat, want) {
				t.Fatalf("config %d: whitespace tokens %q; fields without ignorable characters %q", i, flat, want)
			}
		}
	})
}
