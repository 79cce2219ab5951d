package vocab_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/vocab"
)

func TestSaveLoad(t *testing.T) {
	words := []string{"topic", "café", "東京", "don't", "a-b"}
	v, err := vocab.New(words)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "vocab.txt")
	if err := os.WriteFile(p, []byte("old content that must be replaced\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := v.Save(p); err != nil {
		t.Fatalf("Save: %v", err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(words, "\n") + "\n"; string(b) != want {
		t.Errorf("saved file = %q; want %q", b, want)
	}
	got, err := vocab.Load(p)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if !slices.Equal(got.Words(), words) {
		t.Errorf("Load(Save(v)) = %q; want %q", got.Words(), words)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory after Save holds %d entries; want only the vocabulary (no temporary files)", len(entries))
	}
	if err := v.Save(filepath.Join(dir, "missing", "v.txt")); err == nil {
		t.Error("Save into a missing directory succeeded; want an error")
	}
}

func TestRead(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{name: "plain", input: "a\nb\nc\n", want: []string{"a", "b", "c"}},
		{name: "no final newline", input: "a\nb", want: []string{"a", "b"}},
		{name: "CRLF", input: "a\r\nb\r\n", want: []string{"a", "b"}},
		{name: "byte-order mark", input: "\xEF\xBB\xBFa\nb\n", want: []string{"a", "b"}},
		{name: "inner space kept", input: "new york\n", want: []string{"new york"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := vocab.Read(strings.NewReader(tt.input), "v.txt")
			if err != nil {
				t.Fatalf("Read(%q): %v", tt.input, err)
			}
			if !slices.Equal(v.Words(), tt.want) {
				t.Errorf("Read(%q) = %q; want %q", tt.input, v.Words(), tt.want)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name  string
		input string
		msg   string
	}{
		{name: "empty file", input: "", msg: "vocab: v.txt: no words"},
		{name: "empty line", input: "a\n\nb\n", msg: "vocab: v.txt:2: empty line"},
		{name: "trailing blank line", input: "a\nb\n\n", msg: "vocab: v.txt:3: empty line"},
		{name: "duplicate", input: "a\nb\nc\nb\n", msg: `vocab: v.txt:4: word "b" repeats line 2`},
		{name: "leading space", input: "a\n b\n", msg: `vocab: v.txt:2: word " b" begins with white space (U+0020)`},
		{name: "trailing tab", input: "a\t\n", msg: `vocab: v.txt:1: word "a\t" ends with white space (U+0009)`},
		{name: "trailing narrow no-break space", input: "a\nil\u202f\n", msg: `vocab: v.txt:2: word "il\u202f" ends with white space (U+202F)`},
		{name: "leading zero-width space", input: "a\nb\n\u200bc\n", msg: `vocab: v.txt:3: word "\u200bc" begins with white space (U+200B)`},
		{name: "blank line", input: "a\n  \n", msg: "vocab: v.txt:2: word \"  \" begins with white space"},
		{name: "invalid UTF-8", input: "ok\nb\xffd\n", msg: "vocab: v.txt:2: invalid UTF-8"},
		{name: "binary", input: "\x7fELF\x02\x01\x01\x00\x00", msg: "vocab: v.txt:1: binary data"},
		{name: "carriage return", input: "a\rb\n", msg: "vocab: v.txt:1: carriage return"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := vocab.Read(strings.NewReader(tt.input), "v.txt")
			if err == nil || !strings.HasPrefix(err.Error(), tt.msg) {
				t.Errorf("Read(%q) error = %v; want one starting %q", tt.input, err, tt.msg)
			}
		})
	}
	if _, err := vocab.Load(filepath.Join(t.TempDir(), "none.txt")); err == nil || !strings.Contains(err.Error(), "none.txt") {
		t.Errorf("Load(missing) error = %v; want one naming the file", err)
	}
}

// FuzzVocabLoad checks that reading arbitrary bytes never panics, and that
// whatever reads successfully writes back to an equal vocabulary.
func FuzzVocabLoad(f *testing.F) {
	for _, s := range []string{"a\nb\n", "a\n\nb", "a\na\n", "\xEF\xBB\xBFx\r\ny", "\x00", " a", "é\n東\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := vocab.Read(bytes.NewReader(data), "fuzz.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "vocab: fuzz.txt") {
				t.Fatalf("Read error %q does not name the input", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := v.Write(&buf); err != nil {
			t.Fatal(err)
		}
		again, err := vocab.Read(&buf, "again.txt")
		if err != nil {
			t.Fatalf("Read(Write(v)): %v", err)
		}
		if !slices.Equal(again.Words(), v.Words()) {
			t.Fatalf("Read(Write(v)) = %q; want %q", again.Words(), v.Words())
		}
		if _, err := vocab.New(v.Words()); err != nil {
			t.Fatalf("New(words read from a file): %v", err)
		}
	})
}
