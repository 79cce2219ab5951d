package privacy

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
)

// KRR is k-ary randomized response (Kairouz, Oh and Viswanath 2014): report
// the true category with probability p = e^ε/(e^ε + k − 1), otherwise one of
// the other k − 1 categories uniformly. For any two inputs the probabilities
// of any output differ by at most the factor e^ε: pure ε-LDP. The keep coin
// is decided exactly against enclosures of p (no floating-point rounding of
// p reaches the output law). Safe for concurrent use.
type KRR struct {
	eps       float64
	k         int
	unit      string
	pLo, pHi  float64
	keepFloat float64
}

// NewKRR returns kRR with the given ε over k ≥ 2 categories; unit names the
// privacy unit of its Events ("" means "tuple").
func NewKRR(eps float64, k int, unit string) (*KRR, error) {
	if err := CheckEpsilon(eps); err != nil {
		return nil, fmt.Errorf("privacy: krr: %w", err)
	}
	if k < 2 {
		return nil, fmt.Errorf("privacy: krr: %d categories: need at least 2: %w", k, ErrInvalidParameter)
	}
	if unit == "" {
		unit = "tuple"
	}
	p := 1 / (1 + float64(k-1)*math.Exp(-eps))
	return &KRR{eps: eps, k: k, unit: unit, keepFloat: p, pLo: p * (1 - 0x1p-45), pHi: math.Min(1, p*(1+0x1p-45))}, nil
}

// KeepProb returns the probability e^ε/(e^ε + k − 1) of reporting the true
// category (rounded to float64).
func (m *KRR) KeepProb() float64 { return m.keepFloat }

// Categories returns k.
func (m *KRR) Categories() int { return m.k }

// Event returns the Event for count reports by one unit.
func (m *KRR) Event(count int) Event {
	return Event{Mechanism: MechanismKRR, Epsilon: m.eps, Unit: m.unit, Count: count, Categories: m.k}
}

// Perturb returns the randomized report of category v. It panics if v is
// not in [0, k).
func (m *KRR) Perturb(r *rand.Rand, v int) int {
	if v < 0 || v >= m.k {
		panic(fmt.Sprintf("privacy: KRR.Perturb: category %d out of range [0, %d)", v, m.k))
	}
	br := bitReader{r: r}
	if bernoulli(&br, m.pLo, m.pHi, m.enclose) {
		return v
	}
	o := r.IntN(m.k - 1)
	if o >= v {
		o++
	}
	return o
}

// enclose encloses p = 1/(1 + (k−1)e^(−ε)).
func (m *KRR) enclose(prec uint) bounds {
	wp := prec + 16
	e := expNeg(floatOf(m.eps), wp)
	km1 := point(new(big.Float).SetInt64(int64(m.k - 1)))
	den := addB(pointFloat(1), mulPos(km1, e, wp), wp)
	return quoPos(pointFloat(1), den, wp)
}

// TruncatedKRR is kRR restricted to a truncated vocabulary S (FedLDA's
// t-kRR baseline): a word in S is kept with probability
// e^ε/(e^ε + |S| − 1) and otherwise replaced by another word of S uniformly;
// a word outside S is replaced by a uniform word of S. Both cases are
// within the factor e^ε of each other for every output, so the mechanism is
// pure ε-LDP over the whole vocabulary; S must be public (chosen from the
// broadcast model, not from the user's data). Safe for concurrent use.
type TruncatedKRR struct {
	krr   *KRR
	words []int32 // S in the caller's order
	pos   []int32 // word → index in words, or −1
}

// NewTruncatedKRR returns t-kRR with the given ε over the distinct words
// domain ⊂ [0, vocab), |domain| ≥ 2; unit names the privacy unit.
func NewTruncatedKRR(eps float64, vocab int, domain []int, unit string) (*TruncatedKRR, error) {
	if vocab < 1 {
		return nil, fmt.Errorf("privacy: truncated krr: vocabulary size %d: %w", vocab, ErrInvalidParameter)
	}
	krr, err := NewKRR(eps, len(domain), unit)
	if err != nil {
		return nil, fmt.Errorf("privacy: truncated krr: %w", err)
	}
	t := &TruncatedKRR{krr: krr, words: make([]int32, len(domain)), pos: make([]int32, vocab)}
	for i := range t.pos {
		t.pos[i] = -1
	}
	for i, w := range domain {
		if w < 0 || w >= vocab {
			return nil, fmt.Errorf("privacy: truncated krr: word %d out of range [0, %d): %w", w, vocab, ErrInvalidParameter)
		}
		if t.pos[w] >= 0 {
			return nil, fmt.Errorf("privacy: truncated krr: word %d listed twice: %w", w, ErrInvalidParameter)
		}
		t.pos[w] = int32(i)
		t.words[i] = int32(w)
	}
	return t, nil
}

// KeepProb returns the probability of keeping a word of S.
func (t *TruncatedKRR) KeepProb() float64 { return t.krr.KeepProb() }

// Event returns the Event for count reports by one unit.
func (t *TruncatedKRR) Event(count int) Event {
	e := t.krr.Event(count)
	e.Mechanism = MechanismTruncatedKRR
	return e
}

// Perturb returns the randomized report of word w. It panics if w is not in
// [0, vocab).
func (t *TruncatedKRR) Perturb(r *rand.Rand, w int) int {
	if w < 0 || w >= len(t.pos) {
		panic(fmt.Sprintf("privacy: TruncatedKRR.Perturb: word %d out of range [0, %d)", w, len(t.pos)))
	}
	if p := t.pos[w]; p >= 0 {
		return int(t.words[t.krr.Perturb(r, int(p))])
	}
	return int(t.words[r.IntN(len(t.words))])
}
