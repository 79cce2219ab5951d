package embed

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// randomizedSVD returns the dim leading left singular vectors of m (n×dim,
// row-major) and the singular values, by randomized subspace iteration
// (Halko, Martinsson and Tropp 2011, Algorithms 4.4 and 5.1).
func randomizedSVD(ctx context.Context, m *csr, dim int, cfg Config) (u, s []float64, err error) {
	n := m.n
	k := min(dim+cfg.Oversample, n)
	mt := m.transpose()
	r := rng.Derive(cfg.Seed, "embed", "test matrix")
	omega := make([]float64, n*k)
	for i := range omega {
		omega[i] = r.NormFloat64()
	}
	y := make([]float64, n*k)
	q := make([]float64, n*k)
	if err := m.mul(ctx, cfg.Workers, y, omega, k); err != nil {
		return nil, nil, fmt.Errorf("embed: svd: %w", err)
	}
	orthonormalize(y, n, k)
	for range cfg.PowerIters {
		if err := mt.mul(ctx, cfg.Workers, q, y, k); err != nil {
			return nil, nil, fmt.Errorf("embed: svd: %w", err)
		}
		orthonormalize(q, n, k)
		if err := m.mul(ctx, cfg.Workers, y, q, k); err != nil {
			return nil, nil, fmt.Errorf("embed: svd: %w", err)
		}
		orthonormalize(y, n, k)
	}
	// Q = y. Bᵀ = mᵀQ (n×k) = V Σ Ũᵀ, so m ≈ Q·B = (QŨ) Σ Vᵀ.
	bt := q
	if err := mt.mul(ctx, cfg.Workers, bt, y, k); err != nil {
		return nil, nil, fmt.Errorf("embed: svd: %w", err)
	}
	var svd mat.SVD
	if !svd.Factorize(mat.NewDense(n, k, bt), mat.SVDThin) {
		return nil, nil, fmt.Errorf("embed: svd: the projected %d×%d matrix did not converge", n, k)
	}
	sv := svd.Values(nil)
	var ut mat.Dense // Ũ, k×k
	svd.VTo(&ut)
	var uq mat.Dense
	uq.Mul(mat.NewDense(n, k, y), &ut)
	u = make([]float64, n*dim)
	for i := range n {
		for t := range dim {
			u[i*dim+t] = uq.At(i, t)
		}
	}
	return u, sv[:dim], nil
}

// orthonormalize replaces the n×k row-major matrix a (n ≥ k) by the Q of
// its thin QR factorization (Householder, LAPACK's dgeqrf and dorgqr).
func orthonormalize(a []float64, n, k int) {
	g := blas64.General{Rows: n, Cols: k, Stride: k, Data: a}
	tau := make([]float64, k)
	work := make([]float64, 1)
	lapack64.Geqrf(g, tau, work, -1)
	lw := int(work[0])
	lapack64.Orgqr(g, tau, work, -1)
	lw = max(lw, int(work[0]), k)
	work = make([]float64, lw)
	lapack64.Geqrf(g, tau, work, lw)
	lapack64.Orgqr(g, tau, work, lw)
}
