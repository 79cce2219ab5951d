package privacy

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

func TestPartitionThresholdBoundary(t *testing.T) {
	// δ(T) ≤ δ < δ(T−1), with δ(T) = 1 − (1 − P(Z ≥ T−1))^l₀, the
	// boundary mass P(Z = T−1) included.
	for _, c := range []PartitionSelectionConfig{
		{Epsilon: 1, Delta: 1e-6, MaxWordsPerDoc: 1},
		{Epsilon: 1, Delta: 1e-6, MaxWordsPerDoc: 10},
		{Epsilon: 0.5, Delta: 1e-8},
		{Epsilon: 5, Delta: 1e-5, MaxWordsPerDoc: 3},
	} {
		p, err := NewPartitionSelection(c)
		if err != nil {
			t.Fatal(err)
		}
		l0 := p.Config().MaxWordsPerDoc
		T := p.Threshold()
		if d := PartitionDelta(c.Epsilon, l0, T); d > c.Delta {
			t.Errorf("%+v: δ(T = %d) = %v; want ≤ %v", c, T, d, c.Delta)
		}
		if d := PartitionDelta(c.Epsilon, l0, T-1); d <= c.Delta*(1-1e-9) {
			t.Errorf("%+v: δ(T−1 = %d) = %v; want > %v (T is not the smallest)", c, T-1, d, c.Delta)
		}
		if d0, d1 := PartitionDelta(c.Epsilon, l0, T+1), PartitionDelta(c.Epsilon, l0, T); d0 >= d1 {
			t.Errorf("%+v: δ(T+1) = %v ≥ δ(T) = %v; want decreasing", c, d0, d1)
		}
		// The boundary mass matters: leaving out P(Z = T−1) would give
		// the smaller l₀·P(Z ≥ T)·… — check δ(T) against a direct sum.
		lambda := quoDown(c.Epsilon, float64(l0))
		a := math.Exp(-lambda)
		var tail float64
		for z := T - 1; z < T+int64(50/lambda); z++ { // the rest is below e^-50 of the sum
			tail += (1 - a) / (1 + a) * math.Pow(a, float64(z))
		}
		if want := -math.Expm1(float64(l0) * math.Log1p(-tail)); math.Abs(PartitionDelta(c.Epsilon, l0, T)-want) > 1e-9*want {
			t.Errorf("%+v: δ(T) = %v; want 1 − (1 − Σ_{z ≥ T−1} P(z))^l₀ = %v", c, PartitionDelta(c.Epsilon, l0, T), want)
		}
	}
}

func TestPartitionSelect(t *testing.T) {
	p, err := NewPartitionSelection(PartitionSelectionConfig{Epsilon: 2, Delta: 1e-5, MaxWordsPerDoc: 3})
	if err != nil {
		t.Fatal(err)
	}
	var docs [][]string
	for i := range 400 {
		docs = append(docs, []string{"common", "common", "frequent", fmt.Sprintf("rare%d", i), "x", "y", "z"})
	}
	docs = append(docs, []string{"unique"})
	got, ev := p.Select(rng.Derive(1, "select"), docs)
	again, _ := p.Select(rng.Derive(1, "select"), docs)
	if !slices.Equal(got, again) {
		t.Errorf("Select is not reproducible with the same stream")
	}
	if ev.Mechanism != MechanismPartitionSelection || ev.Delta != 1e-5 || ev.Epsilon != 2 {
		t.Errorf("Select event = %+v", ev)
	}
	words := map[string]int64{}
	for i, w := range got {
		words[w.Word] = w.Count
		if i > 0 && got[i-1].Word >= w.Word {
			t.Errorf("selection not sorted: %v", got)
		}
		if w.Count < p.Threshold() {
			t.Errorf("released %q with noisy count %d below the threshold %d", w.Word, w.Count, p.Threshold())
		}
		if len(w.Word) > 4 && w.Word[:4] == "rare" || w.Word == "unique" {
			t.Errorf("released %q, a word of a single document", w.Word)
		}
	}
	// Each document contributes 3 of its 6 distinct words, so each common
	// word has a document frequency near 400·3/6 = 200 ≫ T.
	for _, w := range []string{"common", "frequent"} {
		if _, ok := words[w]; !ok {
			t.Errorf("did not release %q (frequency ≈ 200, threshold %d)", w, p.Threshold())
		}
	}
	var total int64
	for _, c := range words {
		total += c
	}
	if total > 400*3+200 {
		t.Errorf("total noisy frequency %d; want about 400 documents × l₀ = 3", total)
	}
}
