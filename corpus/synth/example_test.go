package synth_test

import (
	"fmt"

	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// A planted corpus: topic k uses only the words of the k-th block of the
// vocabulary, so a trained model can be checked against Phi.
func ExampleGenerate() {
	data, err := synth.Generate(synth.Config{K: 4, V: 40, Docs: 100, DocLen: 20, FixedLen: true, Structure: synth.Planted}, rng.Derive(1, "synth"))
	if err != nil {
		fmt.Println(err)
		return
	}
	c := data.Corpus
	fmt.Println("documents:", c.NumDocs(), "tokens:", c.NumTokens(), "vocabulary:", c.V)
	w := c.Words[0]
	fmt.Printf("first token: word %d from topic %d, p(w|z) = %.3f\n", w, data.Z[0], data.Phi[int(data.Z[0])*c.V+int(w)])
	// Output:
	// documents: 100 tokens: 2000 vocabulary: 40
	// first token: word 31 from topic 3, p(w|z) = 0.161
}
