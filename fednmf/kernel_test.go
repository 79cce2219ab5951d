//go:build amd64 && !purego

package fednmf

import (
	"math"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// The AVX2 pair kernels against the plain-Go ones. Both add the same
// terms; they differ in rounding only: the assembly fuses each multiply
// and add (one rounding instead of two) and sums the dot products and
// w3·h2 in lanes rather than left to right. By the standard bound on
// floating-point summation, a sum of n terms computed in any order is
// within γ_n·Σ|terms| of the exact value, γ_n = n·ε/(1 − n·ε) with ε =
// 2⁻⁵³; two orders are then within 2·γ_n·Σ|terms| of each other. The
// tests allow that, with n the number of terms plus one (the rounding of
// a product), and for T (a sum over h₂ that carries its own error) add
// Σ_o |w3_o|·(h₂'s allowance). Everything else (dz2, gb2, gw3, gw2t) is
// one product and one sum per pair, and the pairs are added in the same
// order; the gradients run over the whole group, so their allowance is
// 2·γ_2 per pair and entry of the sum of magnitudes.

const unitRoundoff = 0x1p-53

func gamma(n int) float64 { return float64(n) * unitRoundoff / (1 - float64(n)*unitRoundoff) }

// kernelGroup is a random group of np pairs: W2ᵀ (units×m), h1 with the
// given share of zeros (and its lists of active units), b2, w3, t's start
// and the gradients gt.
type kernelGroup struct {
	units, m           int
	w2t, h1, b2, w3    []float64
	t, gt              []float64
	act, nAct          []int32
	gw2t, gw3, gb2, d1 []float64 // the gradients' start
}

func newKernelGroup(np, units, m int, zeros float64, seed uint64) kernelGroup {
	r := rng.Derive(seed, "kernel")
	sym := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = 2*r.Float64() - 1
		}
		return s
	}
	kg := kernelGroup{units: units, m: m, w2t: sym(units * m), h1: make([]float64, np*units), b2: sym(m), w3: sym(m),
		t: sym(np), gt: sym(np), act: make([]int32, np*units), nAct: make([]int32, np),
		gw2t: sym(units * m), gw3: sym(m), gb2: sym(m), d1: make([]float64, np*units)}
	for q := range np {
		for u := range units {
			if r.Float64() >= zeros {
				kg.h1[q*units+u] = 3 * r.Float64()
				kg.act[q*units+int(kg.nAct[q])] = int32(u)
				kg.nAct[q]++
			}
		}
	}
	return kg
}

func TestPairKernels(t *testing.T) {
	if !pairKernelAVX2 {
		t.Skip("no AVX2 and FMA on this machine: only the plain-Go kernels run")
	}
	tests := []struct {
		name      string
		np, units int
		m         int
		zeros     float64
	}{
		{name: "critic's shape, half zeros", np: pairGroup, units: Hidden1, m: Hidden2, zeros: 0.5},
		{name: "no zeros", np: 8, units: Hidden1, m: Hidden2, zeros: 0},
		{name: "all zeros", np: 4, units: Hidden1, m: Hidden2, zeros: 1},
		{name: "four pairs, 8 units, width 16", np: 4, units: 8, m: 16, zeros: 0.5},
		{name: "12 pairs, 24 units, width 48", np: 12, units: 24, m: 48, zeros: 0.3},
		{name: "8 pairs, 16 units, width 32", np: 8, units: 16, m: 32, zeros: 0.4},
	}
	kernels := []pairKernel{pairAVX2}
	if pairKernelAVX512 {
		kernels = append(kernels, pairAVX512)
	}
	for _, kern := range kernels {
		for _, tt := range tests {
			if kern == pairAVX512 && tt.units%16 != 0 {
				continue
			}
			testPairKernel(t, kern, tt.name, tt.np, tt.units, tt.m, tt.zeros)
		}
	}
}

