package secagg

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkRound runs one whole instance on an update of K·V = 600,000
// values (the size the secure-aggregation targets are stated for) and
// reports, besides the wall time of everything:
//
//   - party-ms: one party's time over its four stages, averaged;
//   - server-ms: the coordinator's time over its five stages;
//   - party-up-B, party-down-B: the bytes one party sends and receives;
//   - plain-up-B: the bytes of the same update sent in the clear as
//     float32 (how ftm's codec sends an update);
//   - plain-party-ms, plain-server-ms: encoding the update as float32, and
//     decoding and summing n of them, for the plain round's share of work.
//
// Run with -benchtime=1x: one iteration at 50 parties takes seconds.
func BenchmarkRound(b *testing.B) {
	const l = 600000
	for _, bc := range []struct {
		n, t int
		drop []int // parties that drop before masking
	}{
		{n: 10, t: 6}, {n: 10, t: 6, drop: []int{3}},
		{n: 50, t: 26}, {n: 50, t: 26, drop: []int{3}},
	} {
		b.Run(fmt.Sprintf("n=%d/dropped=%d", bc.n, len(bc.drop)), func(b *testing.B) {
			p := Params{Session: []byte("bench"), Parties: bc.n, Threshold: bc.t, Bits: 32, FracBits: 8, Clip: 1000, Len: l}
			x := make([]int64, l)
			for i := range x {
				x[i] = int64(i%1000) - 500
			}
			inputs := make([][]int64, bc.n)
			for i := range inputs {
				inputs[i] = x
			}
			var partyTime, serverTime time.Duration
			var up, down int
			for b.Loop() {
				partyTime, serverTime, up, down = 0, 0, 0, 0
				in := newInstance(b, p, inputs, 1)
				start := time.Now()
				out, err := in.server.Start()
				serverTime += time.Since(start)
				if err != nil {
					b.Fatal(err)
				}
				for !out.Done {
					k, _ := MessageKind(out.For(out.To[0]))
					replies := make([][]byte, bc.n)
					for _, i := range out.To {
						if k == KindForward && contains(bc.drop, i) {
							continue
						}
						msg := out.For(i)
						down += len(msg)
						start := time.Now()
						replies[i], err = in.parties[i].Handle(msg, inputs[i])
						partyTime += time.Since(start)
						if err != nil {
							b.Fatal(err)
						}
						up += len(replies[i])
					}
					start := time.Now()
					out, err = in.server.Collect(replies)
					serverTime += time.Since(start)
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(partyTime.Milliseconds())/float64(bc.n), "party-ms")
			b.ReportMetric(float64(serverTime.Milliseconds()), "server-ms")
			b.ReportMetric(float64(up)/float64(bc.n), "party-up-B")
			b.ReportMetric(float64(down)/float64(bc.n), "party-down-B")
			b.ReportMetric(float64(4*l), "plain-up-B")

			// The plain round's counterpart: encode the update as float32, and
			// decode and sum n updates.
			start := time.Now()
			wire := make([]byte, 4*l)
			for i, v := range x {
				binary.LittleEndian.PutUint32(wire[4*i:], math.Float32bits(float32(v)))
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "plain-party-ms")
			start = time.Now()
			sum := make([]float64, l)
			for range bc.n {
				for i := range sum {
					sum[i] += float64(math.Float32frombits(binary.LittleEndian.Uint32(wire[4*i:])))
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/1000, "plain-server-ms")
		})
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// BenchmarkAddNoise times one party's share of distributed noise on a
// PC-TD-sized vector (V = 440, K = 10): the sampler's construction is most
// of the cost when it is built for every round.
func BenchmarkAddNoise(b *testing.B) {
	x := make([]int64, 4400)
	r := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		if err := AddNoise(x, 3000, 3, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNoiseAdd is BenchmarkAddNoise with the sampler built once, as a
// party keeps it across rounds.
func BenchmarkNoiseAdd(b *testing.B) {
	x := make([]int64, 4400)
	r := rand.New(rand.NewPCG(1, 2))
	n, err := NewNoise(3000, 3)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n.Add(x, r)
	}
}
