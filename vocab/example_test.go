package vocab_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/vocab"
)

func ExampleBuild() {
	tok, err := corpus.NewTokenizer(corpus.TokenizerConfig{})
	if err != nil {
		panic(err)
	}
	var docs []corpus.TokenizedDoc
	for i, text := range []string{
		"Parties train a topic model together.",
		"Each party keeps its raw text.",
		"Topic models find themes in text.",
	} {
		docs = append(docs, tok.Tokenize(corpus.Document{ID: fmt.Sprint(i), Text: text}))
	}
	v, _, err := vocab.Build(docs, vocab.BuildOptions{MinDF: 2})
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Words())

	c, st := v.Encode(docs)
	for d := range c.NumDocs() {
		fmt.Println(c.IDs[d], c.Doc(d))
	}
	fmt.Printf("skipped %v, %d tokens out of vocabulary\n", st.SkippedIDs, st.OOVTokens)
	// Output:
	// [text topic]
	// 0 [1]
	// 1 [0]
	// 2 [1 0]
	// skipped [], 8 tokens out of vocabulary
}

func ExamplePrepare() {
	dir, err := os.MkdirTemp("", "vocab-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "docs.txt")
	text := "rivers carry water to the sea\nboats sail on rivers\nthe sea is salt water\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		panic(err)
	}

	c, v, st, err := vocab.Prepare(context.Background(), []string{path},
		corpus.ReadOptions{}, corpus.TokenizerConfig{Mode: corpus.ModeWhitespace},
		vocab.BuildOptions{MinDF: 2}, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Words())
	fmt.Println(c.NumDocs(), "documents,", c.NumTokens(), "tokens")
	fmt.Println(st.Encode.OOVTokens, "tokens dropped by pruning")
	// Output:
	// [rivers sea the water]
	// 3 documents, 8 tokens
	// 7 tokens dropped by pruning
}
