package lda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/rng"
)

func newSource(seed uint64) *chacha8.Stream { return chacha8.New(rng.Key(seed, "test")) }

// TestGammaKS compares the gamma samplers (gammaSmall below shape 1,
// gammaMT from 1) with gonum's Gamma CDF by a one-sample Kolmogorov–Smirnov
// test: with n = 5000 the critical D for a false-failure rate of 1e-6 per
// shape is √(ln(2/1e-6)/(2n)) = 0.0380; ten shapes give
// a test-wide rate of 1e-5.
func TestGammaKS(t *testing.T) {
	const n = 5000
	crit := math.Sqrt(math.Log(2/1e-6) / (2 * n))
	// 0.01 uses the integer-power path (1/a = 100), 0.013 the general one.
	for _, a := range []float64{0.01, 0.013, 0.1, 0.5, 0.99, 1, 1.01, 2.5, 30, 1000} {
		t.Run(fmt.Sprint(a), func(t *testing.T) {
			src := chacha8.New(rng.Key(2, "gamma", a))
			r := rand.New(src)
			x := make([]float64, n)
			for i := range x {
				if a < 1 {
					x[i] = newGammaSmall(a).drawSrc(src)
				} else {
					x[i] = gammaMT(r, a)
				}
				if !(x[i] >= 0) || math.IsInf(x[i], 0) {
					t.Fatalf("Gamma(%v) draw = %v; want a finite non-negative number", a, x[i])
				}
			}
			slices.Sort(x)
			cdf := distuv.Gamma{Alpha: a, Beta: 1}
			var d float64
			for i, v := range x {
				f := cdf.CDF(v)
				d = max(d, math.Abs(f-float64(i)/n), math.Abs(float64(i+1)/n-f))
			}
			if d > crit {
				t.Errorf("KS distance of %d draws of Gamma(%v) = %.4f; want ≤ %.4f", n, a, d, crit)
			}
		})
	}
}

// phiCase is a count matrix for drawPhi and the entries of Φ a test checks.
type phiCase struct {
	name   string
	k, v   int
	beta   float64
	counts map[[2]int]int32 // (topic, word) → C_kw
	check  [][2]int         // (topic, word) entries to check
}

// wordMajor returns the counts as drawPhi takes them: c[w*K+k] = C_kw.
func (pc phiCase) wordMajor() []int32 {
	c := make([]int32, pc.k*pc.v)
	for kw, n := range pc.counts {
		c[kw[1]*pc.k+kw[0]] = n
	}
	return c
}

// TestDrawPhiMean checks that drawPhi draws each row from Dirichlet(C_k· +
// β): the sample mean of every checked entry over many draws must be within
// z·σ/√n of (C_kw + β)/(C_k + Vβ), σ² = a_w(a_0 − a_w)/(a_0²(a_0 + 1)); z
// gives a false-failure rate of 1e-6 over all checked entries of a case.
// "two blocks" spans two word blocks, so the merge of block sums is
// exercised; "tiny sums" has V·β = 0.03, so an empty topic's sum often falls
// below 2⁻⁶⁴ and takes the exact second pass.
func TestDrawPhiMean(t *testing.T) {
	tests := []phiCase{
		{name: "two blocks", k: 2, v: 300, beta: 0.5,
			counts: map[[2]int]int32{{0, 0}: 7, {0, 1}: 3, {0, 299}: 12, {1, 5}: 1, {1, 260}: 20, {1, 261}: 4},
			check:  [][2]int{{0, 0}, {0, 1}, {0, 2}, {0, 299}, {1, 5}, {1, 260}, {1, 261}, {1, 100}}},
		{name: "tiny sums", k: 2, v: 3, beta: 0.01,
			counts: map[[2]int]int32{{0, 0}: 5, {0, 1}: 1},
			check:  [][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}}},
	}
	const draws = 4000
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, v := tt.k, tt.v
			counts := tt.wordMajor()
			p := newPhi(k, v, make([]bool, v), false)
			workers := []*phiWorker{newPhiWorker(), newPhiWorker()}
			sums := make([]float64, len(tt.check))
			buf := make([]int32, len(counts))
			for it := range draws {
				copy(buf, counts)
				if err := drawPhi(context.Background(), p, buf, tt.beta, 3, it, workers); err != nil {
					t.Fatal(err)
				}
				for j, kw := range tt.check {
					sums[j] += p.At(kw[0], kw[1])
				}
				if it == 0 && slices.ContainsFunc(buf, func(c int32) bool { return c != 0 }) {
					t.Fatal("drawPhi left non-zero counts; want them cleared for the next sweep")
				}
				for t0 := range k {
					var s float64
					for w := range v {
						s += p.At(t0, w)
					}
					if math.Abs(s-1) > 1e-5 {
						t.Fatalf("draw %d: row %d of Φ sums to %v; want 1 (float32 entries)", it, t0, s)
					}
				}
			}
			z := distuv.UnitNormal.Quantile(1 - 1e-6/(2*float64(len(tt.check))))
			for j, kw := range tt.check {
				var total float64
				for w := range v {
					total += float64(counts[w*k+kw[0]]) + tt.beta
				}
				a := float64(counts[kw[1]*k+kw[0]]) + tt.beta
				mean := a / total
				sd := math.Sqrt(a * (total - a) / (total * total * (total + 1)) / draws)
				if got := sums[j] / draws; math.Abs(got-mean) > z*sd {
					t.Errorf("mean of φ[%d][%d] over %d draws = %.6f; want %.6f ± %.6f", kw[0], kw[1], draws, got, mean, z*sd)
				}
			}
		})
	}
}

