package lm

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
)

// Word ids of the tiny corpus: d is in the vocabulary but never seen.
const (
	wa, wb, wc, wd int32 = 0, 1, 2, 3
)

// tinyCorpus returns the documents "a b", "a b c" and "b a" over the
// vocabulary a, b, c, d.
func tinyCorpus() *corpus.Corpus {
	return fromDocs(4, [][]int32{{wa, wb}, {wa, wb, wc}, {wb, wa}})
}

func fromDocs(v int, docs [][]int32) *corpus.Corpus {
	c := &corpus.Corpus{V: v, DocStart: []int{0}}
	for _, d := range docs {
		c.Words = append(c.Words, d...)
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	return c
}

// fixedDiscounts are the discounts of the hand computations.
var fixedDiscounts = [3]float64{0.5, 0.75, 0.9}

// TestProbHandComputed checks P(w|h) against modified Kneser–Ney worked by
// hand on the tiny corpus, with D1 = 0.5, D2 = 0.75, D3+ = 0.9 at every
// order.
//
// Continuation counts of the unigrams: a follows <s> and b (2), b follows
// a and <s> (2), c follows b (1), d never occurs (0): total 5, removed
// 0.75 + 0.75 + 0.5 = 2, so P1 = (a − D + 2·¼)/5: a 0.35, b 0.35, c 0.2,
// d 0.1.
//
// Bigram model (raw bigram counts): context a holds b×2 (total 2, removed
// 0.75), so P(b|a) = (1.25 + 0.75·0.35)/2 = 0.75625 and P(d|a) =
// 0.75·0.1/2; context <s> holds a×2, b×1 (total 3, removed 1.25), so
// P(a|<s>) = (1.25 + 1.25·0.35)/3 = 0.5625; context b holds c×1, a×1
// (total 2, removed 1), so P(a|b) = (0.5 + 0.35)/2; context c was never
// seen, so P(·|c) = P1.
//
// Trigram model: bigrams after <s> keep raw counts (<s> a ×2, <s> b ×1);
// the others count distinct predecessors: a b (after <s>) 1, b c (after
// a) 1, b a (after <s>) 1. Context a of the bigram order holds b×1 (total
// 1, removed 0.5): P2(b|a) = 0.5 + 0.5·0.35 = 0.675, P2(c|a) = 0.5·0.2.
// Trigram context <s> a holds b×2 (total 2, removed 0.75): P(b|<s> a) =
// (1.25 + 0.75·0.675)/2 = 0.878125, P(c|<s> a) = 0.75·0.1/2. Context b a
// was never seen at the trigram order: P(b|b a) = P2(b|a).
func TestProbHandComputed(t *testing.T) {
	tests := []struct {
		name    string
		order   int
		history []int32
		w       int32
		want    float64
	}{
		{name: "bigram seen", order: 2, history: []int32{wa}, w: wb, want: 0.75625},
		{name: "bigram unseen word after seen context", order: 2, history: []int32{wa}, w: wa, want: 0.75 * 0.35 / 2},
		{name: "bigram word never in training", order: 2, history: []int32{wa}, w: wd, want: 0.75 * 0.1 / 2},
		{name: "bigram document start", order: 2, history: nil, w: wa, want: 0.5625},
		{name: "bigram start, unseen word", order: 2, history: nil, w: wc, want: 1.25 * 0.2 / 3},
		{name: "bigram count one", order: 2, history: []int32{wc, wb}, w: wa, want: 0.425},
		{name: "bigram unseen context", order: 2, history: []int32{wa, wc}, w: wb, want: 0.35},
		{name: "bigram unseen context, unseen word", order: 2, history: []int32{wc}, w: wd, want: 0.1},
		{name: "trigram after <s> a", order: 3, history: []int32{wa}, w: wb, want: 0.878125},
		{name: "trigram after <s> a, word c", order: 3, history: []int32{wa}, w: wc, want: 0.75 * 0.1 / 2},
		{name: "trigram backs off to bigram", order: 3, history: []int32{wb, wa}, w: wb, want: 0.675},
		{name: "trigram, bigram context unseen too", order: 3, history: []int32{wb, wc}, w: wa, want: 0.35},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{Order: tt.order}
			for range tt.order {
				cfg.Discounts = append(cfg.Discounts, fixedDiscounts)
			}
			m, err := Train(context.Background(), tinyCorpus(), cfg)
			if err != nil {
				t.Fatalf("Train: %v", err)
			}
			if got := m.Prob(tt.history, tt.w); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Prob(%v, %d) = %.15g; want %.15g", tt.history, tt.w, got, tt.want)
			}
		})
	}
}

