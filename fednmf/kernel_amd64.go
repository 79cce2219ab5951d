//go:build amd64 && !purego

package fednmf

import "golang.org/x/sys/cpu"

// pairKernelAVX2 reports whether the pair kernels of kernel_amd64.s may
// run: they need AVX2 and FMA.
var pairKernelAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// pairKernelAVX512 reports whether the wider pair kernels may run: they
// also need AVX-512F and VL (for sixteen more vector registers).
var pairKernelAVX512 = pairKernelAVX2 && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL

// pairsForwardDenseAVX2 is pairsForwardGo on np pairs (a multiple of 4)
// of units units and a width m (a multiple of 8), but for t: it adds each
// pair's w3·h2 to its four lanes of tv (np rows of 4) instead.
//
//go:noescape
func pairsForwardDenseAVX2(w2t, h1 *float64, np, units, m int, b2, w3, h2, tv *float64)

// pairsGradZ2AVX2 is the first part of pairsBackwardGo on np ≥ 1 pairs
// and a width m (a multiple of 16): it adds gt_q·h2_q to gw3 and dz2 =
// gt_q·w3 ⊙ [h2_q > 0] to gb2, and overwrites h2 with dz2. mask (np·m/16
// words) gets [h2_q > 0] in bits, 16 outputs a word.
//
//go:noescape
func pairsGradZ2AVX2(np, m int, h2, gt, w3, gw3, gb2 *float64, mask *uint16)

// pairsGradZ1DenseAVX2 sets dz1_q to (dz2_q·W2) ⊙ [h1_q > 0] for np pairs
// (a multiple of 4), W2 in w2 (m rows of units, units a multiple of 8),
// dz2 np rows of m.
//
//go:noescape
func pairsGradZ1DenseAVX2(w2, dz2, h1 *float64, np, units, m int, dz1 *float64)

// pairsGradW2DenseAVX2 adds Σ_q h1_q[u]·dz2_q to each row u of gw2t
// (units rows of m, units a multiple of 4 and m of 8) over np pairs, in
// order.
//
//go:noescape
func pairsGradW2DenseAVX2(gw2t, h1, dz2 *float64, np, units, m int)

// pairsForwardDenseAVX512 is pairsForwardDenseAVX2 with m a multiple of
// 16, over the units list gives for each four pairs (unionLists).
//
//go:noescape
func pairsForwardDenseAVX512(w2t, h1 *float64, np, units, m int, b2, w3, h2, tv *float64, list *int32)

// pairsGradZ1DenseAVX512 is pairsGradZ1DenseAVX2 with units a multiple of
// 16, over the outputs list gives for each four pairs and chunk of 128
// (chunkLists).
//
//go:noescape
func pairsGradZ1DenseAVX512(w2, dz2, h1 *float64, np, units, m int, dz1 *float64, list *int32)

// pairsGradW2DenseAVX512 is pairsGradW2DenseAVX2 with m a multiple of 16.
//
//go:noescape
func pairsGradW2DenseAVX512(gw2t, h1, dz2 *float64, np, units, m int)
