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
func denseDraw(col []int32, inv []float64, cnt []int32, alpha, beta, unit float64, sums []uint64) int {
	k := len(col)
	inv, cnt, sums = inv[:k], cnt[:k], sums[:(k+7)&^7]
	if useLanesAVX512 {
		return denseDrawAVX512(&col[0], &inv[0], &cnt[0], k, alpha, beta, unit, (*float64)(unsafe.Pointer(&sums[0])))
	}
	denseCumGo(col, inv, cnt, alpha, beta, sums)
	return firstAbove(sums[:k], unit*math.Float64frombits(sums[k-1]))
}

// denseCumGo is denseCum in Go.
func denseCumGo(col []int32, inv []float64, cnt []int32, alpha, beta float64, sums []uint64) {
	var carry float64
	for j := 0; j < len(col); j += 8 {
		var x [8]float64
		for l := range x {
			if t := j + l; t < len(col) {
				x[l] = (float64(col[t]) + beta) * inv[t] * (float64(cnt[t]) + alpha)
			}
		}
		for _, s := range [...]int{1, 2, 4} {
			for l := 7; l >= s; l-- {
				x[l] += x[l-s]
			}
		}
		for l := range x {
			x[l] += carry
			sums[j+l] = math.Float64bits(x[l])
		}
		carry = x[7]
	}
}
