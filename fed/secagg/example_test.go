package secagg_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/fed/secagg"
)

// Three parties sum their vectors; party 2 drops before masking, and the
// coordinator still obtains the sum of parties 0 and 1.
func Example() {
	p := secagg.Params{Session: []byte("run 1, round 4"), Parties: 3, Threshold: 2, Bits: 32, FracBits: 8, Clip: 100, Len: 3}
	updates := [][]float64{{1.5, 0, 2}, {0.25, 4, -1}, {9, 9, 9}}
	parties := make([]*secagg.Party, p.Parties)
	inputs := make([][]int64, p.Parties)
	for i := range parties {
		// Production code passes crypto/rand.Reader.
		parties[i], _ = secagg.NewParty(p, i, rand.NewChaCha8([32]byte{byte(i)}))
		inputs[i], _ = p.Encode(updates[i])
	}
	server, _ := secagg.NewServer(p)
	out, _ := server.Start()
	for !out.Done {
		kind, _ := secagg.MessageKind(out.For(out.To[0]))
		replies := make([][]byte, p.Parties)
		for _, i := range out.To {
			if kind == secagg.KindForward && i == 2 {
				continue // party 2 is gone
			}
			var err error
			if replies[i], err = parties[i].Handle(out.For(i), inputs[i]); err != nil {
				fmt.Println(err)
				return
			}
		}
		var err error
		if out, err = server.Collect(replies); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println(out.Included, p.Decode(out.Sum))
	// Output: [0 1] [1.75 4 1]
}
