package lda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedtopic/fedtopic/internal/rng"
)

func newSource(seed uint64) *rand.ChaCha8 { return rand.NewChaCha8(rng.Key(seed, "test")) }

// TestGammaKS compares the gamma samplers (gammaSmall below shape 1,
// gammaMT from 1) with gonum's Gamma CDF by a one-sample Kolmogorov–Smirnov
// test: with n = 5000 the critical D for a false-failure rate of 1e-6 per
// shape is √(ln(2/1e-6)/(2n)) = 0.0380 (RELIABILITY.md N-2); ten shapes give
// a test-wide rate of 1e-5.
func TestGammaKS(t *testing.T) {
	const n = 5000
	crit := math.Sqrt(math.Log(2/1e-6) / (2 * n))
	// 0.01 uses the integer-power path (1/a = 100), 0.013 the general one.
	for _, a := range []float64{0.01, 0.013, 0.1, 0.5, 0.99, 1, 1.01, 2.5, 30, 1000} {
		t.Run(fmt.Sprint(a), func(t *testing.T) {
			src := rand.NewChaCha8(rng.Key(2, "gamma", a))
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

// TestDrawPhiMean checks that drawPhi draws each row from Dirichlet(C_k· +
// β): the sample mean of every checked entry over many draws must be within
// z·σ/√n of (C_kw + β)/(C_k + Vβ), σ² = a_w(a_0 − a_w)/(a_0²(a_0 + 1)); z
// gives a false-failure rate of 1e-6 over all checked entries of a case.
// "two blocks" spans two word blocks, so the merge of block sums is
// exercised; "tiny sums" has V·β = 0.03, so an empty topic's sum often falls
// below 2⁻⁶⁴ and takes the exact second pass.
func TestDrawPhiMean(t *testing.T) {
	tests := []struct {
		name   string
		k, v   int
		beta   float64
		counts map[[2]int]int32 // (topic, word) → C_kw
		check  [][2]int
	}{
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
			counts := make([]int32, k*v)
			for kw, c := range tt.counts {
				counts[kw[1]*k+kw[0]] = c
			}
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
