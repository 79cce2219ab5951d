package embed

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/parallel"
)

// csr is a sparse n×n matrix in compressed sparse row form: row i holds the
// columns col[start[i]:start[i+1]], ascending, with values val.
type csr struct {
	n     int
	start []int
	col   []int32
	val   []float64
}

// rowBlocks is the number of fixed blocks the rows are cut into for
// parallel work.
const rowBlocks = 64

// blockRange returns the rows [lo, hi) of block b of n rows.
func blockRange(b, n int) (lo, hi int) { return b * n / rowBlocks, (b + 1) * n / rowBlocks }

// cooccurrences counts the weighted co-occurrences of the kept words of c
// (keep maps a corpus word id to a row or −1; n rows): every pair of kept
// tokens of one document at distance d ≤ cfg.Window adds (W − d + 1)/W to
// both entries. It returns the matrix and the number of kept tokens.
func cooccurrences(ctx context.Context, c *corpus.Corpus, keep []int32, n int, cfg Config) (*csr, int, error) {
	tok := make([]int32, len(c.Words))
	occStart := make([]int, n+1)
	tokens := 0
	for p, w := range c.Words {
		tok[p] = keep[w]
		if r := tok[p]; r >= 0 {
			occStart[r+1]++
			tokens++
		}
	}
	for i := range n {
		occStart[i+1] += occStart[i]
	}
	occ := make([]int32, tokens) // positions of each row's tokens, ascending
	docOf := make([]int32, len(c.Words))
	fill := slices.Clone(occStart[:n])
	for d := range c.NumDocs() {
		for p := c.DocStart[d]; p < c.DocStart[d+1]; p++ {
			docOf[p] = int32(d)
			if r := tok[p]; r >= 0 {
				occ[fill[r]] = int32(p)
				fill[r]++
			}
		}
	}
	win := cfg.Window
	weight := make([]float64, win+1)
	for d := 1; d <= win; d++ {
		weight[d] = float64(win-d+1) / float64(win)
	}
	type scratch struct {
		acc     []float64
		touched []int32
		_       [parallel.CacheGap]byte
	}
	scr := make([]scratch, cfg.Workers)
	type part struct {
		start []int // row lengths, then offsets within the part
		col   []int32
		val   []float64
	}
	parts := make([]part, rowBlocks)
	err := parallel.Blocks(ctx, cfg.Workers, rowBlocks, func(worker, b int) {
		s := &scr[worker]
		if s.acc == nil {
			s.acc = make([]float64, n)
		}
		lo, hi := blockRange(b, n)
		pt := part{start: make([]int, 0, hi-lo)}
		for i := lo; i < hi; i++ {
			s.touched = s.touched[:0]
			for _, p32 := range occ[occStart[i]:occStart[i+1]] {
				p := int(p32)
				d := docOf[p]
				from, to := max(c.DocStart[d], p-win), min(c.DocStart[d+1], p+win+1)
				for q := from; q < to; q++ {
					r := tok[q]
					if q == p || r < 0 {
						continue
					}
					if s.acc[r] == 0 {
						s.touched = append(s.touched, r)
					}
					s.acc[r] += weight[abs(p-q)]
				}
			}
			slices.Sort(s.touched)
			pt.start = append(pt.start, len(s.touched))
			for _, r := range s.touched {
				pt.col = append(pt.col, r)
				pt.val = append(pt.val, s.acc[r])
				s.acc[r] = 0
			}
		}
		parts[b] = pt
	})
	if err != nil {
		return nil, 0, fmt.Errorf("embed: count co-occurrences: %w", err)
	}
	m := &csr{n: n, start: make([]int, 1, n+1)}
	for _, pt := range parts {
		for _, l := range pt.start {
			m.start = append(m.start, m.start[len(m.start)-1]+l)
		}
		m.col = append(m.col, pt.col...)
		m.val = append(m.val, pt.val...)
	}
	return m, tokens, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// ppmi replaces the co-occurrence counts of m by their positive PMI with
// context-distribution smoothing (doc.go) and drops the entries that are
// not positive.
func (m *csr) ppmi() {
	rs := make([]float64, m.n)
	for i := range m.n {
		for _, x := range m.val[m.start[i]:m.start[i+1]] {
			rs[i] += x
		}
	}
	ca := make([]float64, m.n) // #c^α
	za := 0.0
	for j, x := range rs {
		ca[j] = math.Pow(x, ContextAlpha)
		za += ca[j]
	}
	out := 0
	start := 0
	for i := range m.n {
		end := m.start[i+1]
		for k := start; k < end; k++ {
			j := m.col[k]
			pmi := math.Log(m.val[k] * za / (rs[i] * ca[j]))
			if pmi > 0 {
				m.col[out], m.val[out] = j, pmi
				out++
			}
		}
		start = end
		m.start[i+1] = out
	}
	m.col, m.val = m.col[:out], m.val[:out]
}

// transpose returns mᵀ.
func (m *csr) transpose() *csr {
	t := &csr{n: m.n, start: make([]int, m.n+1), col: make([]int32, len(m.col)), val: make([]float64, len(m.val))}
	for _, j := range m.col {
		t.start[j+1]++
	}
	for i := range m.n {
		t.start[i+1] += t.start[i]
	}
	fill := slices.Clone(t.start[:m.n])
	for i := range m.n { // rows ascending, so each of t's rows is sorted
		for k := m.start[i]; k < m.start[i+1]; k++ {
			j := m.col[k]
			t.col[fill[j]], t.val[fill[j]] = int32(i), m.val[k]
			fill[j]++
		}
	}
	return t
}

// mul sets dst (n×k, row-major) to m·x for x n×k row-major.
func (m *csr) mul(ctx context.Context, workers int, dst, x []float64, k int) error {
	return parallel.Blocks(ctx, workers, rowBlocks, func(_, b int) {
		lo, hi := blockRange(b, m.n)
		for i := lo; i < hi; i++ {
			out := dst[i*k : (i+1)*k]
			clear(out)
			for p := m.start[i]; p < m.start[i+1]; p++ {
				a := m.val[p]
				row := x[int(m.col[p])*k : (int(m.col[p])+1)*k]
				for t, v := range row {
					out[t] += a * v
				}
			}
		}
	})
}
