//go:build unix

package fed_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/secagg"
	"github.com/fedtopic/fedtopic/internal/fedpb"
)

// BenchmarkSecureRound measures the overhead of secure aggregation on the
// figure it is stated for: one round of n parties (10 and 50) whose update
// is a dense vector of K·V = 600,000 real values, against the plain round
// of the same update. The update is PC-TD's M_t: non-negative reals on
// PC-TD's fixed-point grid (8 fraction bits) with PC-TD's clip for a
// threshold t = ⌊n/2⌋ + 1, which fills the 32-bit ring; its plain form is
// float32 values, as pctd's codec sends them. One party drops after
// sending its shares and before masking, so the coordinator rebuilds its
// mask key and removes its pairwise masks: the unmasking's worst case for
// one dropout.
//
// Parties run one after another, each alone on the machine as in a
// deployment (mask expansion uses every processor). The metrics are per
// round, each time the least over the iterations (run several, e.g.
// -benchtime=5x, on a busy machine):
//
//   - party-ms: the time of one party that stays to the end, averaged:
//     encoding its update on the grid, then for each of the four stages decoding the engine's task,
//     answering (keys, encrypted shares, mask expansion) and encoding its
//     submission;
//   - server-ms: the coordinator's time: decoding the submissions,
//     collecting each stage (checking, summing, unmasking), encoding the
//     tasks;
//   - party-B: bytes one such party sends and receives, as the engine's codec
//     (internal/fedpb) frames them: every TaskRequest, Task, Submission
//     and Receipt of the round, the broadcast left out (the same in both);
//   - plain-party-ms, plain-server-ms, plain-party-B: the same for the
//     plain round: float32 encoding and one Submission; decoding n
//     submissions and summing them;
//   - party-cpu-ms, server-cpu-ms and their plain counterparts: the
//     processor time the process spent over the same stretches, all
//     threads counted (less inflated than wall time on a busy machine; on
//     an idle one, mask expansion's wall time is about its processor time
//     over the number of processors);
//   - party-x, server-x, party-cpu-x, server-cpu-x, bytes-x: the ratios
//     secure/plain (targets: ≤ 2 for time, ≤ 1.5 for bytes).
func BenchmarkSecureRound(b *testing.B) {
	const l = 600000
	for _, n := range []int{10, 50} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			t := n/2 + 1
			// PC-TD's clip: B = ⌊(2^31 − 1)/(2t − 1)⌋ grid steps of 2^−8.
			spec := fed.SumSpec{Len: l, FracBits: 8, Clip: float64((1<<31-1)/int64(2*t-1)) / 256}
			params, err := fed.SecAggParams("bench", 1, 1, n, t, spec)
			if err != nil {
				b.Fatal(err)
			}
			r := rand.New(rand.NewPCG(1, 2))
			x := make([]float64, l) // word-topic masses: a few occurrences each
			for i := range x {
				x[i] = math.Round(r.ExpFloat64()*3*256) / 256
			}
			var sec, plain roundCost
			for b.Loop() {
				sec = sec.least(secureRound(b, params, x, []int{3}))
				plain = plain.least(plainRound(b, n, x))
			}
			b.ReportMetric(sec.partyMS(), "party-ms")
			b.ReportMetric(sec.partyCPUMS(), "party-cpu-ms")
			b.ReportMetric(sec.serverMS(), "server-ms")
			b.ReportMetric(sec.serverCPUMS(), "server-cpu-ms")
			b.ReportMetric(sec.partyB(), "party-B")
			b.ReportMetric(plain.partyMS(), "plain-party-ms")
			b.ReportMetric(plain.partyCPUMS(), "plain-party-cpu-ms")
			b.ReportMetric(plain.serverMS(), "plain-server-ms")
			b.ReportMetric(plain.serverCPUMS(), "plain-server-cpu-ms")
			b.ReportMetric(plain.partyB(), "plain-party-B")
			b.ReportMetric(sec.partyMS()/plain.partyMS(), "party-x")
			b.ReportMetric(sec.partyCPUMS()/plain.partyCPUMS(), "party-cpu-x")
			b.ReportMetric(sec.serverMS()/plain.serverMS(), "server-x")
			b.ReportMetric(sec.serverCPUMS()/plain.serverCPUMS(), "server-cpu-x")
			b.ReportMetric(sec.partyB()/plain.partyB(), "bytes-x")
		})
	}
}

// roundCost is what one round cost the parties that stayed to its end
// and the coordinator.
type roundCost struct {
	party, server cost // party: summed over the parties that stayed
	bytes         int  // sent and received, summed likewise
	stayed        int
}

// cost is a stretch of work's wall time and the processor time the
// process spent meanwhile (all threads: mask expansion runs on every
// processor), which a busy machine inflates less than wall time.
type cost struct{ wall, cpu time.Duration }

func (c cost) add(d cost) cost { return cost{c.wall + d.wall, c.cpu + d.cpu} }

// mark is the start of a stretch of work.
type mark struct {
	wall time.Time
	cpu  time.Duration
}

func now() mark { return mark{time.Now(), cpuTime()} }

func (m mark) since() cost { return cost{time.Since(m.wall), cpuTime() - m.cpu} }

// cpuTime is the processor time of the process so far, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		return 0
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// least keeps the smaller time of c and d (c unset: d's), the closest
// to the cost on an idle machine.
func (c roundCost) least(d roundCost) roundCost {
	if c.stayed == 0 {
		return d
	}
	c.party = cost{min(c.party.wall, d.party.wall), min(c.party.cpu, d.party.cpu)}
	c.server = cost{min(c.server.wall, d.server.wall), min(c.server.cpu, d.server.cpu)}
	return c
}

func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

