package lda

import (
	"math"
	"unsafe"
)

// denseDraw draws a topic from the collapsed conditional's weights
//
//	w_t = (col[t] + β)·q[t]  for t ≠ cur,  w_cur = wcur,  t < K = len(col),
//
// given a uniform unit in [0, 1): col holds a word's counts n_tw and q the
// document's factors (C_dt + α)/(n_t + Vβ), and wcur is the weight of the
// token's own topic with the token left out. The caller keeps q current
// as the counts change (see collapsedKernel.denseToken), so that a draw
// reads one column and no counts of the document.
//
// The weights are summed lane by lane: with G = ⌈K/8⌉ groups of eight
// topics, lane l of group g holding topic 8g + l, the running sums follow
// the order (l, g) — lane 0 of every group, then lane 1, … — which needs
// one vector add per group (the lanes' running sums V_g = V_(g−1) + w_g,
// written to sums) and then, once, the lanes' exclusive running totals L
// (three rounds of adding the sum 1, 2 and 4 lanes back). Position
// (l, g) of the order has the running sum V_g[l] + L[l]; the draw counts
// the positions of topics below K at most u = unit·total, total =
// L[7] + V_(G−1)[7], and returns the topic that follows them in the
// order, order[p] (see denseOrder). The lanes past K weigh 0 (q is zero
// there) and are never counted, so rounding, which can put a lane's first
// running sum an ulp below the last of the lane before, can only move the
// draw by a position or two in the order, never past K. Any fixed order
// of the topics gives an exact draw; this one takes about half the vector
// operations of running sums in topic order. With AVX-512 at K = 50
// (amd64; benchmarks of the two loops, not kept, three runs each)
// independent draws took 24 ns against 34–37 ns (one run 44) for running
// sums in topic order, and chains of draws, each token's topic the draw
// before's, 33–34 ns against 35–36 ns — and 54–55 ns for the old loop
// behind the stores of the token's removal that denseToken made before
// it, which the vector loads had to wait for. The AVX2 loop (four
// lanes to a register, for hosts without AVX-512) and the Go loop compute
// the same sums in the same order and give the same bits and the same
// topic; BenchmarkDenseDraw times each. Rounding can make p reach K,
// where denseDraw returns K. q and sums need 8G entries, q zero past K.
func denseDraw[T viewCount](col []T, q []float64, cur int, wcur, beta, unit float64, sums []uint64, order []uint16) int {
	k := len(col)
	g := (k + 7) / 8
	q, sums, order = q[:8*g], sums[:8*g], order[:k]
	if useLanesAVX512 && unsafe.Sizeof(col[0]) == 4 {
		// T is int32, the one type of viewCount of 4 bytes.
		return denseDrawAVX512((*int32)(unsafe.Pointer(&col[0])), &q[0], k, cur/8, 1<<(cur%8), wcur, beta, unit, (*float64)(unsafe.Pointer(&sums[0])), &order[0])
	}
	if useDenseAVX2 && unsafe.Sizeof(col[0]) == 4 {
		return denseDrawAVX2((*int32)(unsafe.Pointer(&col[0])), &q[0], k, cur/8, &denseLaneMask[8-cur%8], &denseTailMask[(g*8-k)%8], wcur, beta, unit, (*float64)(unsafe.Pointer(&sums[0])), &order[0])
	}
	return denseDrawGo(col, q, cur, wcur, beta, unit, sums, order)
}

