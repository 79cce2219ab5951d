//go:build amd64 && !purego

package fednmf

import "golang.org/x/sys/cpu"

// pairKernelAVX2 reports whether the pair kernels of kernel_amd64.s may
// run: they need AVX2 and FMA.
var pairKernelAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// pairsForwardAVX2 is pairsForwardGo on np ≥ 1 pairs of units units and
// a width m, a multiple of 32.
//
//go:noescape
func pairsForwardAVX2(w2t, h1 *float64, act, nAct *int32, np, units, m int, b2, w3, h2, t *float64)

// pairsBackwardAVX2 is pairsBackwardGo on np ≥ 1 pairs of units units
// and a width m, a multiple of 32, but for gw2t (pairsGradW2AVX2's).
//
//go:noescape
func pairsBackwardAVX2(w2t, h1 *float64, act, nAct *int32, np, units, m int, h2, gt, w3, gw3, gb2, dz1 *float64)

// pairsGradW2AVX2 adds to each row u of gw2t (units rows of m, a multiple
// of 32) Σ_q h1_q[u]·dz2_q over the pairs q listed in pairs[u·np :
// u·np+nPairs[u]].
//
//go:noescape
func pairsGradW2AVX2(gw2t, h1, dz2 *float64, pairs, nPairs *int32, np, units, m int)
