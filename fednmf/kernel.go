package fednmf

import (
	"math/bits"

	"gonum.org/v1/gonum/floats"
)

// The critic's pair layers over a group of pairs. Each has a plain-Go
// form over the units of h₁ that relu left active (the reference, and the
// fallback where AVX2 and FMA are missing or the purego build tag is set)
// and, on amd64, AVX2+FMA and AVX-512VL forms in kernel_amd64.s that run
// them as register-blocked matrix products over every unit. The two sum in
// different orders and the assembly fuses multiplies and adds, so their
// results may differ in the last bits; each is deterministic, and a
// process uses one of them throughout (pairKernelAVX2 is fixed).
//
// The shapes: a group of np = len(nAct) pairs, q-th pair's units in
// h1[q·units : (q+1)·units] (units = len(h1)/np), its active units in
// act[q·units : q·units+nAct[q]], increasing; W2 transposed in w2t, units
// rows of m = len(b2) (or len(w3)); h2 np rows of m.

// pairsForwardGo sets each pair's row of h2 to relu(b2 + Σ_u h1_u·w2t[u])
// over its active units u and adds w3·h2 to its t.
func pairsForwardGo(w2t, h1 []float64, act, nAct []int32, b2, w3, h2, t []float64) {
	units, m := len(h1)/len(nAct), len(b2)
	for q, n := range nAct {
		x := h1[q*units : (q+1)*units]
		dst := h2[q*m : (q+1)*m]
		copy(dst, b2)
		for _, u := range act[q*units : q*units+int(n)] {
			floats.AddScaled(dst, x[u], w2t[int(u)*m:(int(u)+1)*m])
		}
		var s float64
		for o, v := range dst {
			if v > 0 {
				s += v * w3[o]
			} else {
				dst[o] = 0
			}
		}
		t[q] += s
	}
}

// pairsBackwardGo is the backward pass of pairsForwardGo for pairs whose
// T has gradient gt: with dz2 = gt_q·w3 ⊙ [h2_q > 0], it adds gt_q·h2_q
// to gw3, dz2 to gb2 and h1_u·dz2 to row u of gw2t for each active u, adds
// dz2·w2t[u] to dz1[q·units+u] for each active u, and overwrites h2 with
// dz2.
func pairsBackwardGo(w2t, gw2t, h1 []float64, act, nAct []int32, h2, gt, w3, gw3, gb2, dz1 []float64) {
	units, m := len(h1)/len(nAct), len(w3)
	for q, n := range nAct {
		row := h2[q*m : (q+1)*m]
		g := gt[q]
		for o, v := range row {
			gw3[o] += g * v
			if v > 0 {
				d := g * w3[o]
				row[o] = d
				gb2[o] += d
			} else {
				row[o] = 0
			}
		}
		for _, u := range act[q*units : q*units+int(n)] {
			r := int(u) * m
			floats.AddScaled(gw2t[r:r+m], h1[q*units+int(u)], row)
			dz1[q*units+int(u)] += floats.Dot(row, w2t[r:r+m])
		}
	}
}

// The AVX2 kernels treat the pair layers as dense matrix products, with
// four pairs (or four units) by eight outputs in registers, so that each
// load feeds two multiply-adds or more: the units relu left at zero are
// multiplied like the others and add exactly nothing. They need the
// number of pairs a multiple of pairQuad (the critic pads its pairs with
// zeros), the units a multiple of 8 and the width of the second layer a
// multiple of pairWidth. They read W2 (or W2ᵀ) in panels of the block's
// columns (packPanels), so that a block's rows are contiguous.
//
// Where AVX-512VL is present as well, the same products run with four by
// sixteen in registers (sixteen accumulators, in the registers only
// AVX-512 reaches), which keeps more multiply-adds in flight; they need
// the units a multiple of 16.
const (
	pairQuad  = 4
	pairWidth = 16
)

// pairKernel is a form of the pair layers.
type pairKernel int8

const (
	pairGo     pairKernel = iota // plain Go, over the active units
	pairAVX2                     // AVX2+FMA, four by eight in registers
	pairAVX512                   // AVX-512VL, four by sixteen in registers
)

