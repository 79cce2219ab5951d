package corpus_test

import (
	"slices"
	"testing"
	"unicode"

	"github.com/fedtopic/fedtopic/corpus"
)

// eachRune calls f on every code point of the range table.
func eachRune(tab *unicode.RangeTable, f func(rune)) {
	for _, r := range tab.R16 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			f(c)
		}
	}
	for _, r := range tab.R32 {
		for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
			f(c)
		}
	}
}

func TestIsSpaceIsIgnorable(t *testing.T) {
	eachRune(unicode.White_Space, func(r rune) {
		if !corpus.IsSpace(r) || corpus.IsIgnorable(r) {
			t.Errorf("White_Space %U: IsSpace = %v, IsIgnorable = %v; want true, false", r, corpus.IsSpace(r), corpus.IsIgnorable(r))
		}
	})
	for _, tab := range []*unicode.RangeTable{unicode.Cf, unicode.Cc} {
		eachRune(tab, func(r rune) {
			if corpus.IsSpace(r) == corpus.IsIgnorable(r) {
				t.Errorf("%U: IsSpace = %v, IsIgnorable = %v; want exactly one true", r, corpus.IsSpace(r), corpus.IsIgnorable(r))
			}
		})
	}
	tests := []struct {
		r                rune
		space, ignorable bool
	}{
		{r: ' ', space: true},
		{r: '\u00A0', space: true},     // no-break space
		{r: '\u202F', space: true},     // narrow no-break space
		{r: '\u3000', space: true},     // ideographic space
		{r: '\u200B', space: true},     // zero-width space
		{r: '\uFEFF', ignorable: true}, // byte-order mark
		{r: '\u200D', ignorable: true}, // zero-width joiner
		{r: '\u00AD', ignorable: true}, // soft hyphen
		{r: '\u200F', ignorable: true}, // right-to-left mark
		{r: '\x00', ignorable: true},
		{r: '\x1F', ignorable: true},
		{r: '\u0085', space: true}, // next line
		{r: 'a'},
		{r: '_'},
		{r: '東'},
		{r: '\u0301'}, // combining acute accent
	}
	for _, tt := range tests {
		if got, got2 := corpus.IsSpace(tt.r), corpus.IsIgnorable(tt.r); got != tt.space || got2 != tt.ignorable {
			t.Errorf("%U: IsSpace, IsIgnorable = %v, %v; want %v, %v", tt.r, got, got2, tt.space, tt.ignorable)
		}
	}
}

