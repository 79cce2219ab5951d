package fedlda

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/fedtopic/fedtopic/privacy"
)

// perturber randomizes the word of one tuple for one iteration. It is
// built from the broadcast model (RRP's heads, t-kRR's domain), which is
// public, and is shared by all the users of a party.
type perturber struct {
	mech  string
	krr   *privacy.KRR
	tkrr  *privacy.TruncatedKRR
	rrp   *privacy.RRP
	heads *privacy.Heads
}

// newPerturber builds the iteration's mechanism for cfg from the model phi
// and the counts n it came from. krr, when not nil, is reused (it does not
// depend on the model).
func newPerturber(cfg Config, phi *phiView, n []uint32, krr *privacy.KRR) (*perturber, error) {
	p := &perturber{mech: cfg.Mechanism}
	var err error
	switch cfg.Mechanism {
	case MechanismNone:
	case MechanismKRR:
		if p.krr = krr; p.krr == nil {
			p.krr, err = privacy.NewKRR(cfg.Epsilon, phi.v, Unit)
		}
	case MechanismTKRR:
		p.tkrr, err = privacy.NewTruncatedKRR(cfg.Epsilon, phi.v, truncatedDomain(n, phi.k, phi.v, cfg.Beta, cfg.Truncation), Unit)
	case MechanismRRP:
		if p.rrp, err = privacy.NewRRP(privacy.RRPConfig{Epsilon: cfg.Epsilon, Delta: cfg.Truncation, Gamma: cfg.Gamma, Unit: Unit}); err == nil {
			p.heads, err = privacy.NewHeads(phi.rows(), cfg.Truncation)
		}
	default:
		err = fmt.Errorf("mechanism %q", cfg.Mechanism)
	}
	if err != nil {
		return nil, fmt.Errorf("fedlda: %w", err)
	}
	return p, nil
}

// perturb returns the word reported for true word w of a user whose topic
// weights (n_dk + α) are theta.
func (p *perturber) perturb(r *rand.Rand, w int, theta []float64) int {
	switch p.mech {
	case MechanismKRR:
		return p.krr.Perturb(r, w)
	case MechanismTKRR:
		return p.tkrr.Perturb(r, w)
	case MechanismRRP:
		return p.rrp.Perturb(r, w, theta, p.heads)
	}
	return w
}

// truncatedDomain is t-kRR's vocabulary: the head of the corpus word
// distribution the broadcast counts give, p(w) ∝ Σ_k n_kw + Kβ, after
// dropping the longest tail of least likely words (larger id first among
// ties) whose mass is ≤ delta; at least two words.
func truncatedDomain(n []uint32, k, v int, beta, delta float64) []int {
	mass := make([]float64, v)
	var total float64
	for t := range k {
		for w, x := range n[t*v : (t+1)*v] {
			mass[w] += float64(x)
		}
	}
	for w := range mass {
		mass[w] += float64(k) * beta
		total += mass[w]
	}
	order := make([]int, v)
	for w := range order {
		order[w] = w
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(mass[a], mass[b]); c != 0 {
			return c
		}
		return cmp.Compare(b, a)
	})
	var tail float64
	cut := 0
	for cut < v-2 && tail+mass[order[cut]] <= delta*total {
		tail += mass[order[cut]]
		cut++
	}
	dom := order[cut:]
	slices.Sort(dom)
	return dom
}