func (c roundCost) partyMS() float64     { return ms(c.party.wall) / float64(c.stayed) }
func (c roundCost) partyCPUMS() float64  { return ms(c.party.cpu) / float64(c.stayed) }
func (c roundCost) partyB() float64      { return float64(c.bytes) / float64(c.stayed) }
func (c roundCost) serverMS() float64    { return ms(c.server.wall) }
func (c roundCost) serverCPUMS() float64 { return ms(c.server.cpu) }

// wire is the engine's framing of one exchange: the party's TaskRequest,
// the coordinator's Task, the party's Submission and the Receipt.
func wire(b *testing.B, party string, task *fed.Task, sub *fed.Submission) (taskBytes, subBytes []byte, n int) {
	b.Helper()
	req, err := fedpb.Marshal(fedpb.FromTaskRequest(&fed.TaskRequest{Run: task.Run, Party: party}))
	if err != nil {
		b.Fatal(err)
	}
	tb, err := fedpb.Marshal(fedpb.FromTask(task))
	if err != nil {
		b.Fatal(err)
	}
	rc, err := fedpb.Marshal(fedpb.FromReceipt(&fed.Receipt{Round: task.Round}))
	if err != nil {
		b.Fatal(err)
	}
	var sb []byte
	if sub != nil {
		if sb, err = fedpb.Marshal(fedpb.FromSubmission(sub)); err != nil {
			b.Fatal(err)
		}
	}
	return tb, sb, len(req) + len(tb) + len(sb) + len(rc)
}

var benchToken = make([]byte, fed.TokenSize)

// secureRound plays one instance of secure aggregation; the parties in
// drop send their shares and then fall silent.
func secureRound(b *testing.B, p secagg.Params, x []float64, drop []int) roundCost {
	b.Helper()
	var c roundCost
	partyTime := make([]cost, p.Parties)
	partyBytes := make([]int, p.Parties)
	parties := make([]*secagg.Party, p.Parties)
	inputs := make([][]int64, p.Parties)
	for i := range parties {
		var err error
		if parties[i], err = secagg.NewParty(p, i, rand.NewChaCha8([32]byte{byte(i), byte(i >> 8)})); err != nil {
			b.Fatal(err)
		}
	}
	srv, err := secagg.NewServer(p)
	if err != nil {
		b.Fatal(err)
	}
	start := now()
	out, err := srv.Start()
	c.server = c.server.add(start.since())
	if err != nil {
		b.Fatal(err)
	}
	for !out.Done {
		kind, _ := secagg.MessageKind(out.For(out.To[0]))
		replies := make([][]byte, p.Parties)
		subs := make([][]byte, p.Parties)
		for _, i := range out.To {
			id := fmt.Sprint("p", i)
			task := &fed.Task{Run: "bench", Round: 1, Attempt: 1, Token: benchToken, SecAgg: out.For(i)}
			start := now()
			tb, _, _ := wire(b, id, task, nil)
			c.server = c.server.add(start.since())
			if kind == secagg.KindForward && contains(drop, i) {
				continue
			}
			start = now()
			got, err := fedpb.UnmarshalTask(tb)
			if err != nil {
				b.Fatal(err)
			}
			if kind == secagg.KindSetup {
				if inputs[i], err = p.Encode(x); err != nil {
					b.Fatal(err)
				}
			}
			reply, err := parties[i].Handle(got.SecAgg, inputs[i])
			if err != nil {
				b.Fatal(err)
			}
			_, sb, n := wire(b, id, task, &fed.Submission{Run: "bench", Party: id, Round: 1, Token: benchToken, Payload: reply})
			partyTime[i] = partyTime[i].add(start.since())
			partyBytes[i] += n
			subs[i] = sb
		}
		start := now()
		for i, sb := range subs {
			if sb == nil {
				continue
			}
			s, err := fedpb.UnmarshalSubmission(sb)
			if err != nil {
				b.Fatal(err)
			}
			replies[i] = s.Payload
		}
		out, err = srv.Collect(replies)
		c.server = c.server.add(start.since())
		if err != nil {
			b.Fatal(err)
		}
	}
	for i := range p.Parties {
		if !contains(drop, i) {
			c.party = c.party.add(partyTime[i])
			c.bytes += partyBytes[i]
			c.stayed++
		}
	}
	return c
}

// plainRound plays the plain round of the same update: each party
// encodes it as float32 values and submits it; the coordinator decodes
// the n submissions and sums them.
func plainRound(b *testing.B, n int, x []float64) roundCost {
	b.Helper()
	var c roundCost
	subs := make([][]byte, n)
	for i := range n {
		id := fmt.Sprint("p", i)
		task := &fed.Task{Run: "bench", Round: 1, Attempt: 1, Token: benchToken}
		tb, _, _ := wire(b, id, task, nil)
		start := now()
		if _, err := fedpb.UnmarshalTask(tb); err != nil {
			b.Fatal(err)
		}
		payload := make([]byte, 0, 4*len(x))
		for _, v := range x {
			payload = binary.LittleEndian.AppendUint32(payload, math.Float32bits(float32(v)))
		}
		_, sb, bytes := wire(b, id, task, &fed.Submission{Run: "bench", Party: id, Round: 1, Token: benchToken, Payload: payload})
		c.party = c.party.add(start.since())
		c.bytes += bytes
		c.stayed++
		subs[i] = sb
	}
	start := now()
	sum := make([]float64, len(x))
	for _, sb := range subs {
		s, err := fedpb.UnmarshalSubmission(sb)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Payload) != 4*len(sum) {
			b.Fatalf("payload of %d bytes, want %d", len(s.Payload), 4*len(sum))
		}
		for i := range sum {
			sum[i] += float64(math.Float32frombits(binary.LittleEndian.Uint32(s.Payload[4*i:])))
		}
	}
	c.server = start.since()
	return c
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
