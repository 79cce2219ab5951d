package accountant_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

func ExampleGaussianSigma() {
	sigma, err := accountant.GaussianSigma(1, 1e-5, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("σ = %.4f for (ε, δ) = (1, 1e-5)\n", sigma)
	// Output:
	// σ = 3.7306 for (ε, δ) = (1, 1e-5)
}

func ExampleCompose() {
	// PC-TD: 10 iterations of Gaussian noise σ = 5 on counts, one word
	// occurrence at a time.
	round := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: 5, Sensitivity: 1, Unit: "word occurrence", Count: 10}
	c, err := accountant.Compose([]privacy.Event{round}, 1e-5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("ε = %.4f, δ = %g by %s (μ = %.4f)\n", c.Epsilon, c.Delta, c.Accountant, c.Mu)
	// The same at the level of a document of at most 200 words.
	doc, err := accountant.Group(round, 200, "document")
	if err != nil {
		panic(err)
	}
	cd, err := accountant.Compose([]privacy.Event{doc}, 1e-5)
	if err != nil {
		panic(err)
	}
	fmt.Printf("per document: ε = %.1f\n", cd.Epsilon)
	// Output:
	// ε = 2.5944, δ = 1e-05 by gdp (μ = 0.6325)
	// per document: ε = 8538.5
}

func ExampleLedger() {
	dir, err := os.MkdirTemp("", "ledger-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	led, err := accountant.OpenLedger(filepath.Join(dir, "party-1.ledger"), accountant.Budget{Epsilon: 1, Delta: 1e-6, Unit: "document"})
	if err != nil {
		panic(err)
	}
	defer led.Close()
	release := []privacy.Event{{Mechanism: privacy.MechanismLaplace, Epsilon: 0.4, Sensitivity: 1, Unit: "document", Count: 1}}
	for round := range 3 {
		if err := led.Check(release); err != nil { // before drawing noise
			fmt.Println("round", round, "refused:", errors.Is(err, accountant.ErrBudgetExhausted))
			continue
		}
		// ... draw the noise, build the update ...
		if err := led.Charge(context.Background(), fmt.Sprintf("run-1/round-%d", round), release); err != nil {
			panic(err)
		}
		// ... only now send the update.
		fmt.Printf("round %d charged, total ε = %.1f\n", round, led.Spent().Epsilon)
	}
	// Output:
	// round 0 charged, total ε = 0.4
	// round 1 charged, total ε = 0.8
	// round 2 refused: true
}
