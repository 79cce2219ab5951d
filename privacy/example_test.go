package privacy_test

import (
	"fmt"

	"github.com/fedtopic/fedtopic/privacy"
)

func ExampleLaplace() {
	m, err := privacy.NewLaplace(privacy.LaplaceConfig{Epsilon: 1})
	if err != nil {
		panic(err)
	}
	// A seeded source reproduces the example; real releases use
	// privacy.NewSecureSource().
	src := privacy.NewSeededSource(7)
	counts := []float64{12, 0, 3}
	ev, err := m.Release(src.Stream("party", 1, "round", 0), counts)
	if err != nil {
		panic(err)
	}
	fmt.Println("granularity:", m.Granularity())
	fmt.Println("noisy counts:", counts)
	fmt.Printf("event: %s, ε = %g per %s\n", ev.Mechanism, ev.Epsilon, ev.Unit)
	// Output:
	// granularity: 0.0625
	// noisy counts: [12.75 -0.0625 3.0625]
	// event: laplace, ε = 1 per word occurrence
}

func ExampleThresholdedLaplace() {
	t, err := privacy.NewThresholdedLaplace(privacy.ThresholdedLaplaceConfig{Epsilon: 11, Threshold: 0.2, Vocab: 20000})
	if err != nil {
		panic(err)
	}
	src := privacy.NewSeededSource(7)
	v := t.Draw(src.Stream("token", 0), 1234, nil)
	fmt.Printf("q = %.4f, %d entries, smallest value %g\n", t.SurvivalProb(), len(v), t.MinValue())
	fmt.Println("first entries:", v[:3])
	fmt.Println("compact bytes:", len(t.AppendCompact(nil, v)))
	// Output:
	// q = 0.0547, 1078 entries, smallest value 0.203125
	// first entries: [{40 0.23046875} {45 0.41796875} {58 0.46484375}]
	// compact bytes: 2165
}

func ExamplePartitionSelection() {
	p, err := privacy.NewPartitionSelection(privacy.PartitionSelectionConfig{Epsilon: 1, Delta: 1e-6, MaxWordsPerDoc: 5})
	if err != nil {
		panic(err)
	}
	var docs [][]string
	for i := 0; i < 200; i++ {
		docs = append(docs, []string{"topic", "model", fmt.Sprintf("name%d", i)})
	}
	words, ev := p.Select(privacy.NewSeededSource(7).Stream("vocab"), docs)
	fmt.Println("threshold:", p.Threshold())
	fmt.Println("released:", words)
	fmt.Printf("event: %s, ε = %g, δ = %g per %s\n", ev.Mechanism, ev.Epsilon, ev.Delta, ev.Unit)
	// Output:
	// threshold: 76
	// released: [{model 199} {topic 202}]
	// event: partition-selection, ε = 1, δ = 1e-06 per document
}
