//go:build amd64 && !purego

package fednmf

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// The AVX2 kernels of the pass over W against the plain-Go forms. The
// entry s of a row of W·M = w − step·(w·G) is a sum of K + 1 terms, w_s
// and −step·w_t·G_ts for each t. Gonum's product adds the K products in
// order (each rounded, then each sum), then Go rounds step·acc and the
// difference: every term passes through at most K + 2 roundings. The
// kernel fuses each multiply and add (K roundings) and the final
// w − step·acc (one more). By the standard bound on floating-point
// summation, each result is then within γ_{K+2}·(|w_s| + |step|·Σ_t
// |w_t·G_ts|) of the exact value, γ_n = n·ε/(1 − n·ε) with ε = 2⁻⁵³
// (gamma, in kernel_test.go), and the two are within twice that of each
// other. With a touched row's step·p_s added (one more term and rounding,
// the same code in both) the allowance is 2·γ_{K+3} of the sum of the
// magnitudes with |step·p_s|; the projection onto W ≥ 0 is exact and
// moves no two values further apart.

// stepRowsCase is a random n×K block of W with entries in [−1, 1), a
// random K×K G and the step.
type stepRowsCase struct {
	n, k    int
	w, g    []float64
	step    float64
	touched []bool
	p       []float64
}

func newStepRowsCase(n, k int, step float64, seed uint64) stepRowsCase {
	r := rng.Derive(seed, "gemm")
	sym := func(m int) []float64 {
		s := make([]float64, m)
		for i := range s {
			s[i] = 2*r.Float64() - 1
		}
		return s
	}
	c := stepRowsCase{n: n, k: k, w: sym(n * k), g: sym(k * k), step: step, touched: make([]bool, n), p: make([]float64, n*k)}
	for i := range n {
		if r.Float64() < 0.3 {
			c.touched[i] = true
			copy(c.p[i*k:(i+1)*k], sym(k))
		}
	}
	return c
}

// allowance returns the allowed difference between the two forms at row
// i, entry s, with p's term when the row is touched (n the number of
// roundings).
func (c stepRowsCase) allowance(i, s, n int) float64 {
	k := c.k
	abs := math.Abs(c.w[i*k+s])
	for t := range k {
		abs += math.Abs(c.step * c.w[i*k+t] * c.g[t*k+s])
	}
	abs += math.Abs(c.step * c.p[i*k+s])
	return 2 * gamma(n) * abs
}

var stepRowsShapes = []struct{ n, k int }{
	{1, 1}, {5, 1}, {3, 3}, {7, 3}, {4, 4}, {9, 5}, {8, 12}, {6, 13}, {65, 50}, {130, 50}, {64, 50},
	{67, 64}, {13, 64}, {66, 67}, {2, 67},
}

func TestStepRowsKernel(t *testing.T) {
	if !gemmKernelAVX2 {
		t.Skip("no AVX2 and FMA on this machine: only the plain-Go pass over W runs")
	}
	for _, sh := range stepRowsShapes {
		for _, step := range []float64{0.37, 3} {
			for seed := range uint64(5) {
				name := fmt.Sprintf("%d×%d, step %g, seed %d", sh.n, sh.k, step, seed)
				c := newStepRowsCase(sh.n, sh.k, step, seed)
				nk := sh.n * sh.k
				want := make([]float64, nk)
				stepRowsGo(c.w, c.g, want, c.k, c.step)
				// Past the end: the masked stores must leave it.
				got := make([]float64, nk+8)
				for i := range got {
					got[i] = math.NaN()
				}
				w := slices.Clone(c.w)
				stepRows(true, w, c.g, got[:nk], c.k, c.step, make([]float64, 8*c.k))
				if !slices.Equal(w, c.w) {
					t.Errorf("%s: stepRows changed W", name)
				}
				for i := nk; i < len(got); i++ {
					if !math.IsNaN(got[i]) {
						t.Fatalf("%s: stepRows wrote %g past the end of its output, at %d", name, got[i], i-nk)
					}
				}
				for i := range c.n {
					for s := range c.k {
						j := i*c.k + s
						if tol := c.allowance(i, s, c.k+2); math.Abs(got[j]-want[j]) > tol {
							t.Errorf("%s: out[%d][%d] = %.17g; want %.17g (±%.3g)", name, i, s, got[j], want[j], tol)
						}
					}
				}
				// Each row alone gives the same bits as among the others,
				// whether it falls in a group of four or among the last rows.
				for i := range c.n {
					one := make([]float64, c.k)
					stepRows(true, c.w[i*c.k:(i+1)*c.k], c.g, one, c.k, c.step, make([]float64, 8*c.k))
					if !slices.Equal(one, got[i*c.k:(i+1)*c.k]) {
						t.Errorf("%s: row %d alone = %v; among the others %v", name, i, one, got[i*c.k:(i+1)*c.k])
					}
				}
			}
		}
	}
}

