package vocabround_test

import (
	"fmt"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/sim/vocabround"
)

// Example selects one party's words privately: words in many of its
// documents are released, a word in a single document is not.
func Example() {
	p := vocabround.Params{Selection: privacy.PartitionSelectionConfig{Epsilon: 4, Delta: 1e-6, MaxWordsPerDoc: 10}}
	var docs [][]string
	for d := range 500 {
		docs = append(docs, []string{"patient", "dose", fmt.Sprintf("name-%d", d)})
	}
	l, err := vocabround.NewLearner(p, docs, rng.Derive(1, "example"))
	if err != nil {
		fmt.Println(err)
		return
	}
	step, _ := l.Learn(1, nil)
	words, _ := vocabround.Decode(step.Payload, p)
	fmt.Println("released:", words)
	fmt.Printf("cost: %s ε = %g, δ = %g per %s\n", step.Spent[0].Mechanism, step.Spent[0].Epsilon, step.Spent[0].Delta, step.Spent[0].Unit)
	var _ fed.Learner = l
	// Output:
	// released: [dose patient]
	// cost: partition-selection ε = 4, δ = 1e-06 per document
}
