package pctd

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// symFactor holds the eigendecomposition A = Q·diag(λ)·Qᵀ of a symmetric
// positive semi-definite K×K matrix, with eigenvalues below a relative
// tolerance treated as zero, so that singular matrices (identical topics,
// K > V) are handled exactly through the pseudo-inverse.
type symFactor struct {
	k    int
	q    *mat.Dense
	vals []float64 // clipped at zero
	tol  float64
}

// factor decomposes the K×K symmetric matrix a (row-major).
func factor(a []float64, k int) (*symFactor, error) {
	s := mat.NewSymDense(k, append([]float64(nil), a...))
	var e mat.EigenSym
	if !e.Factorize(s, true) {
		return nil, errors.New("pctd: eigendecomposition did not converge")
	}
	f := &symFactor{k: k, q: mat.NewDense(k, k, nil), vals: e.Values(nil)}
	e.VectorsTo(f.q)
	top := 0.0
	for _, v := range f.vals {
		top = max(top, math.Abs(v))
	}
	f.tol = top * float64(k) * 1e-13
	for i, v := range f.vals {
		if v <= f.tol {
			f.vals[i] = 0
		}
	}
	return f, nil
}

// sqrt returns c·Q·diag(√λ) (row-major K×K): B with B·Bᵀ = c²·A.
func (f *symFactor) sqrt(c float64) []float64 {
	k := f.k
	b := make([]float64, k*k)
	for i := range k {
		for j := range k {
			b[i*k+j] = c * f.q.At(i, j) * math.Sqrt(f.vals[j])
		}
	}
	return b
}

// pinv returns the pseudo-inverse Q·diag(1/λ)·Qᵀ (row-major K×K), zero on
// the null space.
func (f *symFactor) pinv() []float64 {
	k := f.k
	inv := make([]float64, k)
	for j, v := range f.vals {
		if v > 0 {
			inv[j] = 1 / v
		}
	}
	out := make([]float64, k*k)
	for i := range k {
		for l := range k {
			var s float64
			for j := range k {
				s += f.q.At(i, j) * inv[j] * f.q.At(l, j)
			}
			out[i*k+l] = s
		}
	}
	return out
}

// gram returns XᵀX (row-major K×K) for X of n×K (row-major).
func gram(x []float64, n, k int) []float64 {
	xm := mat.NewDense(n, k, x)
	var out mat.Dense
	out.Mul(xm.T(), xm)
	return out.RawMatrix().Data
}

// mulNK returns X·Y for X of n×K and Y of K×m (row-major).
func mulNK(x []float64, n, k int, y []float64, m int) []float64 {
	var out mat.Dense
	out.Mul(mat.NewDense(n, k, x), mat.NewDense(k, m, y))
	return out.RawMatrix().Data
}

// mulTN returns Xᵀ·Y for X of n×K and Y of n×m (row-major).
func mulTN(x []float64, n, k int, y []float64, m int) []float64 {
	var out mat.Dense
	out.Mul(mat.NewDense(n, k, x).T(), mat.NewDense(n, m, y))
	return out.RawMatrix().Data
}
