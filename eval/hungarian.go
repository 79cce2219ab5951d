package eval

import "math"

// assign solves the rectangular assignment problem for the n×m cost matrix
// cost (row-major, n ≤ m): it returns, for every row i, the column match[i]
// so that all columns differ and Σ_i cost[i][match[i]] is minimal.
//
// It is the Kuhn–Munkres (Hungarian) method in its O(n²·m) shortest
// augmenting path form with row and column potentials (Kuhn 1955; Munkres
// 1957; the potentials formulation of Edmonds & Karp 1972 and Tomizawa 1971).
// Ties are broken by the lowest column index, so the result is deterministic.
// The costs must be finite; the caller checks that.
func assign(cost []float64, n, m int) []int {
	if n > m || len(cost) != n*m {
		panic("eval: assign: cost matrix shape mismatch")
	}
	// Indices are 1-based inside, with 0 as the virtual start column.
	u := make([]float64, n+1)    // row potentials
	v := make([]float64, m+1)    // column potentials
	p := make([]int, m+1)        // p[j]: row matched to column j (0 = none)
	way := make([]int, m+1)      // way[j]: previous column on the path to j
	minv := make([]float64, m+1) // minv[j]: smallest reduced cost reaching j
	used := make([]bool, m+1)    // used[j]: column j is in the tree
	for i := 1; i <= n; i++ {
		p[0] = i
		j0 := 0
		for j := range minv {
			minv[j] = math.Inf(1)
			used[j] = false
		}
		for {
			used[j0] = true
			i0 := p[j0]
			delta := math.Inf(1)
			j1 := -1
			for j := 1; j <= m; j++ {
				if used[j] {
					continue
				}
				cur := cost[(i0-1)*m+(j-1)] - u[i0] - v[j]
				if cur < minv[j] {
					minv[j] = cur
					way[j] = j0
				}
				if minv[j] < delta {
					delta = minv[j]
					j1 = j
				}
			}
			for j := 0; j <= m; j++ {
				if used[j] {
					u[p[j]] += delta
					v[j] -= delta
				} else {
					minv[j] -= delta
				}
			}
			j0 = j1
			if p[j0] == 0 {
				break
			}
		}
		for j0 != 0 {
			j1 := way[j0]
			p[j0] = p[j1]
			j0 = j1
		}
	}
	match := make([]int, n)
	for j := 1; j <= m; j++ {
		if p[j] != 0 {
			match[p[j]-1] = j - 1
		}
	}
	return match
}
