package lda

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// useLanesAVX512 reports whether zeroLanesAVX512 may run: it needs AVX-512
// F, DQ (conversions of 64-bit integers, byte masks) and VL (256-bit
// forms).
var useLanesAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512VL

// useDenseAVX2 says denseDraw may take its AVX2 loop (which counts with
// POPCNT) where AVX-512 is missing.
var useDenseAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasPOPCNT

// zeroLanesAVX512 is zeroLanes for the first n entries, n a multiple of 8,
// eight at a time, with counts of countBytes bytes (4: int32, 8: float64):
// it writes the slow bits of entries 8j to 8j+7 as byte j of slow.
//
//go:noescape
func zeroLanesAVX512(words *uint64, counts unsafe.Pointer, countBytes int, pc *float32, acc *float64, n int, bUnit float64, pow int, slow *uint64)

// colMaxAVX512 stores in out, lane j, the largest float64(col[t])·fac[t]
// over the t < n with t%8 = j; n is a multiple of 8.
//
//go:noescape
func colMaxAVX512(col *float32, fac *float64, n int, out *[8]float64)

// colScaleAVX512 runs finishBlock's scaling of the first n entries of a
// column, n a multiple of 8: it sets col[t] to y = float32(col[t]·fac[t],
// flushed below 2⁻¹²⁶), writes the topics t with y ≥ in in order from
// topics[0] (and up to 8 entries past the last), adds the y < in to
// parts[t%8], and returns how many topics it wrote.
//
//go:noescape
func colScaleAVX512(col *float32, fac *float64, n int, in float32, topics *uint16, parts *[8]float64) int

// denseDrawAVX512 is denseDraw for n ≥ 1 entries, eight at a time, the
// last group's loads of col masked; the token's own topic is lane cbit (a
// bit) of group cg.
//
//go:noescape
func denseDrawAVX512(col *int32, q *float64, n int, cg int, cbit int, wcur, beta, unit float64, sums *float64, order *uint16) int

// denseDrawAVX2 is denseDraw's loop with AVX2, four lanes to a register,
// for hosts without AVX-512: curMask holds all ones at the token's lane
// (of group cg), tailMask at the last group's lanes of entries.
//
//go:noescape
func denseDrawAVX2(col *int32, q *float64, n int, cg int, curMask *int64, tailMask *int32, wcur, beta, unit float64, sums *float64, order *uint16) int
