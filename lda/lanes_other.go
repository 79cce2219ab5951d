//go:build !amd64

package lda

import "unsafe"

var useLanesAVX512 = false

func zeroLanesAVX512(words *uint64, counts unsafe.Pointer, countBytes int, pc *float32, acc *float64, n int, bUnit float64, pow int, slow *uint64) {
	panic("lda: zeroLanesAVX512 without amd64")
}

func colMaxAVX512(col *float32, fac *float64, n int, out *[8]float64) {
	panic("lda: colMaxAVX512 without amd64")
}

func colScaleAVX512(col *float32, fac *float64, n int, in float32, topics *uint16, parts *[8]float64) int {
	panic("lda: colScaleAVX512 without amd64")
}

func denseDrawAVX512(col *int32, inv *float64, cnt *int32, n int, alpha, beta, unit float64, sums *float64) int {
	panic("lda: denseDrawAVX512 without amd64")
}
