package pctd

import (
	"cmp"
	"slices"
	"sync"

	"github.com/fedtopic/fedtopic/eval"
)

// Relation is the sparse word-relation matrix R of Eq. 12: R_ab is the
// cosine similarity of the embeddings of words a and b, kept where b is
// among a's most similar words at or above a cutoff (or a among b's: R is
// symmetric), and R_aa = 1 for every word, with or without a vector.
type Relation struct {
	v     int
	start []int // CSR row offsets, len V+1
	col   []int32
	val   []float64
}

// NewRelation builds R over a vocabulary of v words from e: each word with
// a vector keeps its neighbours most similar words whose cosine is at
// least cutoff, and the lists are symmetrized. It takes O(V²·dim) time,
// spread over workers goroutines.
func NewRelation(e *eval.Embeddings, v, neighbours int, cutoff float64, workers int) *Relation {
	type pair struct {
		b   int32
		cos float64
	}
	lists := make([][]pair, v)
	var wg sync.WaitGroup
	workers = max(workers, 1)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := w; a < v; a += workers {
				va, ok := e.Vector(a)
				if !ok {
					continue
				}
				var best []pair
				for b := range v {
					vb, ok := e.Vector(b)
					if !ok || b == a {
						continue
					}
					var dot float32
					for i, x := range va {
						dot += x * vb[i]
					}
					if c := float64(dot); c >= cutoff {
						best = append(best, pair{int32(b), c})
					}
				}
				slices.SortFunc(best, func(x, y pair) int {
					if c := cmp.Compare(y.cos, x.cos); c != 0 {
						return c
					}
					return cmp.Compare(x.b, y.b)
				})
				lists[a] = best[:min(len(best), neighbours)]
			}
		}()
	}
	wg.Wait()
	// Symmetrize: a keeps b if either kept the other.
	sym := make([]map[int32]float64, v)
	for a := range v {
		sym[a] = map[int32]float64{int32(a): 1}
	}
	for a, l := range lists {
		for _, p := range l {
			sym[a][p.b] = p.cos
			sym[p.b][int32(a)] = p.cos
		}
	}
	r := &Relation{v: v, start: make([]int, 1, v+1)}
	for a := range v {
		cols := make([]int32, 0, len(sym[a]))
		for b := range sym[a] {
			cols = append(cols, b)
		}
		slices.Sort(cols)
		for _, b := range cols {
			r.col = append(r.col, b)
			r.val = append(r.val, sym[a][b])
		}
		r.start = append(r.start, len(r.col))
	}
	return r
}

// Entries returns the number of stored entries of R, the diagonal
// included.
func (r *Relation) Entries() int { return len(r.col) }

// Neighbours returns the words related to a (a itself included) and their
// cosines.
func (r *Relation) Neighbours(a int) ([]int32, []float64) {
	return r.col[r.start[a]:r.start[a+1]], r.val[r.start[a]:r.start[a+1]]
}

// apply performs the word-relation step of Eq. 13 on one topic p (a
// distribution over the vocabulary) in place:
//
//	p'(w) = p(w) + τ·p(w)·(Rp)(w) / (pᵀRp),
//
// then normalizes p'. Words related to nothing but themselves gain in
// proportion to p(w)², so frequent words of a topic gain most, as the
// paper's quadratic form intends.
func (r *Relation) apply(p []float64, tau float64) {
	q := make([]float64, len(p))
	var denom float64
	for a := range p {
		var s float64
		for i := r.start[a]; i < r.start[a+1]; i++ {
			s += r.val[i] * p[r.col[i]]
		}
		q[a] = s
		denom += p[a] * s
	}
	if !(denom > 0) {
		return
	}
	var sum float64
	for a := range p {
		p[a] += tau * p[a] * q[a] / denom
		sum += p[a]
	}
	for a := range p {
		p[a] /= sum
	}
}
