package fedlda_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/fedlda"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
)

// Example simulates three parties whose 600 users each hold one document
// of a synthetic corpus with four planted topics, each on its own block of
// ten words. Every user sends l = ⌈0.7·12⌉ = 9 tuples per iteration with
// the word perturbed by kRR at ε = 6 per tuple (it keeps the true word with
// probability e⁶/(e⁶ + 39) = 0.91), so forty iterations cost each user
// 40·9·6 = 2160 by basic composition: local privacy is expensive.
func Example() {
	data, _ := synth.Generate(synth.Config{K: 4, V: 40, Docs: 600, DocLen: 12, Structure: synth.Planted}, rng.Derive(1, "synth"))
	parts, _ := corpus.Split(data.Corpus, corpus.SplitSpec{Sizes: []float64{1, 1, 1}}, rng.Derive(1, "split"))
	vocab := make([]string, 40)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%02d", w)
	}
	res, err := sim.Run(context.Background(), sim.Scenario{
		Algorithm: fedlda.Algorithm,
		Params:    json.RawMessage(`{"k": 4, "rounds": 40, "mechanism": "krr", "epsilon": 6, "max_doc_tokens": 12}`),
		Corpora:   parts, Vocab: vocab, Seed: 7,
		Budget: accountant.Budget{Epsilon: 2160, Unit: "document"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range res.Summary.Epsilon {
		fmt.Printf("%s spent ε = %g per %s in %d releases\n", e.Party, e.Epsilon, e.Unit, e.Releases)
	}
	for k := 0; k < res.Global.K; k++ {
		fmt.Printf("topic %d:", k)
		for _, w := range res.Global.TopWords(k, 5) {
			fmt.Printf(" %s", w.Word)
		}
		fmt.Println()
	}
	// Output:
	// p1 spent ε = 2160 per document in 360 releases
	// p2 spent ε = 2160 per document in 360 releases
	// p3 spent ε = 2160 per document in 360 releases
	// topic 0: w26 w27 w22 w24 w28
	// topic 1: w16 w13 w15 w14 w18
	// topic 2: w33 w31 w32 w34 w38
	// topic 3: w07 w05 w01 w00 w08
}
