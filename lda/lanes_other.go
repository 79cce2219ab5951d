//go:build !amd64

package lda

import "unsafe"

var useLanesAVX512 = false

var useDenseAVX2 = false

func zeroLanesAVX512(words *uint64, counts unsafe.Pointer, countBytes int, pc *float32, acc *float64, n int, bUnit float64, pow int, slow *uint64) {
	panic("lda: zeroLanesAVX512 without amd64")
}

func colMaxAVX512(col *float32, fac *float64, n int, out *[8]float64) {
	panic("lda: colMaxAVX512 without amd64")
}

func colScaleAVX512(col *float32, fac *float64, n int, in float32, topics *uint16, parts *[8]float64) int {
	panic("lda: colScaleAVX512 without amd64")
}

func denseDrawAVX512(col *int32, q *float64, n int, cg int, cbit int, wcur, beta, unit float64, sums *float64, order *uint16) int {
	panic("lda: denseDrawAVX512 without amd64")
}

func denseDrawAVX2(col *int32, q *float64, n int, cg int, curMask *int64, tailMask *int32, wcur, beta, unit float64, sums *float64, order *uint16) int {
	panic("lda: denseDrawAVX2 without amd64")
}
