package ftm

import (
	"slices"

	"github.com/fedtopic/fedtopic/topic"
)

// Top is a topic truncated to its L most probable words (ties: the lower
// word id first): the words in increasing id order and their
// probabilities. Every other word counts as zero.
type Top struct {
	Words []int32
	Probs []float64
}

// TopL returns the truncation of row (a topic's word distribution) to its
// l most probable words.
func TopL(row []float64, l int) Top {
	ids := topic.TopIDs(row, l)
	slices.Sort(ids)
	t := Top{Words: ids, Probs: make([]float64, len(ids))}
	for i, w := range ids {
		t.Probs[i] = row[w]
	}
	return t
}

// Similarity returns ρ(a, b) of FTM Eq. 17: the weighted Jaccard similarity
// of two truncated topics, Σ_w min(a_w, b_w) / Σ_w max(a_w, b_w) over the
// union of their words (a word outside a truncation counts as zero there).
// It is 1 for identical truncations, 0 for disjoint ones, and 0 when both
// are empty.
func Similarity(a, b Top) float64 {
	var lo, hi float64
	i, j := 0, 0
	for i < len(a.Words) || j < len(b.Words) {
		switch {
		case j == len(b.Words) || (i < len(a.Words) && a.Words[i] < b.Words[j]):
			hi += a.Probs[i]
			i++
		case i == len(a.Words) || b.Words[j] < a.Words[i]:
			hi += b.Probs[j]
			j++
		default:
			x, y := a.Probs[i], b.Probs[j]
			lo += min(x, y)
			hi += max(x, y)
			i++
			j++
		}
	}
	if hi == 0 {
		return 0
	}
	return lo / hi
}

// Topic is one topic of a model handed to Integrate: a word distribution
// and its weight (the document count n_p of the party it came from).
type Topic struct {
	Row    []float64
	Weight float64
}

// Integrate is FTM's integration of local models (FTM Algorithm 2, iFTM
// Algorithm 3; docs/methods.md): the topics, concatenated in the order
// given, are nodes; every pair with ρ ≥ ξ on the top-l truncations is
// redundant; each connected component of the redundancy graph (union-find)
// becomes one topic, the average of its members' rows weighted by their
// weights and renormalized, with the sum of their weights. Global topics
// come in the order of their first member, and members[g] lists the input
// topics merged into global topic g. Rows must share one length.
func Integrate(topics []Topic, l int, xi float64) (global []Topic, members [][]int) {
	n := len(topics)
	tops := make([]Top, n)
	for i, t := range topics {
		tops[i] = TopL(t.Row, l)
	}
	uf := newUnionFind(n)
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			if Similarity(tops[i], tops[j]) >= xi {
				uf.union(i, j)
			}
		}
	}
	index := make(map[int]int, n) // component root → global topic
	for i := 0; i < n; i++ {
		r := uf.find(i)
		g, ok := index[r]
		if !ok {
			g = len(members)
			index[r] = g
			members = append(members, nil)
		}
		members[g] = append(members[g], i)
	}
	global = make([]Topic, len(members))
	for g, ms := range members {
		v := len(topics[ms[0]].Row)
		row := make([]float64, v)
		var wsum float64
		for _, m := range ms {
			wsum += topics[m].Weight
		}
		for _, m := range ms {
			f := 1 / float64(len(ms)) // equal weights when every member weighs 0
			if wsum > 0 {
				f = topics[m].Weight / wsum
			}
			for w, x := range topics[m].Row {
				row[w] += f * x
			}
		}
		normalize(row)
		global[g] = Topic{Row: row, Weight: wsum}
	}
	return global, members
}

// Compose builds a party's next local model from its current one (FTM
// Algorithm 3, iFTM Algorithm 4): for each local topic in order, the
// remaining global topic z with the largest ρ (ties: the lower index) is
// taken out of the candidates; if ρ ≥ ξ the local topic is replaced by z,
// else it stays. No global topic is used twice. from[k] is the global topic
// that replaced local topic k, or −1.
func Compose(local [][]float64, global []Topic, l int, xi float64) (rows [][]float64, from []int) {
	gt := make([]Top, len(global))
	for g, t := range global {
		gt[g] = TopL(t.Row, l)
	}
	free := make([]bool, len(global))
	for g := range free {
		free[g] = true
	}
	rows = make([][]float64, len(local))
	from = make([]int, len(local))
	for k, row := range local {
		lt := TopL(row, l)
		best, bestRho := -1, -1.0
		for g := range global {
			if !free[g] {
				continue
			}
			if r := Similarity(gt[g], lt); r > bestRho {
				best, bestRho = g, r
			}
		}
		rows[k], from[k] = row, -1
		if best < 0 {
			continue
		}
		free[best] = false
		if bestRho >= xi {
			rows[k], from[k] = global[best].Row, best
		}
	}
	return rows, from
}

// normalize scales row to sum to 1; a row of zeros becomes uniform.
func normalize(row []float64) {
	var s float64
	for _, x := range row {
		s += x
	}
	if !(s > 0) {
		for w := range row {
			row[w] = 1 / float64(len(row))
		}
		return
	}
	for w := range row {
		row[w] /= s
	}
}

// unionFind is a disjoint-set forest with path halving and union by size.
type unionFind struct {
	parent, size []int
}

func newUnionFind(n int) *unionFind {
	u := &unionFind{parent: make([]int, n), size: make([]int, n)}
	for i := range u.parent {
		u.parent[i] = i
		u.size[i] = 1
	}
	return u
}

func (u *unionFind) find(x int) int {
	for u.parent[x] != x {
		u.parent[x] = u.parent[u.parent[x]]
		x = u.parent[x]
	}
	return x
}

func (u *unionFind) union(a, b int) {
	a, b = u.find(a), u.find(b)
	if a == b {
		return
	}
	if u.size[a] < u.size[b] {
		a, b = b, a
	}
	u.parent[b] = a
	u.size[a] += u.size[b]
}
