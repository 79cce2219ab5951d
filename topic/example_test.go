package topic_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// fruitAndCars is a two-topic model over six words.
func fruitAndCars() *topic.Model {
	return &topic.Model{
		K: 2, V: 6,
		Phi: []float64{
			0.4, 0.3, 0.2, 0.05, 0.03, 0.02, // fruit
			0.02, 0.03, 0.05, 0.2, 0.3, 0.4, // vehicles
		},
		Vocab: []string{"apple", "pear", "plum", "car", "bus", "train"},
		Alpha: []float64{0.5, 0.5},
		Beta:  0.01,
		Prov:  topic.Provenance{Method: "lda", Seed: 7, Iterations: 200},
	}
}

func ExampleModel_TopWords() {
	m := fruitAndCars()
	for k := range m.K {
		fmt.Print("topic ", k, ":")
		for _, wp := range m.TopWords(k, 3) {
			fmt.Printf(" %s (%.2f)", wp.Word, wp.Prob)
		}
		fmt.Println()
	}
	// Output:
	// topic 0: apple (0.40) pear (0.30) plum (0.20)
	// topic 1: train (0.40) bus (0.30) car (0.20)
}

func ExampleModel_Infer() {
	m := fruitAndCars()
	docs := &corpus.Corpus{
		V:        6,
		Words:    []int32{0, 1, 0, 2, 5, 4, 5, 3, 3, 0},
		DocStart: []int{0, 4, 10}, // "apple pear apple plum", "train bus train car car apple"
	}
	theta, err := m.Infer(context.Background(), docs, topic.InferConfig{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	for d := range docs.NumDocs() {
		fmt.Printf("document %d: fruit %.2f, vehicles %.2f\n", d, theta[d*2], theta[d*2+1])
	}
	// Output:
	// document 0: fruit 0.89, vehicles 0.11
	// document 1: fruit 0.19, vehicles 0.81
}

func ExampleWriteJSON() {
	m := &topic.Model{K: 1, V: 2, Phi: []float64{0.75, 0.25}, Vocab: []string{"yes", "no"}}
	if err := topic.WriteJSON(os.Stdout, m); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"vocab": ["yes","no"],
	// "beta": 0,
	// "topic_word": [
	// [0.75,0.25]
	// ]}
}

func ExampleSave() {
	dir, err := os.MkdirTemp("", "fedtopic-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.ftm")
	if err := topic.Save(path, fruitAndCars()); err != nil {
		fmt.Println(err)
		return
	}
	m, err := topic.Load(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.K, "topics,", m.V, "words, method", m.Prov.Method, "seed", m.Prov.Seed)
	// Output:
	// 2 topics, 6 words, method lda seed 7
}