func TestPowInt(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 50, 100, 1000, 1024} {
		for _, x := range []float64{0, 0.3, 0.5, 0.99, 1} {
			got, want := powInt(x, n), math.Pow(x, float64(n))
			if math.Abs(got-want) > 1e-13*want {
				t.Errorf("powInt(%v, %d) = %v; want %v", x, n, got, want)
			}
		}
	}
}

// TestDrawPhiMarginalKS checks the distribution of single entries of the
// Dirichlet draw: φ_kw ~ Beta(a_w, a_0 − a_w) with a_w = C_kw + β and a_0 =
// C_k + Vβ, for entries with zero and non-zero counts, by a one-sample
// Kolmogorov–Smirnov test on n draws. Entries below the smallest normal
// float32 are stored as 0 and the rest are rounded, so the empirical CDF is
// compared with F at the ends of the interval each stored value stands
// for (a subset of the points of the usual statistic). The DKW inequality
// P(sup |F_n − F| > d) ≤ 2·exp(−2nd²) holds for any F, so with m checked
// entries in all the critical d = √(ln(2m/1e-5)/(2n)) gives a test-wide
// false-failure rate of at most 1e-5. β = 0.01 takes the integer-power path
// of the zero-count draws, 0.013 the general one; "tiny sums" (V·β = 0.03)
// sends an empty topic through the exact log-space pass; "lanes" and "lanes
// beta 0.1" (1/β = 10) have enough topics for the vector paths.
func TestDrawPhiMarginalKS(t *testing.T) {
	tests := []phiCase{
		{name: "beta 0.01", k: 3, v: 300, beta: 0.01,
			counts: map[[2]int]int32{{0, 0}: 7, {0, 1}: 1, {0, 299}: 12, {1, 5}: 1, {1, 260}: 20},
			check:  [][2]int{{0, 0}, {0, 1}, {0, 2}, {0, 280}, {1, 5}, {1, 6}, {2, 0}}},
		{name: "beta 0.013", k: 2, v: 300, beta: 0.013,
			counts: map[[2]int]int32{{0, 0}: 7, {0, 1}: 1, {1, 260}: 3},
			check:  [][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 260}, {1, 261}}},
		{name: "tiny sums", k: 2, v: 3, beta: 0.01,
			counts: map[[2]int]int32{{0, 0}: 5, {0, 1}: 1},
			check:  [][2]int{{0, 0}, {0, 2}, {1, 0}}},
		// K = 19: topics 0 to 15 take the eight-at-a-time path where the
		// machine has it (zeroLanes, finishBlock), 16 to 18 the loop.
		{name: "lanes", k: 19, v: 40, beta: 0.01,
			counts: map[[2]int]int32{{0, 0}: 7, {9, 3}: 1, {17, 5}: 4, {18, 5}: 2, {18, 6}: 30},
			check:  [][2]int{{0, 0}, {0, 1}, {9, 3}, {9, 4}, {15, 0}, {17, 5}, {18, 39}}},
		{name: "lanes beta 0.1", k: 16, v: 30, beta: 0.1,
			counts: map[[2]int]int32{{3, 0}: 2, {12, 9}: 5},
			check:  [][2]int{{3, 0}, {3, 1}, {12, 7}}},
	}
	const n = 3000
	m := 0
	for _, tt := range tests {
		m += len(tt.check)
	}
	crit := math.Sqrt(math.Log(2*float64(m)/1e-5) / (2 * n))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, v := tt.k, tt.v
			counts := tt.wordMajor()
			p := newPhi(k, v, make([]bool, v), false)
			workers := []*phiWorker{newPhiWorker()}
			buf := make([]int32, len(counts))
			got := make([][]float64, len(tt.check))
			for it := range n {
				copy(buf, counts)
				if err := drawPhi(context.Background(), p, buf, tt.beta, 5, it, workers); err != nil {
					t.Fatal(err)
				}
				for j, kw := range tt.check {
					got[j] = append(got[j], p.At(kw[0], kw[1]))
				}
			}
			for j, kw := range tt.check {
				var a0 float64
				for w := range v {
					a0 += float64(counts[w*k+kw[0]]) + tt.beta
				}
				a := float64(counts[kw[1]*k+kw[0]]) + tt.beta
				cdf := distuv.Beta{Alpha: a, Beta: a0 - a}
				x := got[j]
				slices.Sort(x)
				// Compare the empirical CDF with F at the ends of the
				// interval each stored value stands for: [0, 2⁻¹²⁶) for 0,
				// half-way to the float32 neighbours otherwise.
				var d float64
				for i := 0; i < n; {
					j := i
					for j < n && x[j] == x[i] {
						j++
					}
					lo, hi := float64(0), minNormal32
					if x[i] > 0 {
						f := float32(x[i])
						lo = (float64(f) + float64(math.Nextafter32(f, 0))) / 2
						hi = min(1, (float64(f)+float64(math.Nextafter32(f, 2)))/2)
					}
					d = max(d, math.Abs(cdf.CDF(lo)-float64(i)/n), math.Abs(cdf.CDF(hi)-float64(j)/n))
					i = j
				}
				if d > crit {
					t.Errorf("KS distance of φ[%d][%d] (count %v) over %d draws = %.4f; want ≤ %.4f", kw[0], kw[1], a-tt.beta, n, d, crit)
				}
			}
		})
	}
}

