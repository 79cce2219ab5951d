package privacy

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// RRPAssumption is the condition RRP's guarantee rests on; it is carried in
// RRP's Events and printed wherever its ε is.
const RRPAssumption = "topic-word distributions follow Zipf's law (FedLDA Theorem 1); the (ε, 2δ) guarantee is conditional on it"

// RRPConfig describes FedLDA's randomized response with priori (Wang et
// al., AAAI 2020, Algorithm 3 and Theorem 1). The zero value of Gamma and
// Unit means their documented defaults.
type RRPConfig struct {
	// Epsilon is the ε of one tuple; required.
	Epsilon float64 `json:"epsilon"`
	// Delta is the truncation mass δ ∈ (0, ½): the least likely words of
	// each topic, together at most δ of its mass, are never reported as
	// replacements. The guarantee is (ε, 2δ)-LDP per tuple.
	Delta float64 `json:"delta"`
	// Gamma is the constant γ ≥ 1 of Theorem 1's Zipf assumption; zero
	// means 1.
	Gamma float64 `json:"gamma,omitempty"`
	// Unit names the privacy unit; zero means "user".
	Unit string `json:"unit,omitempty"`
}

// Validate reports every problem with c.
func (c RRPConfig) Validate() error {
	var errs []error
	errs = append(errs, CheckEpsilon(c.Epsilon))
	if math.IsNaN(c.Delta) || c.Delta <= 0 || c.Delta >= 0.5 {
		errs = append(errs, fmt.Errorf("privacy: rrp truncation delta %v: must be in (0, 0.5): %w", c.Delta, ErrInvalidParameter))
	}
	if c.Gamma != 0 && (math.IsNaN(c.Gamma) || math.IsInf(c.Gamma, 0) || c.Gamma < 1) {
		errs = append(errs, fmt.Errorf("privacy: rrp gamma %v: must be finite and ≥ 1: %w", c.Gamma, ErrInvalidParameter))
	}
	return errors.Join(errs...)
}

// RRPEta returns the replacement probability η = 1/(δ·δ₀·e^ε + 1) of
// Theorem 1, with δ₀ = δ − (δ^(−1/γ) + 1)^(−γ).
func RRPEta(eps, delta, gamma float64) float64 {
	d0 := delta - math.Pow(math.Pow(delta, -1/gamma)+1, -gamma)
	return 1 / (delta*d0*math.Exp(eps) + 1)
}

// RRP perturbs the word of a FedLDA tuple: with probability 1−η it keeps
// the word; otherwise it draws a topic k' from the user's θ and a word w'
// from φ_k', and reports w' if w' lies in the head of φ_k' (the words left
// after dropping a tail of mass ≤ δ), else the true word. Theorem 1 of the
// paper states (ε, 2δ)-LDP for η = RRPEta(ε, δ, γ) under a Zipf assumption
// on φ; the guarantee is only as good as that assumption (RRPAssumption),
// which the Events and all reports carry. Safe for concurrent use.
type RRP struct {
	cfg RRPConfig
	eta float64
}

// NewRRP returns the mechanism c describes.
func NewRRP(c RRPConfig) (*RRP, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("privacy: rrp: %w", err)
	}
	if c.Gamma == 0 {
		c.Gamma = 1
	}
	if c.Unit == "" {
		c.Unit = "user"
	}
	return &RRP{cfg: c, eta: RRPEta(c.Epsilon, c.Delta, c.Gamma)}, nil
}

// Config returns the configuration with defaults filled in.
func (m *RRP) Config() RRPConfig { return m.cfg }

// Eta returns η, the probability of attempting a replacement.
func (m *RRP) Eta() float64 { return m.eta }

// Event returns the Event for count tuples of one unit: each costs
// (ε, 2δ) under RRPAssumption.
func (m *RRP) Event(count int) Event {
	return Event{Mechanism: MechanismRRP, Epsilon: m.cfg.Epsilon, Delta: 2 * m.cfg.Delta, Unit: m.cfg.Unit, Count: count, Assumption: RRPAssumption}
}

