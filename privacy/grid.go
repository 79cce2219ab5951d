package privacy

import "math"

// defaultGranularity returns the grid a mechanism uses when none is given:
// the largest power of two g ≤ min(1, scale/16). The noise then spans 16 to
// 32 grid steps per unit of scale — fine enough that the discrete noise is
// indistinguishable from continuous noise at any useful resolution, coarse
// enough that its tables stay small — and integer inputs (counts) always lie
// on the grid.
func defaultGranularity(scale float64) float64 {
	x := math.Min(1, scale/16)
	_, e := math.Frexp(x) // x = f·2^e, f ∈ [½, 1)
	g := math.Ldexp(1, e-1)
	return math.Max(g, 0x1p-60)
}