// TestDrawPhiVectorSame checks that the vector paths of the Dirichlet draw
// (zeroLanesAVX512, colMaxAVX512, colScaleAVX512) give what the loops
// give, bit for bit, from int32 and from float64 counts (fractional ones
// and negative zeros included): Φ, the proposal tables and their masses,
// and the logs, for numbers of topics below, at and off multiples of 8,
// shapes with and without lanes (1/0.013 is no integer), and sparse and
// dense counts, including topics with tiny sums (the exact passes).
func TestDrawPhiVectorSame(t *testing.T) {
	if !useLanesAVX512 {
		t.Log("no AVX-512 here: only the loops run, and the distribution tests cover them")
		return
	}
	defer func() { useLanesAVX512 = true }()
	for _, tc := range []struct {
		k, v    int
		beta    float64
		perWord int
	}{
		{7, 50, 0.01, 3}, {8, 300, 0.01, 5}, {19, 300, 0.01, 2}, {50, 600, 0.01, 40},
		{64, 257, 0.1, 20}, {100, 300, 0.013, 10}, {1000, 40, 0.01, 400}, {9, 3, 0.01, 1},
	} {
		t.Run(fmt.Sprintf("K=%d,V=%d,beta=%v", tc.k, tc.v, tc.beta), func(t *testing.T) {
			r := rng.Derive(uint64(tc.k), "vector same")
			counts := make([]int32, tc.k*tc.v)
			for w := range tc.v {
				for range tc.perWord {
					counts[w*tc.k+int(r.Uint64N(uint64(tc.k)))]++
				}
			}
			propose := make([]bool, tc.v)
			for w := range propose {
				propose[w] = w%5 != 3
			}
			// The same counts as float64 (a Target's), some of them
			// fractional (shape below 1 past β) and the zeros of every
			// third word negative zeros.
			fcounts := make([]float64, len(counts))
			for i, c := range counts {
				switch {
				case c == 0 && i/tc.k%3 == 0:
					fcounts[i] = math.Copysign(0, -1)
				case c == 1 && i%2 == 0:
					fcounts[i] = 0.3
				default:
					fcounts[i] = float64(c)
				}
			}
			for _, float := range []bool{false, true} {
				draw := func(vector bool) *Phi {
					useLanesAVX512 = vector
					p := newPhi(tc.k, tc.v, propose, true)
					workers := []*phiWorker{newPhiWorker(), newPhiWorker()}
					var err error
					if float {
						err = drawPhi(context.Background(), p, slices.Clone(fcounts), tc.beta, 9, 4, workers)
					} else {
						err = drawPhi(context.Background(), p, slices.Clone(counts), tc.beta, 9, 4, workers)
					}
					if err != nil {
						t.Fatal(err)
					}
					return p
				}
				comparePhi(t, draw(true), draw(false), float)
			}
		})
	}
}