// Perturb returns the reported word for true word w of a user with topic
// distribution theta (non-negative weights over the K topics of heads,
// not necessarily normalized). It panics if theta does not match heads or
// has no positive weight.
func (m *RRP) Perturb(r *rand.Rand, w int, theta []float64, heads *Heads) int {
	if len(theta) != heads.k {
		panic(fmt.Sprintf("privacy: RRP.Perturb: len(theta) = %d, want %d topics", len(theta), heads.k))
	}
	if r.Float64() >= m.eta {
		return w
	}
	var sum float64
	for _, x := range theta {
		sum += x
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		panic("privacy: RRP.Perturb: theta has no positive finite mass")
	}
	u := r.Float64() * sum
	k := len(theta) - 1
	for i, x := range theta {
		if u < x {
			k = i
			break
		}
		u -= x
	}
	w2, head := heads.Sample(r, k)
	if !head {
		return w
	}
	return w2
}

// Heads holds, for each topic k of a topic-word matrix φ, an alias table to
// draw w' ~ φ_k and the head Φ^l_k: the words left after removing the
// longest tail of least likely words (ties broken by larger word id first)
// whose total mass is ≤ δ. It is built once per broadcast of φ and shared
// by all users. Safe for concurrent use.
type Heads struct {
	k, v  int
	prob  []float64 // K×V alias probabilities
	alias []int32   // K×V alias targets
	head  []bool    // K×V head membership
}

// NewHeads builds the heads of the K×V matrix phi (rows need not be
// normalized) for truncation mass delta ∈ [0, 1). It reports rows with a
// negative, NaN or infinite entry or with no positive mass.
func NewHeads(phi [][]float64, delta float64) (*Heads, error) {
	if math.IsNaN(delta) || delta < 0 || delta >= 1 {
		return nil, fmt.Errorf("privacy: heads: delta %v: must be in [0, 1): %w", delta, ErrInvalidParameter)
	}
	if len(phi) == 0 || len(phi[0]) == 0 {
		return nil, fmt.Errorf("privacy: heads: empty topic-word matrix: %w", ErrInvalidParameter)
	}
	k, v := len(phi), len(phi[0])
	h := &Heads{k: k, v: v, prob: make([]float64, k*v), alias: make([]int32, k*v), head: make([]bool, k*v)}
	order := make([]int32, v)
	p := make([]float64, v)
	for t, row := range phi {
		if len(row) != v {
			return nil, fmt.Errorf("privacy: heads: topic %d has %d words, want %d: %w", t, len(row), v, ErrInvalidParameter)
		}
		var sum float64
		for w, x := range row {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return nil, fmt.Errorf("privacy: heads: phi[%d][%d] = %v: must be finite and ≥ 0: %w", t, w, x, ErrInvalidParameter)
			}
			sum += x
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			return nil, fmt.Errorf("privacy: heads: topic %d has no positive finite mass: %w", t, ErrInvalidParameter)
		}
		for w, x := range row {
			p[w] = x / sum
			order[w] = int32(w)
		}
		// Ascending probability, larger id first among ties: the tail is a
		// prefix of this order.
		slices.SortFunc(order, func(a, b int32) int {
			if c := cmp.Compare(p[a], p[b]); c != 0 {
				return c
			}
			return cmp.Compare(b, a)
		})
		hd := h.head[t*v : (t+1)*v]
		var tail float64
		for i, w := range order {
			if tail+p[w] > delta {
				for _, w2 := range order[i:] {
					hd[w2] = true
				}
				break
			}
			tail += p[w]
		}
		buildAlias(p, h.prob[t*v:(t+1)*v], h.alias[t*v:(t+1)*v])
	}
	return h, nil
}

// InHead reports whether word w is in the head of topic k.
func (h *Heads) InHead(k, w int) bool { return h.head[k*h.v+w] }

// Sample draws w' ~ φ_k and reports whether it is in the head of topic k.
func (h *Heads) Sample(r *rand.Rand, k int) (w int, head bool) {
	i := r.IntN(h.v)
	if r.Float64() >= h.prob[k*h.v+i] {
		i = int(h.alias[k*h.v+i])
	}
	return i, h.head[k*h.v+i]
}

// buildAlias fills Vose's alias table for the distribution p (summing to 1).
func buildAlias(p []float64, prob []float64, alias []int32) {
	n := len(p)
	scaled := make([]float64, n)
	var small, large []int32
	for i, x := range p {
		scaled[i] = x * float64(n)
		if scaled[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		prob[s], alias[s] = scaled[s], l
		scaled[l] -= 1 - scaled[s]
		if scaled[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range large {
		prob[i], alias[i] = 1, i
	}
	for _, i := range small { // rounding leftovers
		prob[i], alias[i] = 1, i
	}
}
