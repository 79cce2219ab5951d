package pctd

import (
	"context"
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// sensitivityCorpus returns documents of varied lengths and repetition:
// short ones, long ones far beyond the clip, and ones repeating a word.
func sensitivityCorpus(v int, seed uint64) *corpus.Corpus {
	r := rng.Derive(seed, "sens")
	c := &corpus.Corpus{V: v, DocStart: []int{0}, UnitStart: []int{0}, DocUnit: []int{0}}
	for d := range 60 {
		n := 1 + r.IntN(12)
		switch {
		case d%10 == 0:
			n = 80 // far longer than the clip
		case d%10 == 5:
			n = 25
		}
		for i := range n {
			w := int32(r.IntN(v))
			if d%7 == 3 {
				w = int32(i % 2) // a document of two repeated words
			}
			c.Words = append(c.Words, w)
			if i%5 == 4 || i == n-1 { // sentences of 5 tokens
				c.UnitStart = append(c.UnitStart, len(c.Words))
			}
		}
		c.DocStart = append(c.DocStart, len(c.Words))
		c.DocUnit = append(c.DocUnit, len(c.UnitStart)-1)
	}
	return c
}

// TestSSPSensitivity is the empirical check of the SSP variant's bound
// (doc.go): removing one document from a party changes M_t by at most
// √L in Frobenius norm, for L = max_doc_tokens. For every document of a
// party — the longest, the ones repeating words, the short ones — it runs
// three EM iterations with and without the document against the same
// broadcast topics (as the coordinator would send them, derived from the
// full data: the bound holds for any broadcast) and measures ‖ΔM_t‖_F in
// each. The 80-token documents are the longest; all are clipped. It also checks the clip itself, Σ_w a_w² ≤ L, and that the bound
// is nearly reached by a document repeating one word.
func TestSSPSensitivity(t *testing.T) {
	const k, v, maxLen = 4, 40, 16
	c := sensitivityCorpus(v, 3)
	us := buildUnits(c, 3, maxLen)
	bound := math.Sqrt(maxLen)
	// The first broadcast makes words 0 and 1 topic 0's, so that a
	// document of those two words puts all its responsibility on one
	// topic and comes near the bound.
	peaked := InitialTopics(1, k, v)
	for w := range v {
		peaked[w] = 0.1 / float64(v-2)
	}
	peaked[0], peaked[1] = 0.45, 0.45
	phis := [][]float64{peaked, InitialTopics(2, k, v), InitialTopics(3, k, v)}
	// Config.ThetaPrior changes how θ_d is updated, not the bound.
	for _, alpha := range []float64{0, 0.5} {
		full := newEM(us, k, v)
		full.alpha = alpha
		var fullM [][]float64
		for _, phi := range phis {
			m, err := full.iterate(context.Background(), phi, noise{variant: VariantSSP}, 2)
			if err != nil {
				t.Fatal(err)
			}
			fullM = append(fullM, m)
		}
		worst := 0.0
		for d := range us.numDocs() {
			var sq float64
			for _, a := range us.docCounts(d) {
				sq += a * a
			}
			if sq > maxLen {
				t.Errorf("document %d: Σ a_w² = %v after the clip; want ≤ %d", d, sq, maxLen)
			}
			rest := newEM(us.without(d), k, v)
			rest.alpha = alpha
			for it, phi := range phis {
				m, err := rest.iterate(context.Background(), phi, noise{variant: VariantSSP}, 1)
				if err != nil {
					t.Fatal(err)
				}
				var diff float64
				for i := range m {
					x := fullM[it][i] - m[i]
					diff += x * x
				}
				diff = math.Sqrt(diff)
				worst = max(worst, diff)
				if diff > bound*(1+1e-9) || diff > math.Sqrt(sq)*(1+1e-9)+1e-9 {
					t.Errorf("θ prior %v, document %d, iteration %d: ‖ΔM_t‖_F = %v; want ≤ ‖a_d‖₂ = %v ≤ √L = %v", alpha, d, it+1, diff, math.Sqrt(sq), bound)
				}
			}
		}
		if worst < 0.85*bound {
			t.Errorf("θ prior %v: largest ‖ΔM_t‖_F over all documents = %v; the repeated-word documents should come near the bound √L = %v", alpha, worst, bound)
		}
	}
}

// TestClip checks the document clip on examples: a document of distinct
// words keeps L tokens, repeats count 2k−1 for the k-th occurrence, and
// windows cut the corpus units.
func TestClip(t *testing.T) {
	tests := []struct {
		name       string
		words      []int32
		window     int
		maxLen     int
		wantTokens int
		wantUnits  int
	}{
		{name: "distinct words", words: []int32{0, 1, 2, 3, 4, 5, 6, 7}, window: 3, maxLen: 5, wantTokens: 5, wantUnits: 2},
		{name: "one word repeated", words: []int32{1, 1, 1, 1, 1}, window: 3, maxLen: 9, wantTokens: 3, wantUnits: 1},
		{name: "mixed", words: []int32{1, 1, 2, 1, 3}, window: 2, maxLen: 6, wantTokens: 3, wantUnits: 2}, // 1 + 3 + 1, the third 1 would add 5
		{name: "no clip", words: []int32{1, 1, 1, 1, 1}, window: 0, maxLen: 0, wantTokens: 5, wantUnits: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &corpus.Corpus{V: 10, Words: tt.words, DocStart: []int{0, len(tt.words)}}
			us := buildUnits(c, tt.window, tt.maxLen)
			if us.tokens != tt.wantTokens || us.numUnits() != tt.wantUnits {
				t.Errorf("buildUnits(%v, window %d, L %d) = %d tokens in %d units; want %d in %d", tt.words, tt.window, tt.maxLen, us.tokens, us.numUnits(), tt.wantTokens, tt.wantUnits)
			}
		})
	}
}
