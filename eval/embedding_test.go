package eval

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadEmbeddings(t *testing.T) {
	vocab := []string{"a", "b", "c", "new york", "zero"}
	tests := []struct {
		name string
		in   string
	}{
		{name: "GloVe", in: "b 0 2\nx 5 5\na 3 0\nc 1 1\nnew york 1 -1\nzero 0 0\n"},
		{name: "word2vec header, tabs, CRLF, no final newline", in: "6 2\r\nb\t0 2\r\nx 5 5\r\na 3  0\r\nc 1 1\r\nnew york 1 -1\r\nzero 0 0"},
		{name: "duplicate keeps first", in: "a 1 0\nb 0 1\nc 1 1\na 0 1\nnew york 1 -1\n"},
	}
	s := 1 / math.Sqrt(2)
	want := map[string][]float32{
		"a": {1, 0}, "b": {0, 1}, "c": {float32(s), float32(s)}, "new york": {float32(s), float32(-s)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := ReadEmbeddings(strings.NewReader(tt.in), vocab)
			if err != nil {
				t.Fatalf("ReadEmbeddings: %v", err)
			}
			if e.Dim != 2 || e.Covered() != 4 {
				t.Errorf("ReadEmbeddings dim, covered = %d, %d; want 2, 4", e.Dim, e.Covered())
			}
			for w, word := range vocab {
				got, ok := e.Vector(w)
				if ok != (want[word] != nil) {
					t.Errorf("Vector(%q) ok = %v; want %v", word, ok, want[word] != nil)
				}
				if diff := cmp.Diff(want[word], got, cmp.Comparer(func(a, b float32) bool { return math.Abs(float64(a-b)) < 1e-7 })); ok && diff != "" {
					t.Errorf("Vector(%q) (-want +got):\n%s", word, diff)
				}
			}
		})
	}
}

func TestReadEmbeddingsErrors(t *testing.T) {
	vocab := []string{"a", "b"}
	tests := []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: "no vectors"},
		{name: "short line", in: "a 1 2 3\nb 1 2\n", want: "line 2: 2 values, want 3"},
		{name: "word only", in: "a\n", want: "line 1: a word and no vector"},
		{name: "NaN", in: "x 1 1\na 1 NaN\n", want: `line 2: word "a": value 2 ("NaN") is not a finite number`},
		{name: "bad number", in: "b 1 x1\n", want: `value 2 ("x1")`},
		{name: "bad header", in: "3 0\n", want: "header dimension 0"},
		{name: "huge header", in: "1 1000000000\na 1 2\n", want: "line 2: 2 values, want 1000000000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadEmbeddings(strings.NewReader(tt.in), vocab)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadEmbeddings(%q) error = %v; want one containing %q", tt.in, err, tt.want)
			}
		})
	}
	path := filepath.Join(t.TempDir(), "vec.txt")
	if err := os.WriteFile(path, []byte("a 1\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadEmbeddings(path, vocab); err == nil || !strings.Contains(err.Error(), path+": line 2") {
		t.Errorf("LoadEmbeddings error = %v; want one naming %s line 2", err, path)
	}
}

func TestReadEmbeddingsExtremeValues(t *testing.T) {
	// Squaring 1e300 overflows and squaring 1e-300 underflows; the unit
	// vectors must come out right anyway.
	e, err := ReadEmbeddings(strings.NewReader("a 1e300 1e300\nb -1e-300 0\n"), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	s := float32(1 / math.Sqrt2)
	for w, want := range [][]float32{{s, s}, {-1, 0}} {
		if got, ok := e.Vector(w); !ok || !slices.Equal(got, want) {
			t.Errorf("Vector(%d) = %v, %v; want %v, true", w, got, ok, want)
		}
	}
}

func TestReadEmbeddingsLongLine(t *testing.T) {
	// A 300,000-dimensional vector is a line far longer than the reader's
	// buffer.
	const dim = 300000
	var b strings.Builder
	b.WriteString("a")
	for range dim {
		b.WriteString(" 1")
	}
	b.WriteString("\nb")
	for i := range dim {
		if i == 0 {
			b.WriteString(" 1")
		} else {
			b.WriteString(" 0")
		}
	}
	e, err := ReadEmbeddings(strings.NewReader(b.String()), []string{"a", "b"})
	if err != nil {
		t.Fatalf("ReadEmbeddings(long lines): %v", err)
	}
	got, err := EmbeddingCoherence([][]int32{{0, 1}}, e)
	if want := 1 / math.Sqrt(dim); err != nil || math.Abs(got.Mean-want) > 1e-6 {
		t.Errorf("EmbeddingCoherence = %v, %v; want mean %v", got, err, want)
	}
}

func TestEmbeddingCoherenceHandComputed(t *testing.T) {
	// a = (1, 0), b = (0, 1), c = (1, 1): cos(a,b) = 0, cos(a,c) = cos(b,c)
	// = 1/√2, so topic [a, b, c] scores (0 + 2/√2)/3 = √2/3. Topic [a, d,
	// b]: d has no vector, its two pairs are skipped, leaving cos(a,b) = 0.
	// Topic [d, c] has no scorable pair.
	e, err := ReadEmbeddings(strings.NewReader("a 1 0\nb 0 1\nc 1 1\n"), []string{"a", "b", "c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := EmbeddingCoherence([][]int32{{0, 1, 2}, {0, 3, 1}, {3, 2}}, e)
	if err != nil {
		t.Fatalf("EmbeddingCoherence: %v", err)
	}
	want := Coherence{
		Mean:         math.Sqrt2 / 3 / 2,
		PerTopic:     []float64{math.Sqrt2 / 3, 0, 0},
		TopN:         3,
		Unscored:     []int{2},
		SkippedPairs: 3,
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-7 })); diff != "" {
		t.Errorf("EmbeddingCoherence (-want +got):\n%s", diff)
	}
	if _, err := EmbeddingCoherence([][]int32{{4, 0}}, e); err == nil {
		t.Error("EmbeddingCoherence(word id 4 of 4) = nil error; want an error")
	}
}

func FuzzReadEmbeddings(f *testing.F) {
	f.Add("a 1 0\nb 0 1\n")
	f.Add("2 2\na 1 0\nnew york 0 1\n")
	f.Add("a 1e400 0\n")
	f.Add("a 1e300 1e300\nb -1e-300 0\n")
	f.Add("2 444444444\na 1 0\n")
	vocab := []string{"a", "b", "new york"}
	f.Fuzz(func(t *testing.T, in string) {
		e, err := ReadEmbeddings(strings.NewReader(in), vocab)
		if err != nil {
			return
		}
		for w := range vocab {
			v, ok := e.Vector(w)
			if !ok {
				continue
			}
			norm := 0.0
			for _, x := range v {
				norm += float64(x) * float64(x)
			}
			if math.Abs(norm-1) > 1e-5 {
				t.Fatalf("vector of %q has squared norm %v; want 1", vocab[w], norm)
			}
		}
	})
}
