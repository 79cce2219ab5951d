//go:build !amd64 || purego

package fednmf

// gemmKernelAVX2 is false: only the plain-Go forms of the pass over W
// exist here.
const gemmKernelAVX2 = false

func stepRows4AVX2(w, gm, out *float64, n, k int, step float64) {
	panic("fednmf: stepRows4AVX2 without amd64")
}

func projectAVX2(w, u *float64, n, k int, neg *int32) int {
	panic("fednmf: projectAVX2 without amd64")
}

func rank2AVX2(c, u, m *float64, k int) {
	panic("fednmf: rank2AVX2 without amd64")
}
