package adlda_test

import (
	"fmt"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/sim/adlda"
)

// Example plays one party and the coordinator of AD-LDA by hand: the
// party's first update carries its counts, later ones only their change.
func Example() {
	setup := fed.Setup{Run: "r", Parties: []string{"p1"}, Vocab: []string{"apple", "pear", "plum"}, Seed: 1,
		Params: []byte(`{"k": 2, "rounds": 2}`)}
	docs := &corpus.Corpus{V: 3, Words: []int32{0, 1, 1, 2, 2, 2}, DocStart: []int{0, 3, 6}}
	learner, _ := adlda.Algorithm.NewLearner(setup, 0, docs)
	agg, _ := adlda.Algorithm.NewAggregator(setup)
	step, _ := agg.Init()
	for round := 1; !step.Done; round++ {
		up, err := learner.Learn(round, step.Payload)
		if err != nil {
			fmt.Println(err)
			return
		}
		step, _ = agg.Aggregate(round, []fed.Update{{Party: 0, ID: "p1", Payload: up.Payload}})
		fmt.Printf("round %d: update of %d bytes, broadcast of %d bytes\n", round, len(up.Payload), len(step.Payload))
	}
	m, _ := agg.(fed.Modeler).Model()
	fmt.Printf("model: %d topics over %v\n", m.K, m.Vocab)
	// Output:
	// round 1: update of 10 bytes, broadcast of 10 bytes
	// round 2: update of 4 bytes, broadcast of 10 bytes
	// model: 2 topics over [apple pear plum]
}