// comparePhi reports where got, drawn with the vector paths, differs from
// want, drawn with the loops (float: from float64 counts).
func comparePhi(t *testing.T, got, want *Phi, float bool) {
	t.Helper()
	bitsEq := func(a, b []float32) bool {
		return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	}
	if !bitsEq(got.col, want.col) {
		t.Errorf("float64 counts %v: Φ differs between the vector paths and the loops", float)
	}
	if !bitsEq(got.logRow, want.logRow) {
		t.Errorf("float64 counts %v: log Φ differs between the vector paths and the loops", float)
	}
	if !slices.Equal(got.words, want.words) || !slices.Equal(got.invMass, want.invMass) {
		t.Errorf("float64 counts %v: proposal tables or masses differ between the vector paths and the loops", float)
	}
	for b := range got.sparse {
		if !slices.Equal(got.sparse[b], want.sparse[b]) {
			t.Errorf("float64 counts %v, word block %d: alias slots differ between the vector paths and the loops", float, b)
		}
	}
}

// TestAcceptExp checks the squeezed test u ≤ e^(−x) against the exponential
// on a grid of x and on u at, just below and just above e^(−x) and the two
// Taylor bounds, away from e^(−x) by more than rounding.
func TestAcceptExp(t *testing.T) {
	for i := 0; i <= 1000; i++ {
		x := float64(i) / 1000
		e := math.Exp(-x)
		hi, lo := 1-x+x*x/2, 1-x+x*x/2-x*x*x/6
		for _, u := range []float64{0, lo, hi, e, e * (1 - 1e-12), e * (1 + 1e-12), (lo + e) / 2, (hi + e) / 2, 1} {
			if math.Abs(u-e) < 1e-14 {
				continue // decided by rounding either way
			}
			if got, want := acceptExp(x, u), u <= e; got != want {
				t.Fatalf("acceptExp(%v, %v) = %v; want %v (e^-x = %v)", x, u, got, want, e)
			}
		}
	}
}

// TestScanRestTotal checks that exactDoc's scan of the entries left out of
// a word's table adds them up to the table's R_w bit for bit, with the
// vector paths and with the loops, so a draw below R_w always ends inside
// the scan; and that the scan picks the entry whose cumulative interval
// holds v.
func TestScanRestTotal(t *testing.T) {
	defer func(saved bool) { useLanesAVX512 = saved }(useLanesAVX512)
	for _, vector := range []bool{false, true} {
		if vector && !useLanesAVX512 {
			continue // no AVX-512 here: the loops only
		}
		useLanesAVX512 = vector
		for _, k := range []int{5, 50, 1000} {
			const v = 300
			r := rng.Derive(uint64(k), "scan rest")
			counts := make([]int32, k*v)
			for w := range v {
				for range 30 {
					counts[w*k+int(r.Uint64N(uint64(k)))]++
				}
			}
			propose := make([]bool, v)
			for w := range propose {
				propose[w] = true
			}
			p := newPhi(k, v, propose, false)
			if err := drawPhi(context.Background(), p, counts, 0.01, 6, 1, []*phiWorker{newPhiWorker()}); err != nil {
				t.Fatal(err)
			}
			for w := range v {
				wt := p.words[w]
				pick, total := scanRest(p.Column(w), wt.cut, math.Inf(1))
				if total != wt.rest {
					t.Fatalf("vector %v, K = %d, word %d: scan total %v; R_w %v", vector, k, w, total, wt.rest)
				}
				if total == 0 {
					continue
				}
				// v in the middle of the picked entry's interval picks it.
				y := float64(p.Column(w)[pick])
				if got, _ := scanRest(p.Column(w), wt.cut, total-y/2); got != pick {
					t.Fatalf("vector %v, K = %d, word %d: v inside the last entry picks %d; want %d", vector, k, w, got, pick)
				}
			}
		}
	}
}
