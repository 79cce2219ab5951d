package alias

import "math"

// Entry is one slot of a table: a draw that lands on slot j keeps j when a
// 32-bit coin is below Thresh and takes Alias otherwise.
type Entry struct {
	Thresh uint32
	Alias  uint32
}

// Builder holds the work list of Vose's construction, so repeated builds
// do not allocate. The zero value is ready to use.
type Builder struct {
	scaled []float64
	idx    []int32
}

// Build fills tab (len(w) slots) with the table of the non-negative weights
// w, whose sum must be positive.
//
// It is Vose's construction with its two work lists in one array, the
// small slots (scaled weight below 1) growing from the front and the large
// ones from the back, each taken last in, first out. Which list a slot
// joins is computed, not branched on: the weights are random, and a
// mispredicted branch per slot would cost more than the rest of the work.
func (b *Builder) Build(tab []Entry, w []float64, sum float64) {
	n := len(w)
	if cap(b.scaled) < n {
		b.scaled = make([]float64, n)
		b.idx = make([]int32, n)
	}
	p := b.scaled[:n]
	idx := b.idx[:n]
	tab = tab[:n]
	scale := float64(n) / sum
	// idx[:s] is the small list, idx[l:] the large one.
	s, l := 0, n
	for i, x := range w {
		y := x * scale
		p[i] = y
		sm := below1(y)
		idx[l-1+sm*(s-l+1)] = int32(i)
		s += sm
		l -= 1 - sm
	}
	for s > 0 && l < n {
		s--
		j, g := idx[s], idx[l]
		tab[j] = Entry{Thresh: Threshold(p[j]), Alias: uint32(g)}
		y := p[g] - (1 - p[j])
		p[g] = y
		// A large slot that falls below 1 moves to the small list, to be
		// taken next.
		sm := below1(y)
		idx[s] = g
		s += sm
		l += sm
	}
	// What is left has probability 1 up to rounding: keep the slot itself.
	for _, i := range idx[:s] {
		tab[i] = Entry{Thresh: math.MaxUint32, Alias: uint32(i)}
	}
	for _, i := range idx[l:] {
		tab[i] = Entry{Thresh: math.MaxUint32, Alias: uint32(i)}
	}
}

// below1 returns 1 when y < 1 and 0 otherwise, for y ≥ 0 or y a small
// negative rounding error, from the bits of y: for non-negative floats the
// bits order like the values, and a negative one has its sign bit set.
func below1(y float64) int {
	b := math.Float64bits(y)
	if int64(b) < 0 {
		return 1
	}
	return int((b - math.Float64bits(1)) >> 63)
}

// Threshold converts a slot probability in [0, 1] to a 32-bit coin bound:
// p·2³² rounded to the nearest integer (halves up), clamped to 32 bits. For
// 0 ≤ x < 2⁵², x + ½ is exact and its floor is x rounded half up.
func Threshold(p float64) uint32 {
	x := p*(1<<32) + 0.5
	if !(x >= 1) {
		return 0
	}
	if x >= math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(x)
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
