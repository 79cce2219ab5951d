package embed

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/fedtopic/fedtopic/corpus"
)

// TestRandomizedSVDMatchesExact compares the randomized SVD's leading
// singular values and vectors with gonum's exact SVD on a 200×200 sparse
// matrix of rank 8 plus small noise.
func TestRandomizedSVDMatchesExact(t *testing.T) {
	const n, rank, dim = 200, 8, 5
	r := rand.New(rand.NewPCG(5, 6))
	dense := mat.NewDense(n, n, nil)
	for range rank {
		u, v := make([]float64, n), make([]float64, n)
		for i := range n {
			if r.Float64() < 0.3 {
				u[i] = r.Float64()
			}
			if r.Float64() < 0.3 {
				v[i] = r.Float64()
			}
		}
		s := 1 + 4*r.Float64()
		for i := range n {
			for j := range n {
				dense.Set(i, j, dense.At(i, j)+s*u[i]*v[j])
			}
		}
	}
	m := &csr{n: n, start: []int{0}}
	for i := range n {
		for j := range n {
			x := dense.At(i, j)
			if x != 0 {
				x += 1e-3 * r.NormFloat64()
				dense.Set(i, j, x)
				m.col = append(m.col, int32(j))
				m.val = append(m.val, x)
			}
		}
		m.start = append(m.start, len(m.col))
	}
	var exact mat.SVD
	if !exact.Factorize(dense, mat.SVDThin) {
		t.Fatal("exact SVD failed")
	}
	want := exact.Values(nil)
	var wantU mat.Dense
	exact.UTo(&wantU)
	u, got, err := randomizedSVD(context.Background(), m, dim, Config{Oversample: 10, PowerIters: 3, Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	for k := range dim {
		if math.Abs(got[k]-want[k]) > 1e-6*want[0] {
			t.Errorf("singular value %d = %.9g; want %.9g", k, got[k], want[k])
		}
		c := 0.0
		for i := range n {
			c += u[i*dim+k] * wantU.At(i, k)
		}
		if math.Abs(math.Abs(c)-1) > 1e-6 {
			t.Errorf("singular vector %d: |cosine| with the exact one %.9f; want 1", k, math.Abs(c))
		}
	}
}

// TestWorkersDoNotChangeResult trains the same vectors with 1 and 3
// workers.
func TestWorkersDoNotChangeResult(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	c := &corpus.Corpus{V: 300, DocStart: []int{0}}
	for range 400 {
		for range 5 + r.IntN(20) {
			c.Words = append(c.Words, int32(min(r.ExpFloat64()*40, 299)))
		}
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	words := make([]string, c.V)
	for i := range words {
		words[i] = "w" + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	one, err := Train(context.Background(), c, words, Config{Dim: 10, Seed: 2, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	three, err := Train(context.Background(), c, words, Config{Dim: 10, Seed: 2, Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(one.Vec, three.Vec) || !slices.Equal(one.Words, three.Words) {
		t.Errorf("Train with 3 workers differs from 1 worker")
	}
}
