package lda_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/lda"
)

// Train a model on a synthetic corpus with three planted topics (words 0–9,
// 10–19 and 20–29) and print the top words of every topic.
func ExampleTrain() {
	data, err := synth.Generate(synth.Config{K: 3, V: 30, Docs: 300, DocLen: 30, Structure: synth.Planted}, rng.Derive(1, "synth"))
	if err != nil {
		fmt.Println(err)
		return
	}
	model, err := lda.Train(context.Background(), data.Corpus, lda.Config{K: 3, Iterations: 200, Seed: 7}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for k := range model.K {
		row := model.Row(k)
		words := make([]int, model.V)
		for w := range words {
			words[w] = w
		}
		slices.SortStableFunc(words, func(a, b int) int {
			switch {
			case row[a] > row[b]:
				return -1
			case row[a] < row[b]:
				return 1
			}
			return 0
		})
		top := slices.Clone(words[:5])
		slices.Sort(top)
		fmt.Println("topic", k, "top words:", top)
	}
	// Output:
	// topic 0 top words: [0 1 5 7 8]
	// topic 1 top words: [22 24 26 27 28]
	// topic 2 top words: [13 14 15 16 18]
}
