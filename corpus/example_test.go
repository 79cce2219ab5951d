package corpus_test

import (
	"fmt"
	"strings"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
)

func ExampleNewReader() {
	input := `{"id": "d1", "label": "pets", "text": "Cats purr."}
{"text": "Dogs bark."}

`
	r, err := corpus.NewReader(strings.NewReader(input), "pets.jsonl", corpus.ReadOptions{})
	if err != nil {
		panic(err)
	}
	for d, err := range r.All() {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s [%s] %q\n", d.ID, d.Label, d.Text)
	}
	fmt.Printf("%+v\n", r.Stats())
	// Output:
	// d1 [pets] "Cats purr."
	// pets.jsonl:2 [] "Dogs bark."
	// {Documents:2 SkippedEmpty:1 SkippedInvalid:0 Bytes:76}
}

func ExampleTokenizer_Units() {
	text := "The Federation trains topic models. Raw text never leaves a party!"
	for _, cfg := range []corpus.TokenizerConfig{
		{}, // unicode, English stop words, sentences
		{Units: "window:3", Stem: true},
		{Mode: corpus.ModeWhitespace},
	} {
		tok, err := corpus.NewTokenizer(cfg)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q\n", tok.Units(text))
	}
	// Output:
	// [["federation" "trains" "topic" "models"] ["raw" "text" "leaves" "party"]]
	// [["feder" "train" "topic"] ["model"] ["raw" "text" "leav"] ["parti"]]
	// [["The" "Federation" "trains" "topic" "models."] ["Raw" "text" "never" "leaves" "a" "party!"]]
}

func ExampleSplit() {
	// Six documents with labels a, a, b, b, b, c (word ids do not matter here).
	c := &corpus.Corpus{
		Words:    []int32{0, 1, 2, 0, 1, 2},
		DocStart: []int{0, 1, 2, 3, 4, 5, 6},
		IDs:      []string{"d0", "d1", "d2", "d3", "d4", "d5"},
		Labels:   []string{"a", "a", "b", "b", "b", "c"},
		V:        3,
	}
	spec, err := corpus.ParseSplit("labels:sizes=1,1")
	if err != nil {
		panic(err)
	}
	parties, err := corpus.Split(c, spec, rng.Derive(42, "split"))
	if err != nil {
		panic(err)
	}
	for p, pc := range parties {
		fmt.Println(p, pc.IDs, pc.Labels)
	}
	// Output:
	// 0 [d2 d3 d4] [b b b]
	// 1 [d0 d1 d5] [a a c]
}
