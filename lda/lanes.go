package lda

import (
	"math"
	"unsafe"
)

// zeroLanes draws the entries of one column of the Dirichlet draw (a word's
// K counts cw) that have no count and whose first word, words[t], decides
// the draw alone (gammaSmall.lane, g.pow > 0): it sets pc[t] to the draw x
// as passFast stores it, float32 of x·phiScale flushed, and adds x to
// acc[t]. It sets bit t of slow for every other entry and leaves their pc
// and acc as they are. On amd64 with AVX-512 it runs eight entries at a
// time, with the same results.
func zeroLanes[T count](g gammaSmall, words []uint64, cw []T, pc []float32, acc []float64, slow []uint64) {
	done := 0
	if useLanesAVX512 && len(cw) >= 8 {
		done = len(cw) &^ 7
		zeroLanesAVX512(&words[0], unsafe.Pointer(&cw[0]), int(unsafe.Sizeof(cw[0])), &pc[0], &acc[0], done, g.bUnit, g.pow, &slow[0])
		if j := done >> 6; j < len(slow) {
			slow[j] &= 1<<(done&63) - 1
			clear(slow[j+1:])
		}
	} else {
		clear(slow)
	}
	zeroLanesGo(g, words[done:len(cw)], cw[done:], pc[done:len(cw)], acc[done:len(cw)], slow, done)
}

// zeroLanesGo is zeroLanes for the entries from off on, passed as the
// slices' first entries; slow is indexed from the column's start.
func zeroLanesGo[T count](g gammaSmall, words []uint64, cw []T, pc []float32, acc []float64, slow []uint64, off int) {
	for t, n := range cw {
		x, ok := g.lane(words[t])
		if n != 0 || !ok {
			slow[(off+t)>>6] |= 1 << ((off + t) & 63)
			continue
		}
		acc[t] += x
		pc[t] = float32(math.Float64frombits(flushBits(x * phiScale)))
	}
}
