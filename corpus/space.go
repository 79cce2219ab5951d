package corpus

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsSpace reports whether r is white space: a character with Unicode's
// White_Space property (unicode.IsSpace: the ASCII space, tab and line
// ends, NEL U+0085, the no-break space U+00A0, the Ogham space mark U+1680,
// the spaces U+2000–U+200A, the line and paragraph separators U+2028 and
// U+2029, the narrow no-break space U+202F, U+205F and the ideographic
// space U+3000), or the zero-width space U+200B, which marks a word
// boundary in scripts written without spaces.
//
// It is the one definition of white space that the tokenizer and the
// vocabulary share: both tokenizer modes split text on these characters,
// so no token contains one, and package vocab refuses a word that begins
// or ends with one.
func IsSpace(r rune) bool {
	return unicode.IsSpace(r) || r == '\u200B'
}

// IsIgnorable reports whether the tokenizer deletes r from tokens: a
// control character (general category Cc) or a format character (Cf) that
// is not white space. Format characters are invisible: the byte-order mark
// U+FEFF (at the start of a file or of a line of a concatenated file), the
// soft hyphen U+00AD, the zero-width joiner U+200D and non-joiner U+200C,
// the word joiner U+2060, the bidirectional marks, embeddings and isolates
// (U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the tag characters.
// Deleting them makes "hy\u00ADphen" and "hyphen" one word, as Unicode's
// NFKC_Casefold mapping and the text cleaning of BERT's tokenizer do.
func IsIgnorable(r rune) bool {
	if r < utf8.RuneSelf {
		return (r < 0x20 || r == 0x7F) && !unicode.IsSpace(r)
	}
	return (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r)) && !IsSpace(r)
}

// isPlainASCII reports whether s is made only of printable ASCII
// characters other than the space, which need no cleaning.
func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7F {
			return false
		}
	}
	return true
}

// isBlankText reports whether s has only white space and ignorable
// characters: nothing the tokenizer could make a token of.
func isBlankText(s string) bool {
	for _, c := range s {
		if !IsSpace(c) && !IsIgnorable(c) {
			return false
		}
	}
	return true
}

// dropIgnorable returns s without its ignorable characters; it does not
// allocate when there are none.
func dropIgnorable(s string) string {
	if isPlainASCII(s) || strings.IndexFunc(s, IsIgnorable) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if IsIgnorable(r) {
			return -1
		}
		return r
	}, s)
}

// eachPiece calls f on each part of s between white space, with ignorable
// characters deleted; empty parts are skipped. A UAX #29 word can hold
// white space (U+202F joins the letters around it, as U+005F does), which
// this splits out.
func eachPiece(s string, f func(string)) {
	if isPlainASCII(s) {
		f(s)
		return
	}
	for len(s) > 0 {
		i := strings.IndexFunc(s, IsSpace)
		if i < 0 {
			if p := dropIgnorable(s); p != "" {
				f(p)
			}
			return
		}
		if p := dropIgnorable(s[:i]); p != "" {
			f(p)
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		s = s[i+size:]
	}
}
