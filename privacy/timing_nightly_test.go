//go:build nightly

package privacy

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// The timing side-channel test times 10⁵ single draws
// of each integer sampler and checks that the time a draw takes says
// nothing about the size of the noise it returns. It is nightly, not part
// of the unit tests: run it on a quiet machine with
//
//	go test -tags nightly -run TestTimingNightly -count 1 ./privacy
//
// Statistic: Spearman's rank correlation ρ between the draw times and |z|
// (mid-ranks for ties, which both have in plenty). Under independence every
// assignment of times to draws is equally likely, so ρ — the Pearson
// correlation of the two rank vectors — has mean 0 and variance exactly
// 1/(n−1), and √(n−1)·ρ is close to N(0, 1) at n = 10⁵. The test fails when
// |√(n−1)·ρ| > zCrit = 4.41717, the two-sided 1e-5 quantile. Ranks make it
// immune to the long tail of the times (preemption, interrupts), which
// would swamp a Pearson correlation of the raw values.
//
// To show that the harness can see a leak, the same statistic must flag a
// deliberately leaky sampler that spins |z| extra steps after each draw.

// timingDraws is the number of timed draws per sampler.
const timingDraws = 100000

// timeDraws times n single draws of sample and returns the times in
// nanoseconds and |z|.
func timeDraws(n int, sample func() int64) (ts, zs []float64) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for range 1000 { // warm the caches and the branch predictors
		sample()
	}
	ts, zs = make([]float64, n), make([]float64, n)
	for i := range n {
		t0 := time.Now()
		z := sample()
		ts[i] = float64(time.Since(t0))
		zs[i] = math.Abs(float64(z))
	}
	return ts, zs
}

// midRanks returns the ranks of xs, ties getting the mean of their ranks.
func midRanks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(xs[a], xs[b]) })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		mid := float64(i+j+1) / 2 // ranks i+1 … j
		for k := i; k < j; k++ {
			r[idx[k]] = mid
		}
		i = j
	}
	return r
}

// spearmanZ returns √(n−1)·ρ for Spearman's ρ of xs and ys; 0 when either
// is constant.
func spearmanZ(xs, ys []float64) float64 {
	a, b := midRanks(xs), midRanks(ys)
	n := float64(len(a))
	mean := (n + 1) / 2
	var sab, saa, sbb float64
	for i := range a {
		da, db := a[i]-mean, b[i]-mean
		sab += da * db
		saa += da * da
		sbb += db * db
	}
	if saa == 0 || sbb == 0 {
		return 0
	}
	return math.Sqrt(n-1) * sab / math.Sqrt(saa*sbb)
}

func TestTimingNightly(t *testing.T) {
	type sampler struct {
		name   string
		sample func(r *rand.Rand) int64
	}
	var samplers []sampler
	for _, scale := range []float64{16, 160, 3000} { // ε = 1 and 0.1 at the default grid; a two-table law
		d, err := NewDiscreteLaplace(scale)
		if err != nil {
			t.Fatal(err)
		}
		samplers = append(samplers, sampler{fmt.Sprintf("DiscreteLaplace(%v)", scale), d.Sample})
	}
	for _, sigma := range []float64{16, 32, 1000} { // the default grid puts σ at 16 to 32 steps
		d, err := NewDiscreteGaussian(sigma)
		if err != nil {
			t.Fatal(err)
		}
		samplers = append(samplers, sampler{fmt.Sprintf("DiscreteGaussian(%v)", sigma), d.Sample})
	}
	for _, s := range samplers {
		r := rng.Derive(31, "timing", s.name)
		ts, zs := timeDraws(timingDraws, func() int64 { return s.sample(r) })
		if z := spearmanZ(ts, zs); math.Abs(z) > zCrit {
			t.Errorf("%s: draw time and |noise| are correlated: √(n−1)·ρ = %.2f over %d draws; want |·| ≤ %v", s.name, z, timingDraws, zCrit)
		} else {
			t.Logf("%s: √(n−1)·ρ = %+.2f over %d draws", s.name, z, timingDraws)
		}
	}

	// The harness must see a leak: a sampler that spins |z| extra steps.
	d, err := NewDiscreteLaplace(16)
	if err != nil {
		t.Fatal(err)
	}
	r := rng.Derive(31, "timing", "leaky")
	var sink int64
	ts, zs := timeDraws(timingDraws, func() int64 {
		z := d.Sample(r)
		for k := range 4 * max(z, -z) {
			sink += k
		}
		return z
	})
	if z := spearmanZ(ts, zs); z < zCrit {
		t.Errorf("leaky sampler: √(n−1)·ρ = %.2f; want > %v (the test cannot see a leak)", z, zCrit)
	} else {
		t.Logf("leaky sampler (control): √(n−1)·ρ = %+.2f", z)
	}
	_ = sink
}