func TestProjectKernel(t *testing.T) {
	if !gemmKernelAVX2 {
		t.Skip("no AVX2 and FMA on this machine: only the plain-Go projection runs")
	}
	special := []float64{0, math.Copysign(0, -1), -1e-310, 1e-310, -1, 2, math.Inf(1), math.Inf(-1), math.NaN(), -math.MaxFloat64, -3}
	r := rng.Derive(1, "project")
	for _, sh := range []struct{ n, k int }{{1, 1}, {3, 1}, {1, 3}, {5, 3}, {2, 4}, {3, 5}, {7, 13}, {4, 50}, {3, 67}} {
		for seed := range 5 {
			nk := sh.n * sh.k
			u := make([]float64, nk)
			for i := range u {
				if seed == 0 {
					u[i] = special[i%len(special)]
				} else {
					u[i] = 2*r.Float64() - 1
				}
			}
			want, got := make([]float64, nk+4), make([]float64, nk+4)
			for i := range got {
				got[i], want[i] = 7, 7
			}
			wantNeg, gotNeg := make([]int32, sh.n), make([]int32, sh.n)
			wantTotal := projectGo(want[:nk], u, sh.k, wantNeg)
			gotTotal := project(true, got[:nk], u, sh.k, gotNeg)
			if gotTotal != wantTotal || !slices.Equal(gotNeg, wantNeg) {
				t.Errorf("%d×%d, seed %d: %d entries below zero, by row %v; want %d, %v", sh.n, sh.k, seed, gotTotal, gotNeg, wantTotal, wantNeg)
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Errorf("%d×%d, seed %d: w[%d] = %g (%#x); want %g (%#x)", sh.n, sh.k, seed, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
				}
			}
		}
	}
}

// TestRank2Kernel checks the rank-2 update of the correction of Q: each
// entry is c + u_t·u_s − m_t·m_s, three terms through at most three
// roundings in either form (the kernel fuses them into two), so the two
// are within 2·γ_3 of the sum of the magnitudes; below the diagonal c is
// left as it was.
func TestRank2Kernel(t *testing.T) {
	if !gemmKernelAVX2 {
		t.Skip("no AVX2 and FMA on this machine: only the plain-Go update runs")
	}
	r := rng.Derive(1, "rank2")
	sym := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = 2*r.Float64() - 1
		}
		return s
	}
	for _, k := range []int{1, 2, 3, 4, 5, 8, 13, 50, 64, 67} {
		for seed := range 3 {
			c, u, m := sym(k*k), sym(k), sym(k)
			want, got := slices.Clone(c), slices.Clone(c)
			rank2Go(want, u, m)
			rank2(true, got, u, m)
			for i := range k {
				for j := range k {
					x := i*k + j
					if j < i {
						if math.Float64bits(got[x]) != math.Float64bits(c[x]) {
							t.Errorf("K = %d, seed %d: c[%d][%d] = %g below the diagonal; want %g as it was", k, seed, i, j, got[x], c[x])
						}
						continue
					}
					tol := 2 * gamma(3) * (math.Abs(c[x]) + math.Abs(u[i]*u[j]) + math.Abs(m[i]*m[j]))
					if math.Abs(got[x]-want[x]) > tol {
						t.Errorf("K = %d, seed %d: c[%d][%d] = %.17g; want %.17g (±%.3g)", k, seed, i, j, got[x], want[x], tol)
					}
				}
			}
		}
	}
}

// TestUpdateKernel runs a chunk's update of W through both forms: the same
// rows touched and cleared, W within the allowance, and the same number of
// clipped entries but for those within the allowance of zero.
func TestUpdateKernel(t *testing.T) {
	if !gemmKernelAVX2 {
		t.Skip("no AVX2 and FMA on this machine: only the plain-Go pass over W runs")
	}
	for _, sh := range []struct{ n, k int }{{7, 1}, {blockRows + 3, 3}, {2*blockRows + 5, 50}, {blockRows - 1, 67}, {70, 64}} {
		for seed := range uint64(3) {
			name := fmt.Sprintf("%d×%d, seed %d", sh.n, sh.k, seed)
			c := newStepRowsCase(sh.n, sh.k, 0.5, seed)
			run := func(avx2 bool) (w, p []float64, touched []bool, ch *chunkWork) {
				w, p, touched = slices.Clone(c.w), slices.Clone(c.p), slices.Clone(c.touched)
				ch = newChunkWork(c.k)
				ch.avx2 = avx2
				ch.update(w, p, touched, c.g, c.k, c.step, true)
				return w, p, touched, ch
			}
			want, _, _, wantCh := run(false)
			got, p, touched, gotCh := run(true)
			if slices.Contains(touched, true) || slices.ContainsFunc(p, func(x float64) bool { return x != 0 }) {
				t.Errorf("%s: touched rows or P not cleared", name)
			}
			var near int
			for i := range c.n {
				for s := range c.k {
					j := i*c.k + s
					tol := c.allowance(i, s, c.k+3)
					if math.Abs(got[j]-want[j]) > tol {
						t.Errorf("%s: W[%d][%d] = %.17g; want %.17g (±%.3g)", name, i, s, got[j], want[j], tol)
					}
					if want[j] <= tol {
						near++
					}
				}
			}
			if d := gotCh.clipped - wantCh.clipped; d > near || -d > near || wantCh.clipped == 0 {
				t.Errorf("%s: %d entries clipped; want %d (%d within the allowance of zero)", name, gotCh.clipped, wantCh.clipped, near)
			}
		}
	}
}

// TestChunkUsesKernel checks that the pass over W takes the AVX2 kernels
// where they may run, so that the tests of the step (TestStepCarriesGram
// among them) exercise them.
func TestChunkUsesKernel(t *testing.T) {
	if got, want := newChunkWork(3).avx2, gemmKernelAVX2; got != want {
		t.Errorf("newChunkWork(3).avx2 = %v; want %v (the CPU's AVX2 and FMA)", got, want)
	}
}
