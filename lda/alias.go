package lda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fedtopic/fedtopic/internal/alias"
)

// Alias is a Walker alias table (Vose's construction): after an O(n) build
// it draws an index with probability proportional to its weight in O(1).
// Slot probabilities are held to 32 bits (resolution 2⁻³² per slot).
type Alias struct {
	tab  []alias.Entry
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
	a := &Alias{tab: make([]alias.Entry, len(weights)), lemK: alias.LemireBound(len(weights))}
	var b alias.Builder
	b.Build(a.tab, weights, sum)
	return a, nil
}

// Len returns the number of slots.
func (a *Alias) Len() int { return len(a.tab) }

// Draw returns an index in [0, Len()) with probability proportional to its
// weight, using r's 64-bit stream.
func (a *Alias) Draw(r *rand.Rand) int {
	for {
		if j, ok := alias.Draw(a.tab, a.lemK, r.Uint64()); ok {
			return j
		}
	}
}

// aliasBuilder builds the sparse tables of the word proposals on top of
// alias.Builder, reusing its scratch.
type aliasBuilder struct {
	b   alias.Builder
	tab []alias.Entry
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
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	tab := slices.Grow(b.tab[:0], n)[:n]
	b.tab = tab
	b.b.Build(tab, w, sum)
	for i, e := range tab {
		dst[start+i] = sparseEntry{thresh: e.Thresh, topic: topics[i], alias: topics[e.Alias]}
	}
	return dst
}
