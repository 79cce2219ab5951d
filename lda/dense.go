package lda

import (
	"math"
	"unsafe"
)

// denseDraw draws a topic from the collapsed conditional's weights
//
//	w_t = (col[t] + β)·inv[t]·(cnt[t] + α),  t < K = len(col),
//
// given a uniform unit in [0, 1): col holds a word's counts n_tw, inv
// 1/(n_t + Vβ) and cnt the document's counts, all without the token being
// drawn. It returns the number of running sums of w at most unit·total —
// the topic, or K when rounding puts u at the total. The running sums,
// written to sums as float64 bits, run in groups of eight: within a group
// by three rounds of adding the sum 1, 2 and 4 entries back, then the last
// sum of the group before, so that on amd64 with AVX-512 a group is a
// handful of vector operations; the Go loop adds in the same order and
// gives the same bits and the same topic. inv and cnt need at least K
// entries, sums ⌈K/8⌉·8.
func denseDraw[T viewCount](col []T, inv []float64, cnt []int32, alpha, beta, unit float64, sums []uint64) int {
	k := len(col)
	inv, cnt, sums = inv[:k], cnt[:k], sums[:(k+7)&^7]
	if useLanesAVX512 && unsafe.Sizeof(col[0]) == 4 {
		// T is int32, the one type of viewCount of 4 bytes.
		return denseDrawAVX512((*int32)(unsafe.Pointer(&col[0])), &inv[0], &cnt[0], k, alpha, beta, unit, (*float64)(unsafe.Pointer(&sums[0])))
	}
	denseCumGo(col, inv, cnt, alpha, beta, sums)
	return firstAbove(sums[:k], unit*math.Float64frombits(sums[k-1]))
}

// denseCumGo writes denseDraw's running sums in Go: whole groups unrolled,
// the last, partial one padded with zeros.
func denseCumGo[T viewCount](col []T, inv []float64, cnt []int32, alpha, beta float64, sums []uint64) {
	var carry float64
	k := len(col)
	j := 0
	for ; j+8 <= k; j += 8 {
		c, v, n, out := col[j:j+8:j+8], inv[j:j+8:j+8], cnt[j:j+8:j+8], sums[j:j+8:j+8]
		w := func(l int) float64 { return (float64(c[l]) + beta) * v[l] * (float64(n[l]) + alpha) }
		carry = denseGroup(w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7), carry, out)
	}
	if j < k {
		var x [8]float64
		for l := range k - j {
			x[l] = (float64(col[j+l]) + beta) * inv[j+l] * (float64(cnt[j+l]) + alpha)
		}
		denseGroup(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], carry, sums[j:j+8])
	}
}

// denseGroup writes to out the running sums of one group of eight weights
// x0…x7, in denseDraw's order, after the running sum carry of the groups
// before, and returns the last.
func denseGroup(x0, x1, x2, x3, x4, x5, x6, x7, carry float64, out []uint64) float64 {
	// Each lane adds the one 1, then 2, then 4 before it.
	x7, x6, x5, x4, x3, x2, x1 = x7+x6, x6+x5, x5+x4, x4+x3, x3+x2, x2+x1, x1+x0
	x7, x6, x5, x4, x3, x2 = x7+x5, x6+x4, x5+x3, x4+x2, x3+x1, x2+x0
	x7, x6, x5, x4 = x7+x3, x6+x2, x5+x1, x4+x0
	out = out[:8]
	out[0] = math.Float64bits(x0 + carry)
	out[1] = math.Float64bits(x1 + carry)
	out[2] = math.Float64bits(x2 + carry)
	out[3] = math.Float64bits(x3 + carry)
	out[4] = math.Float64bits(x4 + carry)
	out[5] = math.Float64bits(x5 + carry)
	out[6] = math.Float64bits(x6 + carry)
	x7 += carry
	out[7] = math.Float64bits(x7)
	return x7
}
