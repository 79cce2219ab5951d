package fednmf_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/sim"
)

// Example trains FedNMF with FedAdam over four clients on a synthetic
// corpus of four planted topics, each on its own block of ten words, and
// prints each topic's top words.
func Example() {
	data, _ := synth.Generate(synth.Config{K: 4, V: 40, Docs: 800, DocLen: 12, Alpha: 0.05, Structure: synth.Planted}, rng.Derive(1, "synth"))
	parts, _ := corpus.Split(data.Corpus, corpus.SplitSpec{Sizes: []float64{1, 1, 1, 1}}, rng.Derive(1, "split"))
	vocab := make([]string, 40)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%02d", w)
	}
	res, err := sim.Run(context.Background(), sim.Scenario{
		Algorithm: fednmf.Algorithm,
		Params:    json.RawMessage(`{"k": 4, "rounds": 100, "client_fraction": 0.5, "local_epochs": 2, "batch": 16, "lr": 0.5, "server_opt": "fedadam"}`),
		Corpora:   parts, Vocab: vocab, Seed: 7,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for k := range res.Global.K {
		fmt.Printf("topic %d:", k)
		for _, w := range res.Global.TopWords(k, 4) {
			fmt.Printf(" %s", w.Word)
		}
		fmt.Println()
	}
	// Output:
	// topic 0: w33 w32 w31 w38
	// topic 1: w26 w27 w22 w24
	// topic 2: w16 w15 w13 w14
	// topic 3: w07 w05 w01 w00
}