// denseDrawGo is denseDraw's Go loop: eight lanes at a time, unrolled,
// each lane's running sum in a variable of its own.
func denseDrawGo[T viewCount](col []T, q []float64, cur int, wcur, beta, unit float64, sums []uint64, order []uint16) int {
	k := len(col)
	var v0, v1, v2, v3, v4, v5, v6, v7 float64
	for g0 := 0; g0 < k; g0 += 8 {
		var c [8]T
		if g0+8 <= k {
			c = [8]T(col[g0 : g0+8])
		} else {
			copy(c[:], col[g0:]) // the lanes past K read 0
		}
		qq := q[g0 : g0+8 : g0+8]
		w0, w1, w2, w3 := (float64(c[0])+beta)*qq[0], (float64(c[1])+beta)*qq[1], (float64(c[2])+beta)*qq[2], (float64(c[3])+beta)*qq[3]
		w4, w5, w6, w7 := (float64(c[4])+beta)*qq[4], (float64(c[5])+beta)*qq[5], (float64(c[6])+beta)*qq[6], (float64(c[7])+beta)*qq[7]
		switch cur - g0 {
		case 0:
			w0 = wcur
		case 1:
			w1 = wcur
		case 2:
			w2 = wcur
		case 3:
			w3 = wcur
		case 4:
			w4 = wcur
		case 5:
			w5 = wcur
		case 6:
			w6 = wcur
		case 7:
			w7 = wcur
		}
		v0, v1, v2, v3, v4, v5, v6, v7 = v0+w0, v1+w1, v2+w2, v3+w3, v4+w4, v5+w5, v6+w6, v7+w7
		s := sums[g0 : g0+8 : g0+8]
		s[0], s[1], s[2], s[3] = math.Float64bits(v0), math.Float64bits(v1), math.Float64bits(v2), math.Float64bits(v3)
		s[4], s[5], s[6], s[7] = math.Float64bits(v4), math.Float64bits(v5), math.Float64bits(v6), math.Float64bits(v7)
	}
	// The lanes' exclusive running totals, in three rounds of adding the
	// sum 1, 2 and 4 lanes back, as the vector loop does (adding l0 = 0
	// changes nothing).
	l1, l2, l3, l4, l5, l6, l7 := v0, v1, v2, v3, v4, v5, v6
	l7, l6, l5, l4, l3, l2 = l7+l6, l6+l5, l5+l4, l4+l3, l3+l2, l2+l1
	l7, l6, l5, l4, l3 = l7+l5, l6+l4, l5+l3, l4+l2, l3+l1
	l7, l6, l5 = l7+l3, l6+l2, l5+l1
	u := unit * (l7 + v7)
	// A lane's running sums only grow, and so do they plus its L: the
	// positions of a lane that count, sum + L ≤ u as the vector loop
	// compares, come first. So a lane whose last position counts adds all
	// of its positions, one whose first does not adds none, and only the
	// lane between, where u falls, is scanned: the same count as
	// comparing every position, in under half the comparisons at K = 50.
	l := [8]float64{0, l1, l2, l3, l4, l5, l6, l7}
	g := (k + 7) / 8
	full := k - 8*(g-1) // lanes with an entry in the last group
	p := 0
	for ln, lb := range l {
		n := g
		if ln >= full {
			n--
		}
		switch {
		case n == 0 || math.Float64frombits(sums[ln])+lb > u:
		case math.Float64frombits(sums[8*(n-1)+ln])+lb <= u:
			p += n
		default:
			c := 1
			for c < n-1 && math.Float64frombits(sums[8*c+ln])+lb <= u {
				c++
			}
			p += c
		}
	}
	if p == k {
		return k
	}
	return int(order[p])
}

// denseOrder returns the K topics in the order of denseDraw's running sums:
// lane by lane, lane l holding the topics 8g + l below K in increasing g.
func denseOrder(k int) []uint16 {
	order := make([]uint16, 0, k)
	for l := range 8 {
		for t := l; t < k; t += 8 {
			order = append(order, uint16(t))
		}
	}
	return order
}

// denseLaneMask from entry 8 − l on holds eight int64 with all ones at l,
// and denseTailMask from entry 8 − r on (entry 0 for r = 8) eight int32
// with all ones at the first r: denseDraw's AVX2 masks.
var (
	denseLaneMask = [16]int64{8: -1}
	denseTailMask = [16]int32{-1, -1, -1, -1, -1, -1, -1, -1}
)
