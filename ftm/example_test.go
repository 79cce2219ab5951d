package ftm_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
)

// Example simulates three parties of unequal size (1:2:3) training FTM with
// 3, 4 and 5 topics on a synthetic corpus of four planted topics, each on
// its own block of ten words, with ε = 11 per word occurrence, and prints
// what each party spent and the global model's topics (debiased for
// output, so the noise floor does not hide them).
func Example() {
	data, _ := synth.Generate(synth.Config{K: 4, V: 40, Docs: 240, DocLen: 30, Structure: synth.Planted}, rng.Derive(1, "synth"))
	parts, _ := corpus.Split(data.Corpus, corpus.SplitSpec{Sizes: []float64{1, 2, 3}}, rng.Derive(1, "split"))
	vocab := make([]string, 40)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%02d", w)
	}
	res, err := sim.Run(context.Background(), sim.Scenario{
		Algorithm: ftm.Algorithm,
		Params:    json.RawMessage(`{"epsilon": 11, "topics": [3, 4, 5], "rounds": 3, "local_iterations": 20, "top_l": 5, "xi": 0.5, "debias": "output"}`),
		Corpora:   parts, Vocab: vocab, Seed: 7,
		Budget: accountant.Budget{Epsilon: 11},
		OnRound: func(l fed.RoundLine) {
			fmt.Printf("round %d: %d parties replied\n", l.Round, len(l.Replied))
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range res.Summary.Epsilon {
		fmt.Printf("%s spent ε = %g per %s in %d release\n", e.Party, e.Epsilon, e.Unit, e.Releases)
	}
	fmt.Printf("global model: %d topics; local models: %d, %d, %d topics\n", res.Global.K, res.Locals[0].K, res.Locals[1].K, res.Locals[2].K)
	for k := 0; k < res.Global.K; k++ {
		fmt.Printf("topic %d:", k)
		for _, w := range res.Global.TopWords(k, 4) {
			fmt.Printf(" %s", w.Word)
		}
		fmt.Println()
	}
	// Output:
	// round 1: 3 parties replied
	// round 2: 3 parties replied
	// round 3: 3 parties replied
	// p1 spent ε = 11 per word occurrence in 1 release
	// p2 spent ε = 11 per word occurrence in 1 release
	// p3 spent ε = 11 per word occurrence in 1 release
	// global model: 4 topics; local models: 3, 4, 5 topics
	// topic 0: w16 w15 w13 w14
	// topic 1: w07 w05 w01 w00
	// topic 2: w26 w27 w22 w24
	// topic 3: w33 w32 w31 w38
}
