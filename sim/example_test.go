package sim_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/sim/adlda"
)

// Example simulates three parties training AD-LDA on a synthetic corpus
// split 1:2:3, and prints what each round carried.
func Example() {
	data, _ := synth.Generate(synth.Config{K: 4, V: 40, Docs: 120, DocLen: 30, Structure: synth.Planted}, rng.Derive(1, "synth"))
	parts, _ := corpus.Split(data.Corpus, corpus.SplitSpec{Sizes: []float64{1, 2, 3}}, rng.Derive(1, "split"))
	vocab := make([]string, 40)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%02d", w)
	}
	res, err := sim.Run(context.Background(), sim.Scenario{
		Algorithm: adlda.Algorithm,
		Params:    json.RawMessage(`{"k": 4, "rounds": 3}`),
		Corpora:   parts, Vocab: vocab, Seed: 7,
		OnRound: func(l fed.RoundLine) {
			fmt.Printf("round %d: %d parties replied\n", l.Round, len(l.Replied))
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("global model: %d topics over %d words, %d local models\n", res.Global.K, res.Global.V, len(res.Locals))
	// Output:
	// round 1: 3 parties replied
	// round 2: 3 parties replied
	// round 3: 3 parties replied
	// global model: 4 topics over 40 words, 3 local models
}
