package fedlda

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// zUpper is the upper 1 − 1e-5 quantile of the standard normal, 4.2649.
// Every statistical test below fails falsely with probability at most
// 1e-5: a chi-square test at that level, or a family of proportion tests
// at z = 5.0 (two-sided 5.7e-7 each; at most 16 of them per test).
const zUpper = 4.2649

// chiSquareCrit returns the 1 − 1e-5 quantile of χ² with df degrees of
// freedom by the Wilson–Hilferty approximation, which overestimates the
// upper tail quantile slightly for small df (conservative for a test).
func chiSquareCrit(df int) float64 {
	d := float64(df)
	a := 2 / (9 * d)
	return d * math.Pow(1-a+zUpper*math.Sqrt(a), 3)
}

// chiSquare returns Pearson's statistic of counts against probabilities p.
func chiSquare(counts []int, p []float64) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	var s float64
	for i, c := range counts {
		e := float64(n) * p[i]
		s += (float64(c) - e) * (float64(c) - e) / e
	}
	return s
}

func TestSampleTuplesInclusion(t *testing.T) {
	const m, l, c, n = 10, 7, 4, 100000
	r := rng.Derive(1, "sample-tuples")
	perm := make([]int32, m)
	hits := make([]int, m)
	for range n {
		seen := make([]bool, m)
		got := 0
		sampleTuples(r, perm, l, c, func(i, slot int) {
			if i != got || seen[slot] {
				t.Fatalf("sampleTuples: draw %d is slot %d, seen before %v", i, slot, seen[slot])
			}
			seen[slot] = true
			hits[slot]++
			got++
		})
		if got != l {
			t.Fatalf("sampleTuples emitted %d tuples; want exactly l = %d", got, l)
		}
	}
	// Each slot is in the sample with probability l/M: binomial, z = 5.
	p := float64(l) / m
	sd := math.Sqrt(n * p * (1 - p))
	for s, h := range hits {
		if math.Abs(float64(h)-n*p) > 5*sd {
			t.Errorf("slot %d drawn %d times in %d; want about %.0f (l/M = %v)", s, h, n, n*p, p)
		}
	}
}

