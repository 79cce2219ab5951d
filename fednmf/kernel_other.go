//go:build !amd64 || purego

package fednmf

// pairKernelAVX2 is false: only the plain-Go pair layers exist here.
const pairKernelAVX2 = false

func pairsForwardAVX2(w2t, h1 *float64, act, nAct *int32, np, units, m int, b2, w3, h2, t *float64) {
	panic("fednmf: pairsForwardAVX2 without amd64")
}

func pairsBackwardAVX2(w2t, h1 *float64, act, nAct *int32, np, units, m int, h2, gt, w3, gw3, gb2, dz1 *float64) {
	panic("fednmf: pairsBackwardAVX2 without amd64")
}

func pairsGradW2AVX2(gw2t, h1, dz2 *float64, pairs, nPairs *int32, np, units, m int) {
	panic("fednmf: pairsGradW2AVX2 without amd64")
}
