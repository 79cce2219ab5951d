package eval

import (
	"errors"
	"fmt"
	"math"
)

// RecoveryThreshold is the Hellinger distance below which Recovery counts a
// planted topic as recovered. Two topics at Hellinger distance 0.25 share a
// Bhattacharyya coefficient of 1 − 0.25² = 0.9375; independent Dirichlet
// topics over a few hundred words are typically 0.7–0.9 apart, and a sampler
// that has found a planted topic from a few thousand of its tokens lands well
// under 0.2.
const RecoveryThreshold = 0.25

// RecoveryResult is the outcome of matching learned topics to planted ones.
type RecoveryResult struct {
	// Assign[i] is the learned topic matched to planted topic i; the
	// assignment is a permutation.
	Assign []int `json:"assign"`
	// Distance[i] is the Hellinger distance between planted topic i and
	// learned topic Assign[i].
	Distance []float64 `json:"distance"`
	// Mean is the mean of Distance: the minimum over all one-to-one matchings
	// of the mean Hellinger distance.
	Mean float64 `json:"mean"`
	// Recovered counts the planted topics whose matched distance is below
	// RecoveryThreshold.
	Recovered int `json:"recovered"`
}

// CountBelow returns how many planted topics are matched at a Hellinger
// distance strictly below threshold.
func (r RecoveryResult) CountBelow(threshold float64) int {
	n := 0
	for _, d := range r.Distance {
		if d < threshold {
			n++
		}
	}
	return n
}

// Recovery matches the k learned topics to the k planted topics one-to-one
// so that the sum of Hellinger distances is minimal (Kuhn–Munkres, O(k³)),
// and reports the matching, the matched distances, their mean and how many
// planted topics were recovered (distance < RecoveryThreshold).
//
// planted and learned are row-major k×v matrices whose rows are topics. Rows
// are normalized to sum to one before comparison, so count matrices are
// accepted as well as distributions; entries must be finite and
// non-negative and every row must have positive mass.
//
// The Hellinger distance H(p, q) = sqrt(1 − Σ_w sqrt(p_w q_w)) lies in
// [0, 1], is a metric, is symmetric, and, unlike the KL divergence, stays
// finite when one topic gives a word zero mass. It was chosen over the L1
// distance because it weighs differences on rare words relatively more,
// which is where a poorly recovered topic differs.
func Recovery(planted, learned []float64, k, v int) (RecoveryResult, error) {
	if k < 1 || v < 1 {
		return RecoveryResult{}, fmt.Errorf("eval: recovery: need k ≥ 1 and v ≥ 1, got k = %d, v = %d", k, v)
	}
	if err := errors.Join(
		checkTopics("planted", planted, k, v),
		checkTopics("learned", learned, k, v),
	); err != nil {
		return RecoveryResult{}, fmt.Errorf("eval: recovery: %w", err)
	}
	sp := sqrtRows(planted, k, v)
	sl := sqrtRows(learned, k, v)
	cost := make([]float64, k*k)
	for i := range k {
		for j := range k {
			cost[i*k+j] = hellingerSqrt(sp[i*v:(i+1)*v], sl[j*v:(j+1)*v])
		}
	}
	match := assign(cost, k, k)
	res := RecoveryResult{Assign: match, Distance: make([]float64, k)}
	sum := 0.0
	for i, j := range match {
		d := cost[i*k+j]
		res.Distance[i] = d
		sum += d
	}
	res.Mean = sum / float64(k)
	res.Recovered = res.CountBelow(RecoveryThreshold)
	return res, nil
}

// Hellinger returns the Hellinger distance sqrt(1 − Σ_w sqrt(p_w q_w))
// between two distributions of the same length. It panics if the lengths
// differ; it does not normalize.
func Hellinger(p, q []float64) float64 {
	if len(p) != len(q) {
		panic("eval: Hellinger: length mismatch")
	}
	bc := 0.0
	for w := range p {
		bc += math.Sqrt(p[w] * q[w])
	}
	return math.Sqrt(max(0, 1-bc))
}

// hellingerSqrt is Hellinger on rows already replaced by their square roots.
func hellingerSqrt(sp, sq []float64) float64 {
	bc := 0.0
	for w := range sp {
		bc += sp[w] * sq[w]
	}
	return math.Sqrt(max(0, 1-bc))
}

// sqrtRows returns the element-wise square roots of the row-normalized k×v
// matrix m.
func sqrtRows(m []float64, k, v int) []float64 {
	out := make([]float64, k*v)
	for i := range k {
		row := m[i*v : (i+1)*v]
		s := 0.0
		for _, x := range row {
			s += x
		}
		for w, x := range row {
			out[i*v+w] = math.Sqrt(x / s)
		}
	}
	return out
}

// checkTopics reports whether m is a k×v matrix of finite, non-negative
// entries with positive row sums.
func checkTopics(name string, m []float64, k, v int) error {
	if len(m) != k*v {
		return fmt.Errorf("%s has %d entries, want k×v = %d×%d = %d", name, len(m), k, v, k*v)
	}
	for i := range k {
		s := 0.0
		for w, x := range m[i*v : (i+1)*v] {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return fmt.Errorf("%s topic %d word %d: entry %v is not a finite non-negative number", name, i, w, x)
			}
			s += x
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("%s topic %d: row sum %v, want positive and finite", name, i, s)
		}
	}
	return nil
}