// jointTwoTokens returns the exact law of the topics (z1, z2) of a
// two-token document under LDA with φ fixed: p ∝ φ_{z1 w1} φ_{z2 w2}
// Γ-ratios of the Dirichlet-multinomial, α(α+1) when z1 = z2, α² else.
func jointTwoTokens(phi *phiView, w1, w2 int, alpha float64) []float64 {
	k := phi.k
	p := make([]float64, k*k)
	var s float64
	for a := range k {
		for b := range k {
			dm := alpha * alpha
			if a == b {
				dm = alpha * (alpha + 1)
			}
			p[a*k+b] = phi.phiT[w1*k+a] * phi.phiT[w2*k+b] * dm
			s += p[a*k+b]
		}
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// TestSweepsKeepTheConditional checks the Gibbs and the MH sweeps against
// the exact law of a two-token document: started from a draw of that law,
// one sweep must leave it unchanged (each token's kernel preserves its
// full conditional). Chi-square over K² = 9 states.
func TestSweepsKeepTheConditional(t *testing.T) {
	const k, v, n = 3, 4, 200000
	counts := []uint32{ // topic-major K×V
		30, 5, 1, 0,
		2, 20, 9, 4,
		1, 1, 10, 25,
	}
	for _, mh := range []bool{false, true} {
		t.Run(fmt.Sprintf("mh=%v", mh), func(t *testing.T) {
			phi := newPhiView(counts, k, v, 0.5, mh)
			const alpha, w1, w2 = 0.3, 1, 2
			joint := jointTwoTokens(phi, w1, w2, alpha)
			cum := make([]float64, len(joint))
			var s float64
			for i, p := range joint {
				s += p
				cum[i] = s
			}
			r := rng.Derive(2, "sweep", fmt.Sprint(mh))
			u := userState{words: []int32{w1, w2}, z: make([]uint16, 2), zNew: make([]uint16, 2), cnt: make([]int32, k), p: make([]float64, k)}
			hist := make([]int, k*k)
			for range n {
				x := r.Float64()
				i := 0
				for i < len(cum)-1 && cum[i] <= x {
					i++
				}
				u.z[0], u.z[1] = uint16(i/k), uint16(i%k)
				if mh {
					u.mh(r, phi, alpha, 1)
				} else {
					u.gibbs(r, phi, alpha)
				}
				hist[int(u.zNew[0])*k+int(u.zNew[1])]++
			}
			if got, crit := chiSquare(hist, joint), chiSquareCrit(k*k-1); got > crit {
				t.Errorf("one sweep from the exact law: χ² = %.1f > %.1f; histogram %v, law %v", got, crit, hist, joint)
			}
		})
	}
}

// TestMechanismsExact checks the perturbers FedLDA builds: kRR and t-kRR
// output distributions against their exact probabilities (chi-square
// over every output word), and the ε-LDP ratio bound from those exact
// probabilities for every pair of inputs and every output.
func TestMechanismsExact(t *testing.T) {
	const k, v, eps, n = 2, 6, 1.5, 120000
	counts := []uint32{
		50, 30, 10, 5, 1, 0,
		40, 20, 20, 5, 0, 0,
	}
	phi := newPhiView(counts, k, v, 0.01, false)
	for _, mech := range []string{MechanismKRR, MechanismTKRR} {
		t.Run(mech, func(t *testing.T) {
			cfg := Config{K: k, Mechanism: mech, Epsilon: eps, Truncation: 0.05}.withDefaults()
			pert, err := newPerturber(cfg, phi, counts, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The law: kRR over the domain S (all words for kRR); t-kRR
			// maps a word outside S to a uniform word of S.
			dom := make([]bool, v)
			size := v
			if mech == MechanismTKRR {
				size = 0
				for _, w := range truncatedDomain(counts, k, v, cfg.Beta, cfg.Truncation) {
					dom[w] = true
					size++
				}
				// The corpus word counts are (90, 50, 30, 10, 1, 0) plus Kβ
				// each: the tail of mass ≤ 5% of 181 is words 5 and 4;
				// adding word 3 would make 11.
				if size != 4 || !dom[0] || !dom[3] || dom[4] {
					t.Fatalf("t-kRR domain = %v; want words 0 to 3", dom)
				}
			} else {
				for w := range dom {
					dom[w] = true
				}
			}
			keep := math.Exp(eps) / (math.Exp(eps) + float64(size-1))
			law := func(in, out int) float64 {
				switch {
				case !dom[out]:
					return 0
				case !dom[in]:
					return 1 / float64(size)
				case in == out:
					return keep
				}
				return (1 - keep) / float64(size-1)
			}
			r := rng.Derive(3, "mech", mech)
			for _, in := range []int{0, 4} {
				hist := make([]int, v)
				for range n {
					hist[pert.perturb(r, in, nil)]++
				}
				var obs []int
				var p []float64
				for out := range v {
					if law(in, out) == 0 {
						if hist[out] != 0 {
							t.Errorf("input %d: output %d reported %d times; its probability is 0", in, out, hist[out])
						}
						continue
					}
					obs, p = append(obs, hist[out]), append(p, law(in, out))
				}
				if got, crit := chiSquare(obs, p), chiSquareCrit(len(obs)-1); got > crit {
					t.Errorf("input %d: χ² = %.1f > %.1f; histogram %v", in, got, crit, hist)
				}
			}
			// ε-LDP: for every output the probabilities of any two inputs
			// differ by at most the factor e^ε (equality for kRR).
			bound := math.Exp(eps) * (1 + 1e-12)
			worst := 0.0
			for out := range v {
				for a := range v {
					for b := range v {
						if pa, pb := law(a, out), law(b, out); pb > 0 {
							worst = max(worst, pa/pb)
						} else if pa > 0 {
							t.Errorf("output %d possible from %d but not from %d", out, a, b)
						}
					}
				}
			}
			if worst > bound {
				t.Errorf("largest probability ratio %v > e^ε = %v", worst, math.Exp(eps))
			}
		})
	}
}

// TestRRPFollowsAlgorithm3 checks FedLDA's RRP path on a small φ: a user
// whose θ is all on topic 1 reports its word w with probability
// 1 − η + η·P(w' ∉ head of φ_1) and each head word w' ≠ w with η·φ_1w'.
func TestRRPFollowsAlgorithm3(t *testing.T) {
	const k, v, n = 2, 5, 200000
	counts := []uint32{
		10, 10, 10, 10, 10,
		0, 60, 25, 10, 5,
	}
	cfg := Config{K: k, Mechanism: MechanismRRP, Epsilon: 6, Truncation: 0.1, Beta: 1e-9}.withDefaults()
	phi := newPhiView(counts, k, v, cfg.Beta, false)
	pert, err := newPerturber(cfg, phi, counts, nil)
	if err != nil {
		t.Fatal(err)
	}
	eta := cfg.Eta()
	// φ_1 ≈ (0, .6, .25, .1, .05): the tail of mass ≤ 0.1 is {0, 4}
	// (0.05); adding word 3 would make 0.15.
	phi1 := []float64{0, 0.6, 0.25, 0.1, 0.05}
	head := []bool{false, true, true, true, false}
	const in = 4
	want := make([]float64, v)
	for w, p := range phi1 {
		if head[w] {
			want[w] += eta * p
		} else {
			want[in] += eta * p
		}
	}
	want[in] += 1 - eta
	r := rng.Derive(4, "rrp")
	hist := make([]int, v)
	for range n {
		hist[pert.perturb(r, in, []float64{0, 1})]++
	}
	if hist[0] != 0 {
		t.Errorf("RRP reported word 0 (probability 0 in φ_1) %d times", hist[0])
	}
	if got, crit := chiSquare(hist[1:], want[1:]), chiSquareCrit(v-2); got > crit {
		t.Errorf("RRP: χ² = %.1f > %.1f; histogram %v, want law %v", got, crit, hist, want)
	}
}

// tuplesPayload encodes users×l tuples.
func tuplesPayload(users, l int, ts ...tuple) []byte {
	b := tuplesHeader(users, l)
	body := b[headerSize+8:]
	for i := range users * l {
		t := tuple{kOld: noTopic, kNew: noTopic}
		if i < len(ts) {
			t = ts[i]
		}
		putTuple(body[i*tupleSize:], t)
	}
	return b
}

func TestDecodeTuplesRejects(t *testing.T) {
	s := tupleShape{k: 3, v: 10, l: 2, maxUsers: 5}
	good := tuplesPayload(2, 2, tuple{w: 9, kOld: noTopic, kNew: 2}, tuple{w: 0, kOld: 1, kNew: 0})
	if u, _, err := decodeTuples(good, s); err != nil || u != 2 {
		t.Fatalf("decodeTuples(good) = %d users, %v; want 2, nil", u, err)
	}
	withHeader := func(users, l uint32, b []byte) []byte {
		b = append([]byte(nil), b...)
		binary.LittleEndian.PutUint32(b[headerSize:], users)
		binary.LittleEndian.PutUint32(b[headerSize+4:], l)
		return b
	}
	tests := []struct {
		name    string
		payload []byte
		want    string // in the error
	}{
		{name: "empty", payload: nil, want: "header"},
		{name: "wrong magic", payload: append([]byte("XLD1"), good[4:]...), want: "header"},
		{name: "counts kind", payload: append(append([]byte(magic), kindCounts), good[5:]...), want: "kind"},
		{name: "truncated header", payload: good[:headerSize+5], want: "truncated"},
		{name: "word id ≥ V", payload: tuplesPayload(1, 2, tuple{w: 10, kOld: noTopic, kNew: 0}), want: "word id"},
		{name: "new topic ≥ K", payload: tuplesPayload(1, 2, tuple{w: 1, kOld: noTopic, kNew: 3}), want: "topic"},
		{name: "old topic ≥ K", payload: tuplesPayload(1, 2, tuple{w: 1, kOld: 7, kNew: 0}), want: "topic"},
		{name: "no change", payload: tuplesPayload(1, 2, tuple{w: 1, kOld: 1, kNew: 1}), want: "changes nothing"},
		{name: "dummy with a word", payload: tuplesPayload(1, 2, tuple{w: 3, kOld: noTopic, kNew: noTopic}), want: "dummy"},
		{name: "half a dummy", payload: tuplesPayload(1, 2, tuple{w: 0, kOld: 1, kNew: noTopic}), want: "dummy"},
		{name: "more than l tuples per user", payload: tuplesPayload(2, 3), want: "exactly l"},
		{name: "fewer than l tuples per user", payload: tuplesPayload(2, 1), want: "exactly l"},
		{name: "user count above the tuples", payload: withHeader(3, 2, good), want: "need"},
		{name: "user count below the tuples", payload: withHeader(1, 2, good), want: "need"},
		{name: "trailing bytes", payload: append(append([]byte(nil), good...), 1, 2, 3), want: "need"},
		{name: "no users", payload: tuplesPayload(0, 2), want: "users"},
		{name: "too many users", payload: tuplesPayload(6, 2), want: "users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := decodeTuples(tt.payload, s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("decodeTuples(%s) = %v; want an error about %q", tt.name, err, tt.want)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	s := tupleShape{k: 3, v: 10, l: 2, maxUsers: 4}
	f.Add(tuplesPayload(2, 2, tuple{w: 9, kOld: noTopic, kNew: 2}, tuple{w: 0, kOld: 1, kNew: 0}))
	f.Add(tuplesPayload(1, 2))
	f.Add(encodeCounts(3, 10, make([]uint32, 30)))
	f.Add([]byte(magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		if users, body, err := decodeTuples(b, s); err == nil {
			// An accepted update re-encodes to the same bytes, and every
			// tuple is a dummy or a change within range.
			re := tuplesHeader(users, s.l)
			copy(re[headerSize+8:], body)
			if string(re) != string(b) {
				t.Errorf("accepted update does not re-encode to its bytes")
			}
			for i := 0; i < len(body); i += tupleSize {
				tp := getTuple(body[i:])
				if !tp.dummy() && (int(tp.w) >= s.v || int(tp.kNew) >= s.k || tp.kOld == tp.kNew) {
					t.Errorf("accepted tuple %+v", tp)
				}
			}
		}
		n := make([]uint32, 30)
		if err := decodeCounts(b, 3, 10, n); err == nil {
			if string(encodeCounts(3, 10, n)) != string(b) {
				t.Errorf("accepted counts do not re-encode to their bytes")
			}
		}
	})
}
