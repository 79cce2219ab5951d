package vocab_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/vocab"
	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPrepareMatchesSteps checks that the streaming pipeline gives exactly
// what ReadAll, Tokenize, Build and Encode give step by step.
func TestPrepareMatchesSteps(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.jsonl", `{"id": "a1", "label": "x", "text": "Cats chase mice. Mice fear cats!"}
{"id": "a2", "label": "y", "text": "The the the."}
{"id": "a3", "label": "x", "text": "Dogs chase cats.\n\nCats climb trees quickly."}
`)
	b := write(t, dir, "b.txt", "dogs bark at night\nmice squeak; cats purr\n")
	paths := []string{a, b}
	for _, tc := range []corpus.TokenizerConfig{{}, {Units: "window:2", Stem: true}, {Mode: corpus.ModeWhitespace, Units: "paragraph"}} {
		for _, bo := range []vocab.BuildOptions{{}, {MinDF: 2}, {MaxSize: 3, Order: vocab.OrderAlphabetical}} {
			raw, rs, err := corpus.ReadAll(context.Background(), paths, corpus.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tok, err := corpus.NewTokenizer(tc)
			if err != nil {
				t.Fatal(err)
			}
			var td []corpus.TokenizedDoc
			for _, d := range raw {
				td = append(td, tok.Tokenize(d))
			}
			wantV, bs, err := vocab.Build(td, bo)
			if err != nil {
				t.Fatal(err)
			}
			wantC, es := wantV.Encode(td)
			// Prepare lists every input as a source, even one whose
			// documents were all skipped; Encode only knows the sources
			// of the documents it kept. Here they differ at most in
			// trailing paths, so the indexes agree.
			wantC.Sources = paths

			c, v, st, err := vocab.Prepare(context.Background(), paths, corpus.ReadOptions{}, tc, bo, nil)
			if err != nil {
				t.Fatalf("Prepare(%+v, %+v): %v", tc, bo, err)
			}
			if !slices.Equal(v.Words(), wantV.Words()) {
				t.Errorf("Prepare(%+v, %+v) vocabulary = %q; want %q", tc, bo, v.Words(), wantV.Words())
			}
			if diff := cmp.Diff(wantC, c); diff != "" {
				t.Errorf("Prepare(%+v, %+v) corpus differs (-want +got):\n%s", tc, bo, diff)
			}
			wantSt := vocab.Stats{Read: rs, Build: &bs, Encode: es}
			if diff := cmp.Diff(wantSt, st); diff != "" {
				t.Errorf("Prepare(%+v, %+v) stats differ (-want +got):\n%s", tc, bo, diff)
			}
			if err := c.Validate(); err != nil {
				t.Errorf("Prepare(%+v, %+v): %v", tc, bo, err)
			}
		}
	}
}

func TestPrepareFixedVocabulary(t *testing.T) {
	dir := t.TempDir()
	p := write(t, dir, "c.txt", "alpha beta gamma\ndelta epsilon\nbeta beta zeta\n")
	fixed, err := vocab.New([]string{"zeta", "beta", "unused", "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	c, v, st, err := vocab.Prepare(context.Background(), []string{p}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, vocab.BuildOptions{MinDF: 99}, fixed)
	if err != nil {
		t.Fatalf("Prepare with a fixed vocabulary: %v", err)
	}
	if v != fixed || c.V != 4 {
		t.Errorf("Prepare returned vocabulary %v with V = %d; want the fixed one, V = 4", v, c.V)
	}
	if !slices.Equal(c.Words, []int32{3, 1, 1, 1, 0}) {
		t.Errorf("Prepare words = %v; want [3 1 1 1 0]", c.Words)
	}
	if st.Build != nil || st.Encode.OOVTokens != 3 || st.Encode.SkippedDocs != 1 || !slices.Equal(st.Encode.SkippedIDs, []string{p + ":2"}) {
		t.Errorf("Prepare stats = %+v / %+v; want no build, 3 OOV tokens, document %s:2 skipped", st.Build, st.Encode, p)
	}
}

func TestPrepareFilesSplit(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.txt", "river water flows\nwater boats float\n")
	b := write(t, dir, "b.txt", "mountain rock climbs\n")
	c, _, _, err := vocab.Prepare(context.Background(), []string{a, b}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, vocab.BuildOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Sources, []string{a, b}) || !slices.Equal(c.DocSource, []int32{0, 0, 1}) {
		t.Fatalf("Prepare sources = %v %v; want [a b] [0 0 1]", c.Sources, c.DocSource)
	}
	parties, err := corpus.Split(c, corpus.SplitSpec{Method: corpus.SplitFiles}, rng.Derive(1))
	if err != nil {
		t.Fatalf("Split(files): %v", err)
	}
	if len(parties) != 2 || parties[0].NumDocs() != 2 || parties[1].NumDocs() != 1 || parties[1].V != c.V {
		t.Errorf("Split(files) gives %d parties; want 2 with 2 and 1 documents on the shared vocabulary", len(parties))
	}
}

func TestPrepareErrors(t *testing.T) {
	dir := t.TempDir()
	good := write(t, dir, "good.txt", "river water\n")
	blank := write(t, dir, "blank.txt", "\n\n")
	stop := write(t, dir, "stop.txt", "the and of\nit is\n")
	bad := write(t, dir, "bad.jsonl", `{"text": "fine"}`+"\n"+`{"txt": "typo"}`+"\n")
	fixed, err := vocab.New([]string{"nothing", "matches"})
	if err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		ctx   context.Context
		paths []string
		tc    corpus.TokenizerConfig
		bo    vocab.BuildOptions
		fixed *vocab.Vocabulary
		is    error
		msg   string
	}{
		{name: "no paths", paths: nil, msg: "no input given"},
		{name: "no documents", paths: []string{blank}, is: corpus.ErrNoDocuments, msg: "2 empty"},
		{name: "only stop words", paths: []string{stop}, is: vocab.ErrEmpty, msg: "no word is left"},
		{name: "nothing in the fixed vocabulary", paths: []string{good}, fixed: fixed, is: vocab.ErrEmpty, msg: "1 documents, 2 tokens out of vocabulary"},
		{name: "bad record", paths: []string{good, bad}, is: corpus.ErrSyntax, msg: "bad.jsonl:2"},
		{name: "missing file", paths: []string{filepath.Join(dir, "nope.txt")}, msg: "nope.txt"},
		{name: "bad tokenizer", paths: []string{good}, tc: corpus.TokenizerConfig{Mode: "x"}, msg: `mode "x" unknown`},
		{name: "bad build options", paths: []string{good}, bo: vocab.BuildOptions{MaxSize: -1}, msg: "max_size -1"},
		{name: "canceled", ctx: canceled, paths: []string{good}, is: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			_, _, _, err := vocab.Prepare(ctx, tt.paths, corpus.ReadOptions{}, tt.tc, tt.bo, tt.fixed)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Prepare error = %v; want %v containing %q", err, tt.is, tt.msg)
			}
		})
	}
}
