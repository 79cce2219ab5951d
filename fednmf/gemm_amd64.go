//go:build amd64 && !purego

package fednmf

import "golang.org/x/sys/cpu"

// gemmKernelAVX2 reports whether the kernels of gemm_amd64.s may run:
// they need AVX2 and FMA.
var gemmKernelAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// stepRows4AVX2 is stepRowsGo on n rows of k (n a multiple of 4, k ≥ 1),
// with out not overlapping w.
//
//go:noescape
func stepRows4AVX2(w, gm, out *float64, n, k int, step float64)

// projectAVX2 is projectGo on n ≥ 1 rows of k ≥ 1.
//
//go:noescape
func projectAVX2(w, u *float64, n, k int, neg *int32) int

// rank2AVX2 is rank2Go on k ≥ 1.
//
//go:noescape
func rank2AVX2(c, u, m *float64, k int)
