package vocab_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// textAlphabet returns the characters FuzzTextToModel builds text from:
// every white-space character (unicode.White_Space, which holds the Zs
// spaces), every format character (Cf: ZWSP, ZWJ, ZWNJ, the byte-order
// mark, the soft hyphen, bidirectional marks and controls, tags, ...), a
// few controls, and letters, digits and punctuation of several scripts.
func textAlphabet() []rune {
	var out []rune
	add := func(tab *unicode.RangeTable) {
		for _, r := range tab.R16 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				out = append(out, c)
			}
		}
		for _, r := range tab.R32 {
			for c := rune(r.Lo); c <= rune(r.Hi); c += rune(r.Stride) {
				out = append(out, c)
			}
		}
	}
	add(unicode.White_Space)
	add(unicode.Zs)
	add(unicode.Cf)
	out = append(out, []rune("\x00\x01\x1f\x7f\u0080\u009f"+
		"aAzZéÉßİıςΣ東京はカ한ش\u0301\u0308'’-_.?!:;,«»1９")...)
	return out
}

// FuzzTextToModel drives text through the whole path a corpus takes —
// tokenizer (both modes), vocabulary, encoding, vocabulary file, model file
// and the command line's Prepare — over text mixing Unicode's space and
// format characters with letters. Nothing a tokenizer emits may be refused
// by the vocabulary, every token must encode, and saved vocabularies and
// models must load back identically.
func FuzzTextToModel(f *testing.F) {
	f.Add("Quelle heure est-il\u202f? Il est midi", []byte{}, uint8(0))
	f.Add("Quelle heure est-il\u202f? Il est midi", []byte{}, uint8(2))
	f.Add("\ufeffhy\u00adphen foo\u200dbar\u200bbaz \u2067abc\u2069\nx\u00a0y\u3000z", []byte{0, 40, 200, 3}, uint8(1))
	f.Add("", []byte{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, uint8(3))
	f.Add("a", []byte{250, 251, 252, 253, 254, 255, 30, 31, 32, 33}, uint8(4))
	alphabet := textAlphabet()
	cfgs := []corpus.TokenizerConfig{
		{StopWords: corpus.StopWordsNone},
		{Stem: true, KeepNumbers: true, MinLength: 1, Units: "window:2"},
		{Mode: corpus.ModeWhitespace},
		{Mode: corpus.ModeWhitespace, Units: "paragraph"},
		{},
	}
	toks := make([]*corpus.Tokenizer, len(cfgs))
	for i, c := range cfgs {
		var err error
		if toks[i], err = corpus.NewTokenizer(c); err != nil {
			f.Fatal(err)
		}
	}
	f.Fuzz(func(t *testing.T, text string, picks []byte, which uint8) {
		var b strings.Builder
		b.WriteString(text)
		for _, p := range picks {
			b.WriteRune(alphabet[int(p)*len(alphabet)/256])
		}
		text = strings.ToValidUTF8(b.String(), "\uFFFD")
		i := int(which) % len(toks)
		tok := toks[i]

		td := tok.Tokenize(corpus.Document{ID: "d", Text: text, Source: "fuzz.txt", Line: 1})
		for _, u := range td.Units {
			for _, w := range u {
				if w == "" || strings.ContainsFunc(w, corpus.IsSpace) || strings.ContainsFunc(w, corpus.IsIgnorable) {
					t.Fatalf("config %d: token %q of %q is empty or holds white space or an ignorable character", i, w, text)
				}
			}
		}
		docs := []corpus.TokenizedDoc{td}
		v, _, err := vocab.Build(docs, vocab.BuildOptions{})
		if td.NumTokens() == 0 {
			if !errors.Is(err, vocab.ErrEmpty) {
				t.Fatalf("config %d: Build of no token = %v; want ErrEmpty", i, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("config %d: the vocabulary refuses a token of %q: %v", i, text, err)
		}
		c, st := v.Encode(docs)
		if st.OOVTokens != 0 || st.Tokens != td.NumTokens() {
			t.Fatalf("config %d: Encode kept %d tokens of %d, %d out of vocabulary; want all", i, st.Tokens, td.NumTokens(), st.OOVTokens)
		}
		roundTrip(t, v)

		m := &topic.Model{K: 2, V: v.Len(), Vocab: v.Words(), Phi: make([]float64, 2*v.Len()), Beta: 0.01}
		for j := range m.Phi {
			m.Phi[j] = 1 / float64(v.Len())
		}
		var buf bytes.Buffer
		if err := m.Write(&buf); err != nil {
			t.Fatalf("config %d: topic Write: %v", i, err)
		}
		m2, err := topic.Read(&buf)
		if err != nil {
			t.Fatalf("config %d: topic Read of a written model: %v", i, err)
		}
		if !slices.Equal(m2.Vocab, m.Vocab) {
			t.Fatalf("config %d: model vocabulary read back as %q; want %q", i, m2.Vocab, m.Vocab)
		}
		v2, err := vocab.New(m2.Vocab)
		if err != nil {
			t.Fatalf("config %d: the vocabulary of a model file is refused: %v", i, err)
		}
		if c2, _ := v2.Encode(docs); !slices.Equal(c2.Words, c.Words) {
			t.Fatalf("config %d: the model's vocabulary encodes %v; want %v", i, c2.Words, c.Words)
		}

		// The command line's path: a file read by lines, tokenized and
		// encoded by Prepare. Readers refuse NUL bytes (a binary file).
		path := filepath.Join(t.TempDir(), "in.txt")
		if err := os.WriteFile(path, []byte(strings.ReplaceAll(text, "\x00", "")), 0o644); err != nil {
			t.Fatal(err)
		}
		_, pv, _, err := vocab.Prepare(context.Background(), []string{path}, corpus.ReadOptions{}, cfgs[i], vocab.BuildOptions{}, nil)
		switch {
		case errors.Is(err, vocab.ErrEmpty), errors.Is(err, corpus.ErrNoDocuments):
		case err != nil:
			t.Fatalf("config %d: Prepare of %q: %v", i, text, err)
		default:
			roundTrip(t, pv)
		}
	})
}

// roundTrip checks that v written to a vocabulary file reads back equal.
func roundTrip(t *testing.T, v *vocab.Vocabulary) {
	t.Helper()
	var buf bytes.Buffer
	if err := v.Write(&buf); err != nil {
		t.Fatalf("Write: %v", err)
	}
	again, err := vocab.Read(&buf, "fuzz-vocab.txt")
	if err != nil {
		t.Fatalf("Read(Write(%q)): %v", v.Words(), err)
	}
	if !slices.Equal(again.Words(), v.Words()) {
		t.Fatalf("Read(Write(v)) = %q; want %q", again.Words(), v.Words())
	}
}