// testPairKernel checks the kernel kern against the plain-Go pair layers
// on groups of np pairs with the given share of zeros in h1.
func testPairKernel(t *testing.T, kern pairKernel, name string, np, units, m int, zeros float64) {
	t.Helper()
	name = [...]string{pairGo: "go", pairAVX2: "avx2", pairAVX512: "avx512"}[kern] + ", " + name
	for seed := range uint64(10) {
		kg := newKernelGroup(np, units, m, zeros, seed)
		var active int
		for _, n := range kg.nAct {
			active += int(n)
		}
		if zeros == 1 && active != 0 || zeros == 0 && active != np*units {
			t.Fatalf("%s: %d active units of %d: the case tests nothing", name, active, np*units)
		}
		// Forward.
		want, wantT := make([]float64, np*m), slices.Clone(kg.t)
		pairsForwardGo(kg.w2t, kg.h1, kg.act, kg.nAct, kg.b2, kg.w3, want, wantT)
		got, gotT := make([]float64, np*m), slices.Clone(kg.t)
		w2p := make([]float64, len(kg.w2t))
		packPanels(w2p, kg.w2t, units, m, kern.panel())
		pairsForward(kern, w2p, kg.h1, kg.act, kg.nAct, kg.b2, kg.w3, got, gotT, make([]float64, 4*np), make([]int32, np/pairQuad*(units+1)))
		for q := range np {
			n := int(kg.nAct[q]) + 2
			tolT := 2 * gamma(m+2) * math.Abs(kg.t[q])
			for o := range m {
				abs := math.Abs(kg.b2[o])
				for _, u := range kg.act[q*units : q*units+int(kg.nAct[q])] {
					abs += math.Abs(kg.h1[q*units+int(u)] * kg.w2t[int(u)*m+o])
				}
				tol := 2 * gamma(n) * abs
				if i := q*m + o; math.Abs(got[i]-want[i]) > tol {
					t.Errorf("%s, seed %d: h2[%d][%d] = %.17g; want %.17g (±%.3g)", name, seed, q, o, got[i], want[i], tol)
				}
				tolT += math.Abs(kg.w3[o])*tol + 2*gamma(m+2)*math.Abs(kg.w3[o]*want[q*m+o])
			}
			if math.Abs(gotT[q]-wantT[q]) > tolT {
				t.Errorf("%s, seed %d: T[%d] = %.17g; want %.17g (±%.3g)", name, seed, q, gotT[q], wantT[q], tolT)
			}
		}
		// Backward from the same h2 (the reference's), into gradients
		// that already hold something.
		h2 := slices.Clone(want)
		wantH2, wantGw2t, wantGw3, wantGb2, wantD1 := slices.Clone(h2), slices.Clone(kg.gw2t), slices.Clone(kg.gw3), slices.Clone(kg.gb2), slices.Clone(kg.d1)
		pairsBackwardGo(kg.w2t, wantGw2t, kg.h1, kg.act, kg.nAct, wantH2, kg.gt, kg.w3, wantGw3, wantGb2, wantD1)
		gotH2, gw2t, gw3, gb2, d1 := slices.Clone(h2), slices.Clone(kg.gw2t), slices.Clone(kg.gw3), slices.Clone(kg.gb2), slices.Clone(kg.d1)
		w2 := make([]float64, len(kg.w2t))
		for u := range units {
			for o := range m {
				w2[o*units+u] = kg.w2t[u*m+o]
			}
		}
		w2q := make([]float64, len(w2))
		packPanels(w2q, w2, m, units, kern.panel())
		pairsBackward(kern, w2q, kg.w2t, gw2t, kg.h1, kg.act, kg.nAct, gotH2, kg.gt, kg.w3, gw3, gb2, d1, make([]uint16, np*m/16), make([]int32, chunkListsLen(np, m)))
		for o := range m {
			absGw3, absGb2 := math.Abs(kg.gw3[o]), math.Abs(kg.gb2[o])
			for q := range np {
				absGw3 += math.Abs(kg.gt[q] * h2[q*m+o])
				absGb2 += math.Abs(wantH2[q*m+o])
				if i := q*m + o; gotH2[i] != wantH2[i] {
					t.Errorf("%s, seed %d: dz2[%d][%d] = %.17g; want %.17g", name, seed, q, o, gotH2[i], wantH2[i])
				}
			}
			if tol := 2 * gamma(np+1) * absGw3; math.Abs(gw3[o]-wantGw3[o]) > tol {
				t.Errorf("%s, seed %d: gw3[%d] = %.17g; want %.17g (±%.3g)", name, seed, o, gw3[o], wantGw3[o], tol)
			}
			if tol := 2 * gamma(np+1) * absGb2; math.Abs(gb2[o]-wantGb2[o]) > tol {
				t.Errorf("%s, seed %d: gb2[%d] = %.17g; want %.17g (±%.3g)", name, seed, o, gb2[o], wantGb2[o], tol)
			}
			for u := range units {
				abs := math.Abs(kg.gw2t[u*m+o])
				for q := range np {
					abs += math.Abs(kg.h1[q*units+u] * wantH2[q*m+o])
				}
				i := u*m + o
				if tol := 2 * gamma(np+1) * abs; math.Abs(gw2t[i]-wantGw2t[i]) > tol {
					t.Errorf("%s, seed %d: gw2t[%d][%d] = %.17g; want %.17g (±%.3g)", name, seed, u, o, gw2t[i], wantGw2t[i], tol)
				}
			}
		}
		for q := range np {
			for u := range units {
				i := q*units + u
				if kg.h1[i] == 0 {
					if d1[i] != 0 {
						t.Errorf("%s, seed %d: dz1[%d][%d] = %g at an inactive unit; want 0", name, seed, q, u, d1[i])
					}
					continue
				}
				var abs float64
				for o := range m {
					abs += math.Abs(wantH2[q*m+o] * kg.w2t[u*m+o])
				}
				if tol := 2 * gamma(m+1) * abs; math.Abs(d1[i]-wantD1[i]) > tol {
					t.Errorf("%s, seed %d: dz1[%d][%d] = %.17g; want %.17g (±%.3g)", name, seed, q, u, d1[i], wantD1[i], tol)
				}
			}
		}
	}
}

// TestSmileUsesKernel checks that the critic's workspace takes the AVX2
// kernels where they may run, so that the other tests of the critic
// (TestSmileGradient among them) exercise them.
func TestSmileUsesKernel(t *testing.T) {
	want := pairAVX2
	if pairKernelAVX512 {
		want = pairAVX512
	}
	if got := newSmileWork(critic{3, 2}, 4).kern; got != want {
		t.Errorf("newSmileWork(...).kern = %d; want %d (the CPU's AVX2, FMA and AVX-512VL)", got, want)
	}
}
