package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

// TestTrainUnicodeSpaces trains on French text with a narrow no-break space
// before "?" and on text full of other space and format characters, in
// both tokenizer modes: training succeeds, the words hold no white space or
// format character, and the saved vocabulary loads back as the model's.
func TestTrainUnicodeSpaces(t *testing.T) {
	dir := t.TempDir()
	text := "Quelle heure est-il\u202f? Il est midi\n" +
		"\ufeffIl fait beau\u00a0: le soleil brille\u202f!\n" +
		"le so\u00adleil et la lu\u200dne\u200bsont là\u2009; il est midi\n"
	in := filepath.Join(dir, "fr.txt")
	if err := os.WriteFile(in, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want []string // words the vocabulary must hold
	}{
		{name: "unicode", args: []string{"--stopwords", "none"}, want: []string{"il", "est", "midi", "soleil", "lune", "sont"}},
		{name: "whitespace", args: []string{"--tokenizer", "whitespace"}, want: []string{"est-il", "?", "Il", "soleil", "lune", "sont", "!", "midi"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.name+".model")
			vf := filepath.Join(dir, tt.name+".vocab")
			args := append([]string{"train", "--corpus", in, "--topics", "2", "--iterations", "10", "--seed", "1", "--workers", "1",
				"--save-vocab", vf, "--out", out}, tt.args...)
			if _, stderr, err := runCmd(t, args...); err != nil {
				t.Fatalf("run(%q) = %v; want success; stderr:\n%s", args, err, stderr)
			}
			m, err := topic.Load(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range m.Vocab {
				if strings.ContainsFunc(w, corpus.IsSpace) || strings.ContainsFunc(w, corpus.IsIgnorable) {
					t.Errorf("model word %q holds white space or a format character", w)
				}
			}
			for _, w := range tt.want {
				if !slices.Contains(m.Vocab, w) {
					t.Errorf("model vocabulary %q lacks %q", m.Vocab, w)
				}
			}
			v, err := vocab.Load(vf)
			if err != nil {
				t.Fatalf("vocab.Load(--save-vocab file): %v", err)
			}
			if !slices.Equal(v.Words(), m.Vocab) {
				t.Errorf("saved vocabulary %q; want the model's %q", v.Words(), m.Vocab)
			}
			if _, stderr, err := runCmd(t, "eval", "--model", out, "--corpus", in); err != nil {
				t.Errorf("eval of the training text: %v; stderr:\n%s", err, stderr)
			}
		})
	}
}

// TestBadWordNamesItsFile checks that a vocabulary file whose word ends in
// a narrow no-break space is refused with its file and line.
func TestBadWordNamesItsFile(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "words.txt")
	if err := os.WriteFile(vf, []byte("apple\nil\u202f\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCmd(t, "train", "--corpus", "testdata/three.txt", "--vocab", vf, "--topics", "2", "--iterations", "5", "--out", filepath.Join(dir, "m.model"))
	want := vf + `:2: word "il\u202f" ends with white space (U+202F)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("train --vocab with a padded word: error %v; want one containing %q", err, want)
	}
}
