package fedtest_test

import (
	"context"
	"fmt"

	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
)

// Example plays a whole scenario over the in-process transport, as an
// engine test would, and reports what each round used.
func Example() {
	sc := fedtest.Scenario{Parties: 3, Rounds: 2, Epsilon: 1, Seed: 7}
	out, err := fedtest.Play(context.Background(), fedtest.InProc(inproc.Faults{}), sc)
	if err != nil { // in a test: out := fedtest.Run(t, fedtest.InProc(inproc.Faults{}), sc)
		fmt.Println(err)
		return
	}
	for _, r := range out.Records {
		fmt.Printf("round %d: %v\n", r.Round, r.Replied)
	}
	fmt.Println("charges per party:", len(out.Ledgers[0]), len(out.Ledgers[1]), len(out.Ledgers[2]))
	// Output:
	// round 1: [p1 p2 p3]
	// round 2: [p1 p2 p3]
	// charges per party: 2 2 2
}
