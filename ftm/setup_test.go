package ftm

import (
	"fmt"

	"github.com/fedtopic/fedtopic/fed"
)

// testSetup returns a Setup of the given number of parties over v words
// w0 … with params as the algorithm's parameters.
func testSetup(parties, v int, params string) fed.Setup {
	s := fed.Setup{Run: "test", Seed: 1, Params: []byte(params)}
	for p := 0; p < parties; p++ {
		s.Parties = append(s.Parties, fmt.Sprintf("p%d", p+1))
	}
	for w := 0; w < v; w++ {
		s.Vocab = append(s.Vocab, fmt.Sprintf("w%d", w))
	}
	return s
}
