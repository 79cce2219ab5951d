package attack_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/attack"
	"github.com/fedtopic/fedtopic/sim/vocabround"
)

// geqProb returns P(Z ≥ m) for the discrete Laplace Z with decay λ:
// P(Z = z) ∝ e^(−λ|z|).
func geqProb(lambda float64, m int64) float64 {
	a := math.Exp(-lambda)
	if m >= 1 {
		return math.Exp(-lambda*float64(m)) / (1 + a)
	}
	return 1 - math.Exp(-lambda*float64(1-m))/(1+a)
}

// TestVocabularyThresholdBoundary plays the private vocabulary round,
// through its real release path (vocabround's Learner and Decode), at its
// threshold T. A word in exactly T − 1, T and T + 1 documents of the party
// is released with probability P(c + Z ≥ T) — at c = T that is
// P(Z ≥ 0) = 1/(1 + e^(−λ)), which counts the mass exactly at the
// threshold; a strict comparison would give e^(−λ)/(1 + e^(−λ)) instead —
// and a document of l₀ words no other document holds has one of them
// released with probability 1 − (1 − P(Z ≥ T − 1))^l₀, which must be the
// δ(T) that privacy.PartitionDelta states and at most the configured δ
// (the boundary mass P(Z = T − 1) included: leaving it out of δ(T) would
// choose a threshold one lower and break the claim). T must be the
// smallest threshold whose δ is within the configured one.
//
// Each measured frequency is judged by an exact two-sided Clopper–Pearson
// interval; the levels are split so that a correct mechanism fails the test
// with probability at most 1e-5 whatever the seed. The intervals are about
// ±0.02 wide at 20,000 trials, far narrower than the gap between the ≥ and
// > readings of the threshold (0.24 and more at c = T at these settings).
func TestVocabularyThresholdBoundary(t *testing.T) {
	const n = 20000
	tests := []struct {
		name string
		cfg  privacy.PartitionSelectionConfig
	}{
		{name: "simulate's defaults", cfg: privacy.PartitionSelectionConfig{Epsilon: 4, Delta: 1e-6, MaxWordsPerDoc: 1}},
		{name: "large δ, l0 = 1", cfg: privacy.PartitionSelectionConfig{Epsilon: 1, Delta: 0.2, MaxWordsPerDoc: 1}},
		{name: "large δ, l0 = 3", cfg: privacy.PartitionSelectionConfig{Epsilon: 1.5, Delta: 0.3, MaxWordsPerDoc: 3}},
	}
	// 4 frequencies per setting, each interval two-sided.
	alpha := 1e-5 / float64(2*4*len(tests))
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sel, err := privacy.NewPartitionSelection(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			T, l0 := sel.Threshold(), tt.cfg.MaxWordsPerDoc
			lambda := tt.cfg.Epsilon / float64(l0)
			p1 := geqProb(lambda, T-1)
			wantDelta := -math.Expm1(float64(l0) * math.Log1p(-p1))
			if got := privacy.PartitionDelta(tt.cfg.Epsilon, l0, T); math.Abs(got-wantDelta) > 1e-12*wantDelta {
				t.Errorf("PartitionDelta(%v, %d, T = %d) = %v; want %v (1 − (1 − P(Z ≥ T − 1))^l0)", tt.cfg.Epsilon, l0, T, got, wantDelta)
			}
			if wantDelta > tt.cfg.Delta {
				t.Errorf("δ(T = %d) = %v; want ≤ the configured %v", T, wantDelta, tt.cfg.Delta)
			}
			if below := -math.Expm1(float64(l0) * math.Log1p(-geqProb(lambda, T-2))); T > 1 && below <= tt.cfg.Delta {
				t.Errorf("δ(T − 1 = %d) = %v is within the configured %v; want T = %d not the smallest", T-1, below, tt.cfg.Delta, T)
			}

			// The party's documents: "below", "at" and "above" in T − 1, T
			// and T + 1 single-word documents, and one document of l0 words
			// found nowhere else.
			var docs [][]string
			for j, w := range []string{"below", "at", "above"} {
				for range T - 1 + int64(j) {
					docs = append(docs, []string{w})
				}
			}
			var fresh []string
			for j := range l0 {
				fresh = append(fresh, fmt.Sprintf("new%d", j))
			}
			docs = append(docs, fresh)
			p := vocabround.Params{Selection: tt.cfg}
			l, err := vocabround.NewLearner(p, docs, rand.New(rand.NewPCG(uint64(i), 6)))
			if err != nil {
				t.Fatal(err)
			}
			counts := map[string]int{}
			for range n {
				st, err := l.Learn(1, nil)
				if err != nil {
					t.Fatal(err)
				}
				words, err := vocabround.Decode(st.Payload, p)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range words {
					counts[w]++
				}
				if slices.ContainsFunc(words, func(w string) bool { return slices.Contains(fresh, w) }) {
					counts["any new"]++
				}
			}
			for _, c := range []struct {
				word   string
				want   float64
				strict float64 // the probability if the comparison were >
			}{
				{"below", geqProb(lambda, 1), geqProb(lambda, 2)},
				{"at", geqProb(lambda, 0), geqProb(lambda, 1)},
				{"above", geqProb(lambda, -1), geqProb(lambda, 0)},
				{"any new", wantDelta, -math.Expm1(float64(l0) * math.Log1p(-geqProb(lambda, T)))},
			} {
				k := counts[c.word]
				lo, hi := attack.ClopperPearsonLower(k, n, alpha), attack.ClopperPearsonUpper(k, n, alpha)
				if c.want < lo || c.want > hi {
					t.Errorf("T = %d: %q released in %d of %d trials, interval [%.4f, %.4f]; want it to hold the exact %.4f (with > instead of ≥: %.4f)",
						T, c.word, k, n, lo, hi, c.want, c.strict)
				}
			}
		})
	}
}
