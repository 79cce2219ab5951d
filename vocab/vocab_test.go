package vocab_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/vocab"
)

// docs makes tokenized documents, one unit each, from space-separated words.
func docs(texts ...string) []corpus.TokenizedDoc {
	out := make([]corpus.TokenizedDoc, len(texts))
	for i, s := range texts {
		out[i] = corpus.TokenizedDoc{ID: "d" + string(rune('0'+i))}
		if f := strings.Fields(s); len(f) > 0 {
			out[i].Units = [][]string{f}
		}
	}
	return out
}

func TestNew(t *testing.T) {
	v, err := vocab.New([]string{"b", "a", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Len() != 3 || v.Word(1) != "a" {
		t.Errorf("New([b a c]): Len() = %d, Word(1) = %q; want 3, \"a\"", v.Len(), v.Word(1))
	}
	if id, ok := v.ID("c"); !ok || id != 2 {
		t.Errorf("ID(\"c\") = %d, %v; want 2, true", id, ok)
	}
	if _, ok := v.ID("z"); ok {
		t.Error("ID(\"z\") found; want absent")
	}
	w := v.Words()
	w[0] = "changed"
	if v.Word(0) != "b" {
		t.Error("Words() shares memory with the vocabulary; want a copy")
	}

	tests := []struct {
		name  string
		words []string
		msg   string
	}{
		{name: "empty word", words: []string{"a", ""}, msg: "word with id 1: empty word"},
		{name: "duplicate", words: []string{"a", "b", "a"}, msg: `word "a" is both id 0 and id 2`},
		{name: "newline", words: []string{"a\nb"}, msg: "line break"},
		{name: "padded", words: []string{" a"}, msg: `word " a" begins with white space (U+0020)`},
		{name: "narrow no-break space", words: []string{"il\u202f"}, msg: `word "il\u202f" ends with white space (U+202F)`},
		{name: "zero-width space", words: []string{"\u200bil"}, msg: "begins with white space (U+200B)"},
		{name: "invalid UTF-8", words: []string{"\xff"}, msg: "invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := vocab.New(tt.words); err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("New(%q) error = %v; want one containing %q", tt.words, err, tt.msg)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	// document frequencies: a 5, b 4, c 3, d 2, e 1, f 1; "a" twice in one
	// document still counts once.
	corpus := docs(
		"a b c d e",
		"a a b c d",
		"a b c f",
		"a b",
		"a",
	)
	tests := []struct {
		name  string
		opts  vocab.BuildOptions
		want  []string
		stats vocab.BuildStats
	}{
		{name: "defaults", want: []string{"a", "b", "c", "d", "e", "f"}, stats: vocab.BuildStats{Documents: 5, Types: 6, Size: 6}},
		{name: "min df count", opts: vocab.BuildOptions{MinDF: 2}, want: []string{"a", "b", "c", "d"}, stats: vocab.BuildStats{Documents: 5, Types: 6, BelowMinDF: 2, Size: 4}},
		{name: "min df fraction rounds up", opts: vocab.BuildOptions{MinDF: 0.5}, want: []string{"a", "b", "c"}, stats: vocab.BuildStats{Documents: 5, Types: 6, BelowMinDF: 3, Size: 3}},
		{name: "max df fraction rounds down", opts: vocab.BuildOptions{MaxDF: 0.7}, want: []string{"c", "d", "e", "f"}, stats: vocab.BuildStats{Documents: 5, Types: 6, AboveMaxDF: 2, Size: 4}},
		{name: "max df 1 keeps all", opts: vocab.BuildOptions{MaxDF: 1}, want: []string{"a", "b", "c", "d", "e", "f"}, stats: vocab.BuildStats{Documents: 5, Types: 6, Size: 6}},
		{name: "max df count", opts: vocab.BuildOptions{MaxDF: 3}, want: []string{"c", "d", "e", "f"}, stats: vocab.BuildStats{Documents: 5, Types: 6, AboveMaxDF: 2, Size: 4}},
		{name: "max size breaks ties by word", opts: vocab.BuildOptions{MaxSize: 5}, want: []string{"a", "b", "c", "d", "e"}, stats: vocab.BuildStats{Documents: 5, Types: 6, OverSize: 1, Size: 5}},
		{name: "everything", opts: vocab.BuildOptions{MinDF: 2, MaxDF: 4, MaxSize: 2}, want: []string{"b", "c"}, stats: vocab.BuildStats{Documents: 5, Types: 6, BelowMinDF: 2, AboveMaxDF: 1, OverSize: 1, Size: 2}},
		{name: "alphabetical", opts: vocab.BuildOptions{Order: vocab.OrderAlphabetical, MaxSize: 4}, want: []string{"a", "b", "c", "d"}, stats: vocab.BuildStats{Documents: 5, Types: 6, OverSize: 2, Size: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, st, err := vocab.Build(corpus, tt.opts)
			if err != nil {
				t.Fatalf("Build(%+v): %v", tt.opts, err)
			}
			if got := v.Words(); !slices.Equal(got, tt.want) {
				t.Errorf("Build(%+v) words = %q; want %q", tt.opts, got, tt.want)
			}
			if st != tt.stats {
				t.Errorf("Build(%+v) stats = %+v; want %+v", tt.opts, st, tt.stats)
			}
		})
	}
}

func TestBuildOrder(t *testing.T) {
	// df: zeta 3, beta 2, alpha 2, mu 1: frequency order breaks ties by word.
	d := docs("zeta beta", "zeta alpha beta", "zeta alpha mu")
	v, _, err := vocab.Build(d, vocab.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"zeta", "alpha", "beta", "mu"}
	if got := v.Words(); !slices.Equal(got, want) {
		t.Errorf("Build words = %q; want %q", got, want)
	}
	// The ids depend on the multiset of documents, not their order.
	slices.Reverse(d)
	v2, _, err := vocab.Build(d, vocab.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := v2.Words(); !slices.Equal(got, want) {
		t.Errorf("Build words of reversed documents = %q; want %q", got, want)
	}
}

func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name string
		docs []corpus.TokenizedDoc
		opts vocab.BuildOptions
		msg  []string
	}{
		{name: "nothing left", docs: docs("a b", "c"), opts: vocab.BuildOptions{MinDF: 2}, msg: []string{"no word is left after pruning (3 words, 2 documents; kept df in [2, 2])"}},
		{name: "empty corpus", docs: nil, msg: []string{"no word is left"}},
		{
			name: "bad word names its file and line",
			docs: []corpus.TokenizedDoc{{ID: "a", Source: "f.txt", Line: 3, Units: [][]string{{"ok"}}}, {ID: "b", Source: "f.txt", Line: 7, Units: [][]string{{"ok", "il\u202f"}}}},
			msg:  []string{`vocab: f.txt:7: word "il\u202f" ends with white space (U+202F)`},
		},
		{
			name: "bad word of a whole-file document",
			docs: []corpus.TokenizedDoc{{ID: "x.txt", Source: "dir/x.txt", Units: [][]string{{" ok"}}}},
			msg:  []string{`vocab: dir/x.txt: word " ok" begins with white space`},
		},
		{
			name: "bad word of a document without a file",
			docs: []corpus.TokenizedDoc{{ID: "d9", Units: [][]string{{"a\x00b"}}}},
			msg:  []string{`vocab: document "d9": word "a\x00b" contains a line break or NUL`},
		},
		{name: "min above max", docs: docs("a", "a b", "a b"), opts: vocab.BuildOptions{MinDF: 3, MaxDF: 2}, msg: []string{"no word is left"}},
		{
			name: "bad options reported together",
			docs: docs("a"),
			opts: vocab.BuildOptions{MinDF: 2.5, MaxDF: -1, MaxSize: -3, Order: "random"},
			msg:  []string{"min_df 2.5", "max_df -1", "max_size -3", `order "random"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := vocab.Build(tt.docs, tt.opts)
			for _, m := range tt.msg {
				if err == nil || !strings.Contains(err.Error(), m) {
					t.Errorf("Build(%+v) error = %v; want one containing %q", tt.opts, err, m)
				}
			}
		})
	}
}
