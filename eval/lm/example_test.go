package lm_test

import (
	"context"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/eval/lm"
	"github.com/fedtopic/fedtopic/topic"
)

// Example trains a bigram model on three documents over the words a, b, c
// and d (d never seen), and adapts it with a two-topic model. Scored on
// its own training documents, the n-gram model is hard to improve on.
func Example() {
	docs := &corpus.Corpus{V: 4, Words: []int32{0, 1, 0, 1, 2, 1, 0}, DocStart: []int{0, 2, 5, 7}}
	ng, err := lm.Train(context.Background(), docs, lm.Config{Order: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("P(b|a) = %.3f, P(d|a) = %.3f\n", ng.Prob([]int32{0}, 1), ng.Prob([]int32{0}, 3))

	topics := &topic.Model{K: 2, V: 4, Phi: []float64{
		0.4, 0.4, 0.1, 0.1, // topic 0: a and b
		0.1, 0.1, 0.4, 0.4, // topic 1: c and d
	}}
	a := &lm.Adapted{NGram: ng, Topics: topics, Lambda: 0.1}
	dist, err := a.Dist([]int32{0})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("adapted P(·|a) = %.3f\n", dist)
	scores, err := lm.Evaluate(context.Background(), ng, topics, docs, []float64{0, 0.1}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range scores {
		fmt.Printf("λ = %.1f: perplexity %.3f over %d tokens\n", s.Lambda, s.Perplexity, s.Tokens)
	}
	// Output:
	// P(b|a) = 0.869, P(d|a) = 0.006
	// adapted P(·|a) = [0.106 0.813 0.056 0.025]
	// λ = 0.0: perplexity 1.817 over 7 tokens
	// λ = 0.1: perplexity 1.914 over 7 tokens
}
