// Package alias builds Walker alias tables by Vose's construction and draws
// from them in O(1): the shared kernel of the lda and ftm samplers' word
// proposals.
//
// A table over n outcomes has n slots; a draw picks a slot uniformly with
// the high 32 bits of one 64-bit word (Lemire's multiply-shift method, with
// rejection so the slot is exactly uniform) and keeps the slot's own
// outcome when the low 32 bits fall below its threshold, else takes its
// alias. Each slot's split is held to 32 bits, so every probability is
// realised to within 2⁻³² per slot (Walker, "An efficient method for
// generating discrete random variables with general distributions", ACM
// TOMS 3(3), 1977; Vose, "A linear algorithm for generating random numbers
// with a given distribution", IEEE TSE 17(9), 1991).
//
// Usage:
//
//	var b alias.Builder
//	tab := make([]alias.Entry, len(w))
//	b.Build(tab, w, sum) // sum = Σ w > 0
//	lem := alias.LemireBound(len(tab))
//	for {
//		if k, ok := alias.Draw(tab, lem, r.Uint64()); ok {
//			return k
//		}
//	}
//
// Determinism: a table is a pure function of its weights; a draw a pure
// function of the 64-bit words it reads. Privacy: none; the package only
// samples.
package alias