// TestEstimateDiscounts checks Chen and Goodman's Eq. 26 and the fallback
// for counts of counts too sparse for it.
func TestEstimateDiscounts(t *testing.T) {
	tests := []struct {
		name string
		n    [4]float64
		want [3]float64
	}{
		// Y = 10/(10+8) = 5/9; D1 = 1 − 2·(5/9)·4/10 = 5/9; D2 = 2 −
		// 3·(5/9)·2/4 = 7/6; D3+ = 3 − 4·(5/9)·1/2 = 17/9.
		{name: "eq 26", n: [4]float64{10, 4, 2, 1}, want: [3]float64{5.0 / 9, 7.0 / 6, 17.0 / 9}},
		// Y = ½; D1 = 1 − 2·½·2/4 = ½; D2 = 2 − 3·½·1/2 = 5/4; D3+ = 3 − 4·½·1 = 1.
		{name: "eq 26 again", n: [4]float64{4, 2, 1, 1}, want: [3]float64{0.5, 1.25, 1}},
		// n3 = 0: D2 = 2 would remove all of a twice-seen n-gram's mass and
		// falls back to D1; D3+ is undefined and falls back to D2.
		{name: "no count three", n: [4]float64{10, 4, 0, 1}, want: [3]float64{5.0 / 9, 5.0 / 9, 5.0 / 9}},
		// Only singletons: Y = 1 is out of range, so ½, and D1 = 1 too.
		{name: "only singletons", n: [4]float64{5, 0, 0, 0}, want: [3]float64{0.5, 0.5, 0.5}},
		// Nothing at all: Y = ½ carries through.
		{name: "empty", n: [4]float64{}, want: [3]float64{0.5, 0.5, 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := estimateDiscounts(tt.n)
			for k := range got {
				if math.Abs(got[k]-tt.want[k]) > 1e-12 {
					t.Errorf("estimateDiscounts(%v) = %v; want %v", tt.n, got, tt.want)
					break
				}
			}
		})
	}
}

// randomCorpus draws documents of 1 … 12 words from a skewed distribution
// over v words, some of which never occur.
func randomCorpus(seed uint64, v, docs int) *corpus.Corpus {
	r := rand.New(rand.NewPCG(seed, 1))
	var ds [][]int32
	for range docs {
		d := make([]int32, 1+r.IntN(12))
		for i := range d {
			// Squaring skews towards low ids; the top 20% never occur.
			u := r.Float64()
			d[i] = int32(u * u * float64(v) * 0.8)
		}
		ds = append(ds, d)
	}
	return fromDocs(v, ds)
}

// TestProbSumsToOne checks that P(·|h) sums to 1 over the vocabulary for
// every history of a small corpus (every prefix of every document), and
// for histories never seen, at both orders, with estimated discounts.
func TestProbSumsToOne(t *testing.T) {
	c := randomCorpus(3, 30, 200)
	for _, order := range []int{2, 3} {
		m, err := Train(context.Background(), c, Config{Order: order})
		if err != nil {
			t.Fatalf("Train(order %d): %v", order, err)
		}
		check := func(h []int32) {
			var s float64
			for w := range m.V() {
				p := m.Prob(h, int32(w))
				if !(p > 0) {
					t.Errorf("order %d: Prob(%v, %d) = %v; want > 0", order, h, w, p)
				}
				s += p
			}
			if math.Abs(s-1) > 1e-12 {
				t.Errorf("order %d: Σ_w Prob(%v, w) = %.15g; want 1", order, h, s)
			}
		}
		for d := range c.NumDocs() {
			doc := c.Doc(d)
			for i := 0; i <= len(doc); i++ {
				check(doc[:i])
			}
		}
		// Never seen: words that do not occur, in every position.
		check([]int32{29})
		check([]int32{29, 28})
		check([]int32{0, 29})
		check([]int32{29, 0})
		for n, d := range m.Discounts() {
			for k, dk := range d {
				if !(dk > 0 && dk < float64(k+1)) {
					t.Errorf("order %d: D%d of order %d = %v; want in (0, %d)", order, k+1, n+1, dk, k+1)
				}
			}
		}
	}
}

// TestTrainErrors checks that bad configurations and word ids are refused.
func TestTrainErrors(t *testing.T) {
	tests := []struct {
		name string
		c    *corpus.Corpus
		cfg  Config
	}{
		{name: "order 4", c: tinyCorpus(), cfg: Config{Order: 4}},
		{name: "order 1", c: tinyCorpus(), cfg: Config{Order: 1}},
		{name: "discounts for the wrong order", c: tinyCorpus(), cfg: Config{Order: 2, Discounts: [][3]float64{fixedDiscounts}}},
		{name: "discount above k", c: tinyCorpus(), cfg: Config{Order: 2, Discounts: [][3]float64{{1.5, 1, 1}, fixedDiscounts}}},
		{name: "zero discount", c: tinyCorpus(), cfg: Config{Order: 2, Discounts: [][3]float64{{0, 1, 1}, fixedDiscounts}}},
		{name: "word outside the vocabulary", c: fromDocs(2, [][]int32{{0, 2}}), cfg: Config{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, err := Train(context.Background(), tt.c, tt.cfg); err == nil {
				t.Errorf("Train(%+v) = %v, nil; want an error", tt.cfg, m)
			}
		})
	}
}
