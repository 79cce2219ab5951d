//go:build !amd64 || purego

package fednmf

// pairKernelAVX2 is false: only the plain-Go pair layers exist here.
const pairKernelAVX2 = false

// pairKernelAVX512 is false, as pairKernelAVX2.
const pairKernelAVX512 = false

func pairsForwardDenseAVX2(w2t, h1 *float64, np, units, m int, b2, w3, h2, tv *float64) {
	panic("fednmf: pairsForwardDenseAVX2 without amd64")
}

func pairsGradZ2AVX2(np, m int, h2, gt, w3, gw3, gb2 *float64, mask *uint16) {
	panic("fednmf: pairsGradZ2AVX2 without amd64")
}

func pairsGradZ1DenseAVX2(w2, dz2, h1 *float64, np, units, m int, dz1 *float64) {
	panic("fednmf: pairsGradZ1DenseAVX2 without amd64")
}

func pairsGradW2DenseAVX2(gw2t, h1, dz2 *float64, np, units, m int) {
	panic("fednmf: pairsGradW2DenseAVX2 without amd64")
}

func pairsForwardDenseAVX512(w2t, h1 *float64, np, units, m int, b2, w3, h2, tv *float64, list *int32) {
	panic("fednmf: pairsForwardDenseAVX512 without amd64")
}

func pairsGradZ1DenseAVX512(w2, dz2, h1 *float64, np, units, m int, dz1 *float64, list *int32) {
	panic("fednmf: pairsGradZ1DenseAVX512 without amd64")
}

func pairsGradW2DenseAVX512(gw2t, h1, dz2 *float64, np, units, m int) {
	panic("fednmf: pairsGradW2DenseAVX512 without amd64")
}
