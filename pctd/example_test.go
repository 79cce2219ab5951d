package pctd_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
)

// Example simulates three parties of unequal size (1:2:3) running PC-TD's
// SSP variant for 10 EM iterations at ε = 4 per document (δ = 1e-5, documents
// clipped to 30 tokens) on a synthetic corpus of four planted topics, each
// on its own block of ten words, and prints what each party spent and the
// topics (semantic units: windows of three tokens, the default).
func Example() {
	data, _ := synth.Generate(synth.Config{K: 4, V: 40, Docs: 600, DocLen: 30, Structure: synth.Planted}, rng.Derive(1, "synth"))
	parts, _ := corpus.Split(data.Corpus, corpus.SplitSpec{Sizes: []float64{1, 2, 3}}, rng.Derive(1, "split"))
	vocab := make([]string, 40)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%02d", w)
	}
	res, err := sim.Run(context.Background(), sim.Scenario{
		Algorithm: pctd.Algorithm,
		Params:    json.RawMessage(`{"topics": 4, "rounds": 10, "epsilon": 4, "max_doc_tokens": 30}`),
		Corpora:   parts, Vocab: vocab, Seed: 7,
		Budget: accountant.Budget{Epsilon: 4, Delta: 1e-5, Unit: "document"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range res.Summary.Epsilon {
		fmt.Printf("%s spent ε = %.3g per %s in %d releases\n", e.Party, e.Epsilon, e.Unit, e.Releases)
	}
	for k := 0; k < res.Global.K; k++ {
		fmt.Printf("topic %d:", k)
		for _, w := range res.Global.TopWords(k, 4) {
			fmt.Printf(" %s", w.Word)
		}
		fmt.Println()
	}
	// Output:
	// p1 spent ε = 4 per document in 10 releases
	// p2 spent ε = 4 per document in 10 releases
	// p3 spent ε = 4 per document in 10 releases
	// topic 0: w33 w32 w38 w34
	// topic 1: w16 w15 w14 w13
	// topic 2: w26 w27 w22 w24
	// topic 3: w01 w07 w05 w00
}
