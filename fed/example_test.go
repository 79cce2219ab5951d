package fed_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

// Example runs a three-party federation of the test algorithm Sum in one
// process: a coordinator, the in-process transport, and a party per id,
// each with its own ledger.
func Example() {
	sc := fedtest.Scenario{Parties: 3, Rounds: 2, Epsilon: 1, Seed: 1}
	setup := sc.Setup()
	agg, _ := fedtest.Sum.NewAggregator(setup)
	val, _ := fedtest.Sum.NewValidator(setup)
	coord, err := fed.NewCoordinator(sc.CoordinatorConfig(), agg, val, fed.CoordinatorOptions{
		OnRound: func(r fed.RoundRecord) { fmt.Printf("round %d: updates from %v\n", r.Round, r.Replied) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	net, _ := inproc.New(coord, inproc.Faults{})
	ctx := context.Background()
	var wg sync.WaitGroup
	ledgers := make([]*fedtest.Ledger, len(setup.Parties))
	for i, id := range setup.Parties {
		learner, _ := fedtest.Sum.NewLearner(setup, i, sc.Corpus(i))
		ledgers[i], _ = fedtest.OpenLedger(10, "") // ε budget 10, in memory
		party, err := fed.NewParty(fed.PartyConfig{Run: setup.Run, ID: id, Algorithm: fedtest.SumName}, learner, ledgers[i], net.Dial(id), fed.PartyOptions{})
		if err != nil {
			fmt.Println(err)
			return
		}
		wg.Go(func() {
			if _, err := party.Run(ctx); err != nil {
				fmt.Println(id, err)
			}
		})
	}
	res, err := coord.Run(ctx)
	wg.Wait()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("committed rounds:", res.Rounds)
	for i, l := range ledgers {
		fmt.Printf("%s spent ε = %g\n", setup.Parties[i], l.Spent())
	}
	// Output:
	// round 1: updates from [p1 p2 p3]
	// round 2: updates from [p1 p2 p3]
	// committed rounds: 2
	// p1 spent ε = 2
	// p2 spent ε = 2
	// p3 spent ε = 2
}