// panel returns the width of the panels kern's assembly reads W2 in: the
// outputs (or units) it keeps in registers for each pair.
func (k pairKernel) panel() int {
	if k == pairAVX512 {
		return 16
	}
	return 8
}

// pairKernelFor returns the fastest form of the pair layers the CPU runs
// for units units and a second layer of width m.
func pairKernelFor(units, m int) pairKernel {
	switch {
	case m%pairWidth != 0:
		return pairGo
	case pairKernelAVX512 && units%16 == 0:
		return pairAVX512
	case pairKernelAVX2 && units%8 == 0:
		return pairAVX2
	}
	return pairGo
}

// pairsForward is pairsForwardGo, through the kernel kern; the assembly
// takes w2t in panels (packPanels(·, w2t, units, m, kern.panel())), and tv
// and ul as its scratch, at least 4·np and (np/4)·(units+1) long. It
// checks the shapes the assembly relies on.
func pairsForward(kern pairKernel, w2t, h1 []float64, act, nAct []int32, b2, w3, h2, t, tv []float64, ul []int32) {
	if kern == pairGo {
		pairsForwardGo(w2t, h1, act, nAct, b2, w3, h2, t)
		return
	}
	np, m := len(nAct), len(b2)
	if np == 0 {
		panic("fednmf: pairsForward: no pairs")
	}
	units := checkPairs(np, w2t, h1, m, len(w3))
	if len(h2) != np*m || len(t) != np || len(tv) < 4*np {
		panic("fednmf: pairsForward: outputs or scratch of the wrong shape")
	}
	tv = tv[:4*np]
	clear(tv)
	if kern == pairAVX512 {
		if len(ul) < np/pairQuad*(units+1) {
			panic("fednmf: pairsForward: scratch of the wrong shape")
		}
		unionLists(ul, h1, units)
		pairsForwardDenseAVX512(&w2t[0], &h1[0], np, units, m, &b2[0], &w3[0], &h2[0], &tv[0], &ul[0])
	} else {
		pairsForwardDenseAVX2(&w2t[0], &h1[0], np, units, m, &b2[0], &w3[0], &h2[0], &tv[0])
	}
	for q := range t {
		v := tv[4*q : 4*q+4]
		t[q] += (v[0] + v[1]) + (v[2] + v[3])
	}
}

// pairsBackward is pairsBackwardGo, through the kernel kern; the
// assembly reads W2 itself in w2 (m rows of units) in panels
// (packPanels(·, w2, m, units, kern.panel())) instead of w2t, sets dz1
// rather than add to it, and takes mask and ul as its scratch, at least
// np·m/16 and chunkListsLen(np, m) long.
func pairsBackward(kern pairKernel, w2, w2t, gw2t, h1 []float64, act, nAct []int32, h2, gt, w3, gw3, gb2, dz1 []float64, mask []uint16, ul []int32) {
	if kern == pairGo {
		pairsBackwardGo(w2t, gw2t, h1, act, nAct, h2, gt, w3, gw3, gb2, dz1)
		return
	}
	np, m := len(nAct), len(w3)
	if np == 0 {
		panic("fednmf: pairsBackward: no pairs")
	}
	units := checkPairs(np, w2t, h1, m, len(gw3), len(gb2))
	if len(h2) != np*m || len(gt) != np || len(gw2t) != len(w2t) || len(w2) != len(w2t) || len(dz1) != len(h1) {
		panic("fednmf: pairsBackward: gradients of the wrong shape")
	}
	if len(mask) < np*m/16 || len(ul) < chunkListsLen(np, m) {
		panic("fednmf: pairsBackward: scratch of the wrong shape")
	}
	pairsGradZ2AVX2(np, m, &h2[0], &gt[0], &w3[0], &gw3[0], &gb2[0], &mask[0])
	if kern == pairAVX512 {
		if units%16 != 0 {
			panic("fednmf: pairsBackward: units not a multiple of 16")
		}
		chunkLists(ul, mask, np, m)
		pairsGradZ1DenseAVX512(&w2[0], &h2[0], &h1[0], np, units, m, &dz1[0], &ul[0])
		pairsGradW2DenseAVX512(&gw2t[0], &h1[0], &h2[0], np, units, m)
		return
	}
	pairsGradZ1DenseAVX2(&w2[0], &h2[0], &h1[0], np, units, m, &dz1[0])
	pairsGradW2DenseAVX2(&gw2t[0], &h1[0], &h2[0], np, units, m)
}

