package alias

import "math"

// Entry is one slot of a table: a draw that lands on slot j keeps j when a
// 32-bit coin is below Thresh and takes Alias otherwise.
type Entry struct {
	Thresh uint32
	Alias  uint32
}

// Builder holds the work lists of Vose's construction, so repeated builds
// do not allocate. The zero value is ready to use.
type Builder struct {
	scaled       []float64
	small, large []int32
}

// Build fills tab (len(w) slots) with the table of the non-negative weights
// w, whose sum must be positive.
func (b *Builder) Build(tab []Entry, w []float64, sum float64) {
	n := len(w)
	if cap(b.scaled) < n {
		b.scaled = make([]float64, n)
		b.small = make([]int32, 0, n)
		b.large = make([]int32, 0, n)
	}
	p := b.scaled[:n]
	small, large := b.small[:0], b.large[:0]
	scale := float64(n) / sum
	for i, x := range w {
		p[i] = x * scale
		if p[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s := small[len(small)-1]
		small = small[:len(small)-1]
		l := large[len(large)-1]
		tab[s] = Entry{Thresh: Threshold(p[s]), Alias: uint32(l)}
		p[l] -= 1 - p[s]
		if p[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	// What is left has probability 1 up to rounding: keep the slot itself.
	for _, i := range large {
		tab[i] = Entry{Thresh: math.MaxUint32, Alias: uint32(i)}
	}
	for _, i := range small {
		tab[i] = Entry{Thresh: math.MaxUint32, Alias: uint32(i)}
	}
	b.small, b.large = small, large
}

// Threshold converts a slot probability in [0, 1] to a 32-bit coin bound.
func Threshold(p float64) uint32 {
	t := math.Round(p * (1 << 32))
	if t >= math.MaxUint32 {
		return math.MaxUint32
	}
	if t <= 0 {
		return 0
	}
	return uint32(t)
}

// LemireBound returns (2³² − n) mod n, the bound below which Lemire's
// multiply-shift method must reject a 32-bit draw to stay exactly uniform
// over [0, n), for 0 < n < 2³².
func LemireBound(n int) uint32 { return uint32(-uint32(n)) % uint32(n) }

// Draw draws from tab with one 64-bit word x: the high 32 bits pick a slot
// uniformly (ok is false when x must be rejected to keep the slot exactly
// uniform, with probability below len(tab)/2³²; lem is
// LemireBound(len(tab))), the low 32 bits are the coin.
func Draw(tab []Entry, lem uint32, x uint64) (k int, ok bool) {
	m := (x >> 32) * uint64(len(tab))
	if uint32(m) < lem {
		return 0, false
	}
	e := tab[m>>32]
	if uint32(x) < e.Thresh {
		return int(m >> 32), true
	}
	return int(e.Alias), true
}