// TestTokenizerSpaceAndFormat checks both modes on Unicode's space and
// format characters: spaces separate tokens, format characters vanish.
func TestTokenizerSpaceAndFormat(t *testing.T) {
	unicodeMode := corpus.TokenizerConfig{StopWords: corpus.StopWordsNone}
	whitespace := corpus.TokenizerConfig{Mode: corpus.ModeWhitespace}
	tests := []struct {
		name    string
		text    string
		unicode []string // words in unicode mode, without stop words
		ws      []string // words in whitespace mode
	}{
		{name: "narrow no-break space before French punctuation", text: "Quelle heure est-il\u202f? Il est midi",
			unicode: []string{"quelle", "heure", "est", "il", "il", "est", "midi"}, ws: []string{"Quelle", "heure", "est-il", "?", "Il", "est", "midi"}},
		{name: "narrow no-break space between letters", text: "foo\u202fbar", unicode: []string{"foo", "bar"}, ws: []string{"foo", "bar"}},
		{name: "narrow no-break space after a word", text: "«\u202fbonjour\u202f»", unicode: []string{"bonjour"}, ws: []string{"«", "bonjour", "»"}},
		{name: "no-break space", text: "dix\u00a0km", unicode: []string{"dix", "km"}, ws: []string{"dix", "km"}},
		{name: "thin, figure and ideographic spaces", text: "aa\u2009bb\u2007cc\u3000dd", unicode: []string{"aa", "bb", "cc", "dd"}, ws: []string{"aa", "bb", "cc", "dd"}},
		{name: "Ogham space mark and medium space", text: "aa\u1680bb\u205fcc", unicode: []string{"aa", "bb", "cc"}, ws: []string{"aa", "bb", "cc"}},
		{name: "line and paragraph separators", text: "aa\u2028bb\u2029cc\u0085dd", unicode: []string{"aa", "bb", "cc", "dd"}, ws: []string{"aa", "bb", "cc", "dd"}},
		{name: "zero-width space separates", text: "foo\u200bbar", unicode: []string{"foo", "bar"}, ws: []string{"foo", "bar"}},
		{name: "byte-order mark at the start", text: "\ufeffHello world", unicode: []string{"hello", "world"}, ws: []string{"Hello", "world"}},
		{name: "byte-order mark at the start of a line", text: "first line\n\ufeffsecond line", unicode: []string{"first", "line", "second", "line"}, ws: []string{"first", "line", "second", "line"}},
		{name: "byte-order mark inside a word", text: "foo\ufeffbar", unicode: []string{"foobar"}, ws: []string{"foobar"}},
		{name: "zero-width joiner inside a word", text: "foo\u200dbar", unicode: []string{"foobar"}, ws: []string{"foobar"}},
		{name: "zero-width non-joiner inside a word", text: "می\u200cخواهم", unicode: []string{"میخواهم"}, ws: []string{"میخواهم"}},
		{name: "soft hyphen", text: "hy\u00adphen hyphen", unicode: []string{"hyphen", "hyphen"}, ws: []string{"hyphen", "hyphen"}},
		{name: "word joiner", text: "foo\u2060bar", unicode: []string{"foobar"}, ws: []string{"foobar"}},
		{name: "bidi marks and isolates", text: "\u200fשלום\u200e \u2067abc\u2069 \u202bdef\u202c", unicode: []string{"שלום", "abc", "def"}, ws: []string{"שלום", "abc", "def"}},
		{name: "tag characters", text: "ab\U000E0041\U000E007Fcd", unicode: []string{"abcd"}, ws: []string{"abcd"}},
		{name: "control characters", text: "ab\x01cd\x7f", unicode: []string{"ab", "cd"}, ws: []string{"abcd"}},
		{name: "only format characters", text: "\ufeff \u200d\u00ad \u200e", unicode: nil, ws: nil},
		{name: "format character alone between spaces", text: "aa \u200d bb", unicode: []string{"aa", "bb"}, ws: []string{"aa", "bb"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustTokenizer(t, unicodeMode).Words(tt.text); !slices.Equal(got, tt.unicode) {
				t.Errorf("unicode mode: Words(%q) = %q; want %q", tt.text, got, tt.unicode)
			}
			if got := mustTokenizer(t, whitespace).Words(tt.text); !slices.Equal(got, tt.ws) {
				t.Errorf("whitespace mode: Words(%q) = %q; want %q", tt.text, got, tt.ws)
			}
		})
	}
}

// TestWhitespaceUnitsFormatOnly checks that a token made only of format
// characters still ends its sentence when a line break follows it.
func TestWhitespaceUnitsFormatOnly(t *testing.T) {
	tok := mustTokenizer(t, corpus.TokenizerConfig{Mode: corpus.ModeWhitespace})
	got := tok.Units("aa bb \u200d\ncc.\u00ad dd")
	want := [][]string{{"aa", "bb"}, {"cc."}, {"dd"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Units = %q; want %q", got, want)
	}
}

func TestBlankFormatLinesSkipped(t *testing.T) {
	tok := mustTokenizer(t, corpus.TokenizerConfig{Units: "paragraph"})
	got := tok.Units("cats purr\n\ufeff\u200b\ndogs bark")
	want := [][]string{{"cats", "purr"}, {"dogs", "bark"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Units = %q; want %q (a line of format characters is blank)", got, want)
	}
}
