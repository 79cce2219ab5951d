package fednmf

import (
	"fmt"
	"math"
	"slices"

	"github.com/fedtopic/fedtopic/corpus"
)

// Matrix is a sparse V×N document matrix A in compressed-column form:
// column j (document j) holds Vals[Start[j]:Start[j+1]] at the word ids
// Rows[Start[j]:Start[j+1]], in increasing word order.
type Matrix struct {
	V, N  int
	Start []int
	Rows  []int32
	Vals  []float64
}

// Col returns column j's word ids and values (views).
func (a *Matrix) Col(j int) ([]int32, []float64) {
	return a.Rows[a.Start[j]:a.Start[j+1]], a.Vals[a.Start[j]:a.Start[j+1]]
}

// NewMatrix builds the document matrix of c's documents with the given
// features (FeaturesTFIDF or FeaturesCounts). The inverse document
// frequencies of tf-idf come from c alone: a client weighs its words by its
// own documents and releases nothing to do so.
func NewMatrix(c *corpus.Corpus, features string) (*Matrix, error) {
	switch features {
	case "", FeaturesTFIDF, FeaturesCounts:
	default:
		return nil, fmt.Errorf("fednmf: features %q: want %s or %s", features, FeaturesTFIDF, FeaturesCounts)
	}
	n := c.NumDocs()
	a := &Matrix{V: c.V, N: n, Start: make([]int, 1, n+1)}
	var ids []int32
	for d := range n {
		ids = append(ids[:0], c.Doc(d)...)
		slices.Sort(ids)
		for i := 0; i < len(ids); {
			j := i
			for j < len(ids) && ids[j] == ids[i] {
				j++
			}
			if ids[i] < 0 || int(ids[i]) >= c.V {
				return nil, fmt.Errorf("fednmf: document %d: word id %d outside the vocabulary of %d words", d, ids[i], c.V)
			}
			a.Rows = append(a.Rows, ids[i])
			a.Vals = append(a.Vals, float64(j-i))
			i = j
		}
		a.Start = append(a.Start, len(a.Rows))
	}
	if features == FeaturesCounts {
		return a, nil
	}
	df := make([]int, c.V)
	for _, w := range a.Rows {
		df[w]++
	}
	idf := make([]float64, c.V)
	for w, f := range df {
		idf[w] = math.Log(float64(1+n)/float64(1+f)) + 1
	}
	for j := range n {
		rows, vals := a.Col(j)
		var ss float64
		for i, w := range rows {
			vals[i] *= idf[w]
			ss += vals[i] * vals[i]
		}
		if ss > 0 {
			inv := 1 / math.Sqrt(ss)
			for i := range vals {
				vals[i] *= inv
			}
		}
	}
	return a, nil
}

// Norm2 returns ‖A‖²_F.
func (a *Matrix) Norm2() float64 {
	var s float64
	for _, v := range a.Vals {
		s += v * v
	}
	return s
}
