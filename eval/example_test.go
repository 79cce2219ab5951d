package eval_test

import (
	"fmt"

	"github.com/fedtopic/fedtopic/eval"
)

func ExampleRecovery() {
	// Two planted topics over three words, and a learned model that found
	// them in the other order, one of them slightly blurred: Hellinger
	// distance sqrt(1 − sqrt(0.42) − sqrt(0.06) − sqrt(0.01)) = 0.0835.
	planted := []float64{
		0.7, 0.2, 0.1,
		0.1, 0.1, 0.8,
	}
	learned := []float64{
		0.1, 0.1, 0.8,
		0.6, 0.3, 0.1,
	}
	res, err := eval.Recovery(planted, learned, 2, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("assign:", res.Assign)
	fmt.Printf("distances: %.4f %.4f\n", res.Distance[0], res.Distance[1])
	fmt.Println("recovered:", res.Recovered)
	// Output:
	// assign: [1 0]
	// distances: 0.0835 0.0000
	// recovered: 2
}
