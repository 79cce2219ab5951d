package lda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// aliasEntry is one slot of a Walker alias table: a draw that lands on slot
// j keeps j when a 32-bit coin is below thresh and takes alias otherwise.
type aliasEntry struct {
	thresh uint32
	alias  uint32
}

// Alias is a Walker alias table (Vose's construction): after an O(n) build
// it draws an index with probability proportional to its weight in O(1).
// Slot probabilities are held to 32 bits (resolution 2⁻³² per slot).
type Alias struct {
	tab  []aliasEntry
	lemK uint32 // rejection bound of Lemire's method for len(tab)
}

// NewAlias builds the table for weights, which must be finite, non-negative
// and not all zero.
func NewAlias(weights []float64) (*Alias, error) {
	if len(weights) == 0 {
		return nil, errors.New("lda: alias table needs at least one weight")
	}
	if len(weights) > math.MaxUint32 {
		return nil, fmt.Errorf("lda: alias table of %d weights, want at most %d", len(weights), uint32(math.MaxUint32))
	}
	var sum float64
	for i, w := range weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("lda: alias weight %d = %v, want finite and non-negative", i, w)
		}
		sum += w
	}
	if sum == 0 {
		return nil, errors.New("lda: alias weights are all zero")
	}
	a := &Alias{tab: make([]aliasEntry, len(weights)), lemK: lemireBound(len(weights))}
	var b aliasBuilder
	b.build(a.tab, weights, sum)
	return a, nil
}

// Len returns the number of slots.
func (a *Alias) Len() int { return len(a.tab) }

// Draw returns an index in [0, Len()) with probability proportional to its
// weight, using r's 64-bit stream.
func (a *Alias) Draw(r *rand.Rand) int {
	for {
		if j, ok := drawAlias(a.tab, a.lemK, r.Uint64()); ok {
			return j
		}
	}
}

// lemireBound returns (2³² − n) mod n, the bound below which Lemire's
// multiply-shift method must reject a 32-bit draw to stay exactly uniform
// over [0, n).
func lemireBound(n int) uint32 {
	return uint32(-uint32(n)) % uint32(n)
}

// drawAlias draws from tab with one 64-bit word x: the high 32 bits pick a
// slot uniformly (Lemire's multiply-shift method; ok is false when x must
// be rejected to keep the slot exactly uniform, which happens with
// probability below len(tab)/2³²), the low 32 bits are the coin.
func drawAlias(tab []aliasEntry, lemK uint32, x uint64) (int, bool) {
	m := (x >> 32) * uint64(len(tab))
	if uint32(m) < lemK {
		return 0, false
	}
	e := tab[m>>32]
	if uint32(x) < e.thresh {
		return int(m >> 32), true
	}
	return int(e.alias), true
}

// aliasBuilder holds the work lists of Vose's construction so repeated
// builds do not allocate.
type aliasBuilder struct {
	scaled       []float64
	small, large []int32
	tab          []aliasEntry // scratch of buildSparse
}

// build fills tab with the alias table of weights w of positive total sum.
func (b *aliasBuilder) build(tab []aliasEntry, w []float64, sum float64) {
	n := len(w)
	b.grow(n)
	scale := float64(n) / sum
	for i, x := range w {
		b.scaled[i] = x * scale
	}
	b.finish(tab)
}

// sparseEntry is one slot of a sparse alias table over a subset of topics:
// a draw that lands on it returns topic when the coin is below thresh and
// alias otherwise.
type sparseEntry struct {
	thresh       uint32
	topic, alias uint16
}

// buildSparse appends to dst the alias table over topics with weights w
// (positive total sum) and returns it.
func (b *aliasBuilder) buildSparse(dst []sparseEntry, topics []uint16, w []float64, sum float64) []sparseEntry {
	n := len(w)
	b.grow(n)
	scale := float64(n) / sum
	for i, x := range w {
		b.scaled[i] = x * scale
	}
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	tab := b.tab[:0]
	tab = slices.Grow(tab, n)[:n]
	b.tab = tab
	b.finish(tab)
	for i, e := range tab {
		dst[start+i] = sparseEntry{thresh: e.thresh, topic: topics[i], alias: topics[e.alias]}
	}
	return dst
}

func (b *aliasBuilder) grow(n int) {
	if cap(b.scaled) < n {
		b.scaled = make([]float64, n)
		b.small = make([]int32, 0, n)
		b.large = make([]int32, 0, n)
	}
	b.scaled = b.scaled[:n]
	b.small = b.small[:0]
	b.large = b.large[:0]
}

// finish runs Vose's pairing on b.scaled (weights scaled to mean 1).
func (b *aliasBuilder) finish(tab []aliasEntry) {
	p := b.scaled
	for i, x := range p {
		if x < 1 {
			b.small = append(b.small, int32(i))
		} else {
			b.large = append(b.large, int32(i))
		}
	}
	small, large := b.small, b.large
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		tab[s] = aliasEntry{thresh: threshold(p[s]), alias: uint32(l)}
		p[l] -= 1 - p[s]
		if p[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// What is left has probability 1 up to rounding: keep the slot itself.
	for _, i := range large {
		tab[i] = aliasEntry{thresh: math.MaxUint32, alias: uint32(i)}
	}
	for _, i := range small {
		tab[i] = aliasEntry{thresh: math.MaxUint32, alias: uint32(i)}
	}
}

// threshold converts a slot probability in [0, 1] to a 32-bit coin bound.
func threshold(p float64) uint32 {
	t := math.Round(p * (1 << 32))
	if t >= math.MaxUint32 {
		return math.MaxUint32
	}
	if t <= 0 {
		return 0
	}
	return uint32(t)
}
