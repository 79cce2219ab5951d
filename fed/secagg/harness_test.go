package secagg

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// testParams returns the parameters of the tests: n parties, threshold t,
// vectors of length l in Z_(2^32) with 8 fraction bits and clip 1000.
func testParams(n, t, l int) Params {
	return Params{Session: []byte("run-7/round-3"), Parties: n, Threshold: t, Bits: 32, FracBits: 8, Clip: 1000, Len: l}
}

// partySource returns party i's seeded random stream.
func partySource(seed uint64, i int) *rand.ChaCha8 {
	return rand.NewChaCha8(rng.Key(seed, "secagg party", i))
}

// randomInputs draws n grid vectors within the bound of p.
func randomInputs(p Params, seed uint64) [][]int64 {
	b, _ := p.Bound()
	r := rng.Derive(seed, "inputs")
	in := make([][]int64, p.Parties)
	for i := range in {
		in[i] = make([]int64, p.Len)
		for j := range in[i] {
			in[i][j] = r.Int64N(2*b+1) - b
		}
	}
	return in
}

// instance is one run of the protocol in memory.
type instance struct {
	t       testing.TB
	params  Params
	parties []*Party
	server  *Server
	inputs  [][]int64
	// sent[k] holds, per party, the reply it sent to the message of kind k
	// (k = the coordinator's message kind); in[k] the message it got.
	in, sent map[Kind][][]byte
}

func newInstance(t testing.TB, p Params, inputs [][]int64, seed uint64) *instance {
	t.Helper()
	in := &instance{t: t, params: p, inputs: inputs, in: map[Kind][][]byte{}, sent: map[Kind][][]byte{}}
	for i := range p.Parties {
		pa, err := NewParty(p, i, partySource(seed, i))
		if err != nil {
			t.Fatalf("NewParty(%d) = %v", i, err)
		}
		in.parties = append(in.parties, pa)
	}
	s, err := NewServer(p)
	if err != nil {
		t.Fatalf("NewServer = %v", err)
	}
	in.server = s
	return in
}

// run plays the protocol to the end; drop[k] lists the parties that do
// not answer the coordinator's message of kind k (and are gone after).
func (in *instance) run(drop map[Kind][]int) (Out, error) {
	out, err := in.server.Start()
	if err != nil {
		return out, err
	}
	gone := map[int]bool{}
	for !out.Done {
		k, err := MessageKind(out.For(out.To[0]))
		if err != nil {
			return out, err
		}
		for _, d := range drop[k] {
			gone[d] = true
		}
		replies := make([][]byte, in.params.Parties)
		in.in[k] = make([][]byte, in.params.Parties)
		for _, i := range out.To {
			if gone[i] {
				continue
			}
			msg := out.For(i)
			in.in[k][i] = msg
			var input []int64
			if k == KindForward {
				input = in.inputs[i]
			}
			r, err := in.parties[i].Handle(msg, input)
			if err != nil {
				in.t.Fatalf("party %d: Handle(%s) = %v", i, k, err)
			}
			replies[i] = r
		}
		in.sent[k] = replies
		out, err = in.server.Collect(replies)
		if err != nil {
			return out, err
		}
		if len(out.Rejected) > 0 {
			in.t.Fatalf("Collect after %s rejected %v", k, out.Rejected)
		}
	}
	return out, nil
}

// plainSum is the sum of the inputs of the included parties.
func plainSum(inputs [][]int64, included []int) []int64 {
	s := make([]int64, len(inputs[0]))
	for _, i := range included {
		for j, v := range inputs[i] {
			s[j] += v
		}
	}
	return s
}

func without(n int, drop ...[]int) []int {
	var out []int
	for i := range n {
		if !slices.ContainsFunc(drop, func(d []int) bool { return slices.Contains(d, i) }) {
			out = append(out, i)
		}
	}
	return out
}
