package lda

import (
	"math"
	"strconv"
	"testing"

	"github.com/fedtopic/fedtopic/internal/parallel"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// denseCase is one input of denseDraw: K counts, factors q (zero past K),
// the token's topic and its weight.
type denseCase struct {
	col  []int32
	q    []float64
	cur  int
	wcur float64
}

func newDenseCase(r interface {
	IntN(int) int
	Float64() float64
}, k int, sparse bool) denseCase {
	c := denseCase{col: make([]int32, k), q: parallel.Aligned[float64]((k + 7) &^ 7), cur: r.IntN(k)}
	for i := range c.col {
		if !sparse || i == k/2 {
			c.col[i] = int32(r.IntN(50))
		}
		c.q[i] = (float64(r.IntN(5)) + 0.1) / (float64(r.IntN(1000)) + 100)
	}
	c.wcur = (float64(c.col[c.cur]) + 0.01) * c.q[c.cur] * r.Float64()
	return c
}

// weights returns the case's K weights.
func (c denseCase) weights(beta float64) []float64 {
	w := make([]float64, len(c.col))
	for i, n := range c.col {
		w[i] = (float64(n) + beta) * c.q[i]
	}
	w[c.cur] = c.wcur
	return w
}

// denseLoops returns the loops of denseDraw this host can run, the last
// the one it runs by default, and a function that selects one by name and
// returns a function that restores the default.
func denseLoops() ([]string, func(string) func()) {
	loops := []string{"go"}
	if useDenseAVX2 {
		loops = append(loops, "avx2")
	}
	if useLanesAVX512 {
		loops = append(loops, "avx512")
	}
	return loops, func(name string) func() {
		v512, v2 := useLanesAVX512, useDenseAVX2
		useLanesAVX512, useDenseAVX2 = name == "avx512", name == "avx2"
		return func() { useLanesAVX512, useDenseAVX2 = v512, v2 }
	}
}

// TestDenseDraw checks, for every K from 1 to 200, including columns whose
// counts are all zero but one and units at 0 and just below 1, that
// denseDraw's running sums follow the lanes' order (to a relative 1e-12 of
// a plain sum in that order: the rounds of the lanes' totals round
// otherwise), that the topic it returns is the one whose interval of that
// order holds unit·total, and that every loop the host can run (Go,
// AVX2, AVX-512) gives the same bits and the same topic.
func TestDenseDraw(t *testing.T) {
	r := rng.Derive(1, "dense draw")
	const beta = 0.01
	for k := 1; k <= 200; k++ {
		order := denseOrder(k)
		g := (k + 7) / 8
		for trial := range 6 {
			c := newDenseCase(r, k, trial%3 == 1)
			unit := [...]float64{0, r.Float64(), 1 - 0x1p-53}[trial%3]
			sums := parallel.Aligned[uint64](8 * g)
			topic := denseDraw(c.col, c.q, c.cur, c.wcur, beta, unit, sums, order)
			w := c.weights(beta)
			var total float64
			for _, x := range w {
				total += x
			}
			// The plain running sums in the lanes' order, and the
			// interval of the topic drawn.
			var acc, lo, hi float64
			found := false
			for _, tp := range order {
				if int(tp) >= k {
					continue
				}
				prev := acc
				acc += w[tp]
				if got := math.Float64frombits(sums[int(tp)]); math.Abs(got-partialLane(w, int(tp), g)) > 1e-12*total {
					t.Fatalf("K = %d, trial %d: running sum of lane %d to topic %d = %g; want %g", k, trial, int(tp)%8, tp, got, partialLane(w, int(tp), g))
				}
				if int(tp) == topic {
					lo, hi, found = prev, acc, true
				}
			}
			u := unit * total
			switch {
			case topic == k:
				if total-u > 1e-12*total {
					t.Fatalf("K = %d, trial %d: K for u = %g of %g", k, trial, u, total)
				}
			case !found || topic > k:
				t.Fatalf("K = %d, trial %d: topic %d", k, trial, topic)
			case u < lo-1e-12*total || u > hi+1e-12*total:
				t.Fatalf("K = %d, trial %d: topic %d covers [%g, %g), u = %g", k, trial, topic, lo, hi, u)
			}
			loops, use := denseLoops()
			for _, loop := range loops[:len(loops)-1] {
				other := parallel.Aligned[uint64](8 * g)
				restore := use(loop)
				got := denseDraw(c.col, c.q, c.cur, c.wcur, beta, unit, other, order)
				restore()
				if got != topic {
					t.Fatalf("K = %d, trial %d: topic %d with the %s loop, %d with the %s loop", k, trial, got, loop, topic, loops[len(loops)-1])
				}
				for i := range sums {
					if other[i] != sums[i] {
						t.Fatalf("K = %d, trial %d: running sum %d: %g with the %s loop, %g with the %s loop", k, trial, i, math.Float64frombits(other[i]), loop, math.Float64frombits(sums[i]), loops[len(loops)-1])
					}
				}
			}
		}
	}
}

// partialLane returns the plain sum of the weights of topic t's lane up to
// and including t's group.
func partialLane(w []float64, t, g int) float64 {
	var s float64
	for x := t % 8; x <= t; x += 8 {
		s += w[x]
	}
	return s
}

// TestDenseDrawDistribution draws 10⁶ topics from denseDraw at K = 13 and
// K = 50 (a partial last group, the token's topic in each group) with
// every loop the host can run, and checks their
// frequencies against the weights with a chi-square test at a
// false-failure rate of 10⁻⁶ per test (fixed seed).
func TestDenseDrawDistribution(t *testing.T) {
	const draws = 1_000_000
	loops, use := denseLoops()
	for _, k := range []int{13, 50} {
		for _, loop := range loops {
			r := rng.Derive(2, "dense draw distribution", uint64(k))
			c := newDenseCase(r, k, false)
			// Weights within a factor of 100, so that every expected
			// count is in the hundreds.
			for i := range k {
				c.col[i] = int32(1 + r.IntN(20))
				c.q[i] = float64(1+r.IntN(4)) / 1000
			}
			c.wcur = (float64(c.col[c.cur]) + 0.01) * c.q[c.cur] / 2
			restore := use(loop)
			order := denseOrder(k)
			sums := parallel.Aligned[uint64]((k + 7) &^ 7)
			obs := make([]int, k)
			for range draws {
				obs[min(denseDraw(c.col, c.q, c.cur, c.wcur, 0.01, unit(r.Uint64()), sums, order), k-1)]++
			}
			restore()
			chi, cells := chiSquare(t, obs, c.weights(0.01))
			if crit := chiCritical(cells); chi > crit {
				t.Errorf("K = %d, %s loop: chi-square %.1f over %d cells > %.1f", k, loop, chi, cells, crit)
			}
		}
	}
}

// TestDenseOrder checks that denseOrder lists every topic once, lane by
// lane and within a lane by group.
func TestDenseOrder(t *testing.T) {
	for _, k := range []int{1, 8, 13, 50, 64, 160} {
		order := denseOrder(k)
		if len(order) != k {
			t.Fatalf("K = %d: %d positions", k, len(order))
		}
		seen := make([]bool, k)
		for p, tp := range order {
			if int(tp) >= k || seen[tp] || (p > 0 && (tp%8 < order[p-1]%8 || (tp%8 == order[p-1]%8 && tp < order[p-1]))) {
				t.Fatalf("K = %d: position %d holds topic %d", k, p, tp)
			}
			seen[tp] = true
		}
	}
}

// BenchmarkDenseDraw times denseDraw at K = 50 and 150, each draw's token
// topic being the draw before's, as in a document's tokens, with every
// loop the host can run: ns per draw.
func BenchmarkDenseDraw(b *testing.B) {
	loops, use := denseLoops()
	for _, k := range []int{50, 150} {
		for _, loop := range loops {
			b.Run("K="+strconv.Itoa(k)+"/"+loop, func(b *testing.B) {
				defer use(loop)()
				r := rng.Derive(3, "dense draw bench")
				c := newDenseCase(r, k, false)
				order := denseOrder(k)
				sums := parallel.Aligned[uint64]((k + 7) &^ 7)
				units := make([]float64, 1024)
				for i := range units {
					units[i] = r.Float64()
				}
				cur := 0
				for i := 0; b.Loop(); i++ {
					cur = min(denseDraw(c.col, c.q, cur, c.wcur, 0.01, units[i%1024], sums, order), k-1)
				}
			})
		}
	}
}