// checkPairs panics unless the AVX2 kernels may run on a group of np
// pairs (a positive multiple of pairQuad, h1 np rows of units, units a
// positive multiple of 8, the width m a positive multiple of pairWidth,
// every length in lens m, w2t units rows of m) and returns units.
func checkPairs(np int, w2t, h1 []float64, m int, lens ...int) int {
	if np == 0 || np%pairQuad != 0 || m == 0 || m%pairWidth != 0 || len(h1)%np != 0 {
		panic("fednmf: pair kernel: pairs not a multiple of 4, width not a multiple of 16 or h1 of the wrong shape")
	}
	units := len(h1) / np
	if units == 0 || units%8 != 0 || len(w2t) != units*m {
		panic("fednmf: pair kernel: units not a multiple of 8 or W2 of the wrong shape")
	}
	for _, n := range lens {
		if n != m {
			panic("fednmf: pair kernel: vector of the wrong length")
		}
	}
	return units
}

// packPanels copies a (rows×m, row-major, m a multiple of width) into
// dst as m/width panels of rows×width, each row-major: a[r][o] goes to
// dst[(o/width)·rows·width + r·width + o%width]. The kernels then read a
// block of columns row after row from contiguous memory.
func packPanels(dst, a []float64, rows, m, width int) {
	for r := range rows {
		for o := range m {
			dst[(o/width)*rows*width+r*width+o%width] = a[r*m+o]
		}
	}
}

// unionLists writes, for each four pairs of h1 (rows of units), the
// units active (h1 > 0) in any of them: the i-th four pairs' count at
// ul[i·(units+1)], then the units in order. Pairs that share a document
// share most of their active units (they add the same W1x·x), so the
// AVX-512 forward kernel, which skips the others, does about as many
// multiply-adds as the pair-by-pair loops.
func unionLists(ul []int32, h1 []float64, units int) {
	for i := range len(h1) / (pairQuad * units) {
		r := h1[i*pairQuad*units : (i+1)*pairQuad*units]
		l := ul[i*(units+1) : (i+1)*(units+1)]
		n := 0
		for u := range units {
			if r[u] > 0 || r[units+u] > 0 || r[2*units+u] > 0 || r[3*units+u] > 0 {
				n++
				l[n] = int32(u)
			}
		}
		l[0] = int32(n)
	}
}

// zChunk is the number of outputs the AVX-512 kernel of ∂Î/∂z1 takes at a
// time: the chunk of W2's panel stays in the first-level cache.
const zChunk = 128

// chunkListsLen returns the length of chunkLists's lists for np pairs and
// a width m.
func chunkListsLen(np, m int) int {
	return (m + zChunk - 1) / zChunk * (np / pairQuad) * (zChunk + 1)
}

// chunkLists writes, for each chunk c of zChunk outputs and each four
// pairs i, the outputs where any of the four has a bit in mask (np rows
// of m/16 words, as pairsGradZ2AVX2 leaves them): the count at
// ul[(c·np/4 + i)·(zChunk+1)], then the outputs in order. Where h2 ≤ 0
// for all four, dz2 is zero and the kernel skips the output.
func chunkLists(ul []int32, mask []uint16, np, m int) {
	words, nq := m/16, np/pairQuad
	for c := 0; c*zChunk < m; c++ {
		lo, hi := c*zChunk/16, min((c+1)*zChunk, m)/16
		for i := range nq {
			l := ul[(c*nq+i)*(zChunk+1) : (c*nq+i+1)*(zChunk+1)]
			r := mask[i*pairQuad*words : (i+1)*pairQuad*words]
			n := 0
			for wd := lo; wd < hi; wd++ {
				b := r[wd] | r[words+wd] | r[2*words+wd] | r[3*words+wd]
				for b != 0 {
					n++
					l[n] = int32(wd*16 + bits.TrailingZeros16(b))
					b &= b - 1
				}
			}
			l[0] = int32(n)
		}
	}
}
