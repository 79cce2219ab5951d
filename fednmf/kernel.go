package fednmf

import "gonum.org/v1/gonum/floats"

// The critic's pair layers over a group of pairs, each over the units of
// h₁ that relu left active. Each has a plain-Go form (the reference, and
// the fallback where AVX2 and FMA are missing or the purego build tag is
// set) and, on amd64, an AVX2+FMA form in kernel_amd64.s, which runs over
// 32 outputs of the second layer at a time for every pair of the group
// so that those columns of W2 stay in the first-level cache. The two sum
// in different orders and the assembly fuses multiplies and adds, so
// their results may differ in the last bits; each is deterministic, and a
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

// pairWidth is the multiple of which the AVX2 kernels need the width of
// the second layer: they keep 32 of its outputs in eight registers.
const pairWidth = 32

// pairsForward is pairsForwardGo, through the AVX2 kernel when avx2 is
// set. It checks the shapes the assembly relies on.
func pairsForward(avx2 bool, w2t, h1 []float64, act, nAct []int32, b2, w3, h2, t []float64) {
	if !avx2 {
		pairsForwardGo(w2t, h1, act, nAct, b2, w3, h2, t)
		return
	}
	np, m := len(nAct), len(b2)
	units := checkPairs(w2t, h1, act, nAct, m, len(w3), len(h2)/np)
	if len(h2) != np*m || len(t) != np {
		panic("fednmf: pairsForward: outputs of the wrong shape")
	}
	pairsForwardAVX2(&w2t[0], &h1[0], &act[0], &nAct[0], np, units, m, &b2[0], &w3[0], &h2[0], &t[0])
}

// pairsBackward is pairsBackwardGo, through the AVX2 kernels when avx2 is
// set; lists is their scratch, at least units·(np+1) long. The kernel for
// ∂Î/∂W2 goes unit by unit over the pairs where the unit is active,
// keeping 32 entries of its row of gw2t in registers.
func pairsBackward(avx2 bool, w2t, gw2t, h1 []float64, act, nAct []int32, h2, gt, w3, gw3, gb2, dz1 []float64, lists []int32) {
	if !avx2 {
		pairsBackwardGo(w2t, gw2t, h1, act, nAct, h2, gt, w3, gw3, gb2, dz1)
		return
	}
	np, m := len(nAct), len(w3)
	units := checkPairs(w2t, h1, act, nAct, m, len(gw3), len(gb2), len(h2)/np)
	if len(h2) != np*m || len(gt) != np || len(gw2t) != len(w2t) || len(dz1) != len(h1) || len(lists) < units*(np+1) {
		panic("fednmf: pairsBackward: gradients or scratch of the wrong shape")
	}
	pairsBackwardAVX2(&w2t[0], &h1[0], &act[0], &nAct[0], np, units, m, &h2[0], &gt[0], &w3[0], &gw3[0], &gb2[0], &dz1[0])
	// The pairs where each unit is active, in order.
	pairs, nPairs := lists[:units*np], lists[units*np:units*(np+1)]
	clear(nPairs)
	for q, n := range nAct {
		for _, u := range act[q*units : q*units+int(n)] {
			pairs[int(u)*np+int(nPairs[u])] = int32(q)
			nPairs[u]++
		}
	}
	pairsGradW2AVX2(&gw2t[0], &h1[0], &h2[0], &pairs[0], &nPairs[0], np, units, m)
}

// checkPairs panics unless the AVX2 kernels may run on the group (the
// width m a positive multiple of pairWidth, every length in lens m, w2t
// units rows of m, the active units in range) and returns units.
func checkPairs(w2t, h1 []float64, act, nAct []int32, m int, lens ...int) int {
	np := len(nAct)
	if np == 0 || m == 0 || m%pairWidth != 0 || len(h1)%np != 0 || len(act) != len(h1) {
		panic("fednmf: pair kernel: no pairs, width not a multiple of 32 or h1 of the wrong shape")
	}
	units := len(h1) / np
	if len(w2t) != units*m {
		panic("fednmf: pair kernel: W2 of the wrong shape")
	}
	for _, n := range lens {
		if n != m {
			panic("fednmf: pair kernel: vector of the wrong length")
		}
	}
	for q, n := range nAct {
		if n < 0 || int(n) > units {
			panic("fednmf: pair kernel: active count out of range")
		}
		for _, u := range act[q*units : q*units+int(n)] {
			if u < 0 || int(u) >= units {
				panic("fednmf: pair kernel: unit out of range")
			}
		}
	}
	return units
}
