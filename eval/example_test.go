package eval_test

import (
	"context"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/topic"
)

func ExampleRecovery() {
	// Two planted topics over three words, and a learned model that found
	// them in the other order, one of them slightly blurred: Hellinger
	// distance sqrt(1 − sqrt(0.42) − sqrt(0.06) − sqrt(0.01)) = 0.0835.
	planted := []float64{
		0.7, 0.2, 0.1,
		0.1, 0.1, 0.8,
	}
	learned := []float64{
		0.1, 0.1, 0.8,
		0.6, 0.3, 0.1,
	}
	res, err := eval.Recovery(planted, learned, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("assign:", res.Assign)
	fmt.Printf("distances: %.4f %.4f\n", res.Distance[0], res.Distance[1])
	fmt.Println("recovered:", res.Recovered)
	// Output:
	// assign: [1 0]
	// distances: 0.0835 0.0000
	// recovered: 2
}

func ExamplePerplexity() {
	// Two topics with disjoint words: the fold-in sampler's assignments
	// are forced, so the result does not depend on the seed.
	m := &topic.Model{
		K: 2, V: 4,
		Phi:   []float64{0.5, 0.5, 0, 0, 0, 0, 0.5, 0.5},
		Vocab: []string{"apple", "pear", "car", "bus"},
		Alpha: []float64{1, 1},
	}
	// Tokens at even positions are observed, odd positions held out.
	test := &corpus.Corpus{V: 4, Words: []int32{0, 2, 1, 3}, DocStart: []int{0, 4}}
	res, err := eval.Perplexity(context.Background(), m, test, topic.InferConfig{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("perplexity %.2f over %d held-out tokens, log-likelihood %.4f\n",
		res.Perplexity, res.HeldOutTokens, res.LogLikelihood)
	// Output:
	// perplexity 8.00 over 2 held-out tokens, log-likelihood -4.1589
}

func ExampleNPMI() {
	// Four documents over the words 0 = "bank", 1 = "loan", 2 = "river".
	ref := &corpus.Corpus{
		V:        3,
		Words:    []int32{0, 1, 0, 1, 0, 2, 2},
		DocStart: []int{0, 2, 4, 6, 7},
	}
	topics := [][]int32{{0, 1}, {1, 2}} // "bank loan", "loan river"
	res, err := eval.NPMI(topics, ref)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("per topic %.3f, mean %.3f\n", res.PerTopic, res.Mean)
	// Output:
	// per topic [0.415 -1.000], mean -0.292
}
