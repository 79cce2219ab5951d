package attack

import (
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/privacy"
)

// Exposure returns the exposure of a canary (Carlini et al., "The Secret
// Sharer", USENIX Security 2019): log₂(N+1) − log₂(rank), where N is the
// number of reference candidates — canaries of the same form that were
// never inserted — and rank is 1 plus the number of them the attacker
// scores at least as high as the inserted one (ties count against the
// canary). Exposure 0 means the canary is ranked last; log₂(N+1), first.
func Exposure(canary float64, reference []float64) float64 {
	rank := 1
	for _, s := range reference {
		if s >= canary {
			rank++
		}
	}
	return math.Log2(float64(len(reference)+1)) - math.Log2(float64(rank))
}

// MaxExposure returns the exposure that a canary inserted k times into an
// (ε, δ)-DP release per unit can exceed with probability at most beta.
// Group privacy makes the release (kε, k·e^((k−1)ε)·δ)-DP for the k
// insertions; a canary drawn uniformly from N+1 candidates then reaches
// rank r or better with probability at most e^(kε)·r/(N+1) + δ_k, so
// exposure x is exceeded with probability at most e^(kε)·2^(−x) + δ_k,
// which is beta at x = kε·log₂ e + log₂(1/(beta − δ_k)). It is +Inf when
// δ_k ≥ beta.
func MaxExposure(eps, delta float64, k int, beta float64) (float64, error) {
	if k < 1 || !(eps >= 0) || !(delta >= 0 && delta < 1) || !(beta > 0 && beta < 1) {
		return 0, fmt.Errorf("attack: max exposure: ε = %v, δ = %v, k = %d, β = %v: %w", eps, delta, k, beta, privacy.ErrInvalidParameter)
	}
	kf := float64(k)
	var dk float64
	if delta > 0 {
		dk = kf * math.Exp((kf-1)*eps) * delta
	}
	if dk >= beta {
		return math.Inf(1), nil
	}
	return kf*eps*math.Log2E + math.Log2(1/(beta-dk)), nil
}
