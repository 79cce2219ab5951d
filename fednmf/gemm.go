package fednmf

import (
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// The dense part of a client's SGD step over W (chunkWork.update): the
// rows of W·M = W − step·W·G for G = H_bᵀH_b (K×K), and the projection
// onto W ≥ 0. Each has a plain-Go form (the reference, and the fallback
// where AVX2 and FMA are missing or the purego build tag is set) and, on
// amd64, an AVX2+FMA form in gemm_amd64.s. The product's kernel takes four
// rows of W at a time and twelve of G's columns (three vectors) in
// registers, then four, then the last K mod 4 under a mask, so any K ≥ 1
// runs; it sums each entry over t = 0, …, K−1 in order, as gonum's
// product does, but fuses every multiply and add and the final
// w − step·(w·G). The two forms may then differ in the last bits; each is
// deterministic, a row's result does not depend on the rows around it,
// and a process uses one form throughout (gemmKernelAVX2 is fixed). The
// projection is the same in both, bit for bit, and counts each row's
// clipped entries so that the correction of Q visits only those rows; the
// correction's rank-2 updates for the batch's words run through a third
// kernel.

// stepRowsGo sets out (n×K, row-major, like w) to w − step·(w·G).
func stepRowsGo(w, g, out []float64, k int, step float64) {
	n := len(w) / k
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, general(n, k, w), general(k, k, g), 0, general(n, k, out))
	for i, x := range w {
		out[i] = x - step*out[i]
	}
}

// stepRows is stepRowsGo, through the AVX2 kernel when avx2 is set; pad
// is its scratch for the last n mod 4 rows, at least 8·K long. out must
// not overlap w.
func stepRows(avx2 bool, w, g, out []float64, k int, step float64, pad []float64) {
	if !avx2 {
		stepRowsGo(w, g, out, k, step)
		return
	}
	if k < 1 || len(w)%k != 0 || len(out) != len(w) || len(g) != k*k || len(pad) < 8*k {
		panic("fednmf: stepRows: W, G, the output or the scratch of the wrong shape")
	}
	n := len(w) / k
	n4 := n &^ 3
	if n4 > 0 {
		stepRows4AVX2(&w[0], &g[0], &out[0], n4, k, step)
	}
	if r := n - n4; r > 0 {
		// The last rows, padded to four with zeros: each row's result is
		// the same whatever the rows around it.
		in, res := pad[:4*k], pad[4*k:8*k]
		copy(in, w[n4*k:])
		clear(in[r*k:])
		stepRows4AVX2(&in[0], &g[0], &res[0], 4, k, step)
		copy(out[n4*k:], res[:r*k])
	}
}

// projectGo sets w to u where u is not below zero and to 0 where it is,
// for the rows of k, sets neg[r] to how many of row r's entries were
// below zero (−0 and NaN are not) and returns their total.
func projectGo(w, u []float64, k int, neg []int32) int {
	var total int
	for r := range neg {
		var n int32
		for t, x := range u[r*k : (r+1)*k] {
			if x < 0 {
				w[r*k+t] = 0
				n++
			} else {
				w[r*k+t] = x
			}
		}
		neg[r] = n
		total += int(n)
	}
	return total
}

// project is projectGo, through the AVX2 kernel when avx2 is set.
func project(avx2 bool, w, u []float64, k int, neg []int32) int {
	if k < 1 || len(w) != len(u) || len(u) != len(neg)*k {
		panic("fednmf: project: lengths differ")
	}
	if !avx2 || len(neg) == 0 {
		return projectGo(w, u, k, neg)
	}
	return projectAVX2(&w[0], &u[0], len(neg), k, &neg[0])
}

// rank2Go adds u·uᵀ − m·mᵀ to c (K×K) on and above the diagonal.
func rank2Go(c, u, m []float64) {
	k := len(u)
	for t := range k {
		ut, mt := u[t], m[t]
		row := c[t*k : (t+1)*k]
		for s := t; s < k; s++ {
			row[s] += ut*u[s] - mt*m[s]
		}
	}
}

// rank2 is rank2Go, through the AVX2 kernel when avx2 is set (which
// fuses the multiplies and adds, so the two may differ in the last bits).
func rank2(avx2 bool, c, u, m []float64) {
	k := len(u)
	if !avx2 || k == 0 {
		rank2Go(c, u, m)
		return
	}
	if len(m) != k || len(c) != k*k {
		panic("fednmf: rank2: lengths differ")
	}
	rank2AVX2(&c[0], &u[0], &m[0], k)
}
