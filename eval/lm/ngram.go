package lm

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/corpus"
)

// DefaultOrder is the n-gram order Config's zero value means: a trigram
// model.
const DefaultOrder = 3

// maxSymbols bounds the vocabulary (plus <s>) so that a trigram packs into
// one uint64 key.
const maxSymbols = 1 << 21

// Config configures an n-gram model. The zero value means a trigram model
// with estimated discounts.
type Config struct {
	// Order is the n-gram order, 2 (bigram) or 3 (trigram); 0 means
	// DefaultOrder.
	Order int `json:"order"`
	// Discounts, if set, fixes the discounts instead of estimating them:
	// Discounts[n−1] holds D1, D2 and D3+ of the n-grams of length n, one
	// entry per order 1 … Order, each D_k in (0, k].
	Discounts [][3]float64 `json:"discounts,omitempty"`
}

// Validate reports every invalid field of c, joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	if c.Order != 0 && c.Order != 2 && c.Order != 3 {
		errs = append(errs, fmt.Errorf("lm: order = %d, want 2 or 3 (0 = %d)", c.Order, DefaultOrder))
	}
	order := c.order()
	if c.Discounts != nil {
		if len(c.Discounts) != order {
			errs = append(errs, fmt.Errorf("lm: %d discount triples, want one per order 1 … %d", len(c.Discounts), order))
		}
		for n, ds := range c.Discounts {
			for k, d := range ds {
				if !(d > 0 && d <= float64(k+1)) {
					errs = append(errs, fmt.Errorf("lm: discount D%d of order %d = %v, want in (0, %d]", k+1, n+1, d, k+1))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func (c Config) order() int {
	if c.Order == 0 {
		return DefaultOrder
	}
	return c.Order
}

// NGram is an interpolated modified Kneser–Ney n-gram model over the word
// ids 0 … V−1 (see the package documentation).
type NGram struct {
	order int
	v     int
	bos   int32 // the start-of-document symbol, V
	// levels[n−1] holds the n-grams of length n.
	levels []level
}

// level is one order of the model.
type level struct {
	disc [3]float64
	adj  map[uint64]float64     // n-gram → adjusted count a
	ctx  map[uint64]contextStat // context (n−1 words) → its totals
}

// contextStat is what a context's distribution needs besides the counts of
// its words: their sum and the mass the discounts removed.
type contextStat struct {
	total, removed float64
}

// key packs a sequence of at most three symbols below maxSymbols.
func key(syms []int32) uint64 {
	var k uint64
	for _, s := range syms {
		k = k*maxSymbols + uint64(s)
	}
	return k
}

// Train estimates an n-gram model of order cfg.Order from the documents of
// docs, over docs.V words.
func Train(ctx context.Context, docs *corpus.Corpus, cfg Config) (*NGram, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if docs.V < 1 || docs.V+1 > maxSymbols {
		return nil, fmt.Errorf("lm: train: vocabulary of %d words, want 1 … %d", docs.V, maxSymbols-1)
	}
	m := &NGram{order: cfg.order(), v: docs.V, bos: int32(docs.V), levels: make([]level, cfg.order())}
	// raw[n−1] counts the n-grams of length n ending at every token.
	raw := make([]map[uint64]float64, m.order)
	for n := range raw {
		raw[n] = map[uint64]float64{}
	}
	seq := make([]int32, 0, 64)
	for d := range docs.NumDocs() {
		if d%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("lm: train: %w", err)
			}
		}
		seq = append(seq[:0], m.bos)
		for i, w := range docs.Doc(d) {
			if w < 0 || int(w) >= docs.V {
				return nil, fmt.Errorf("lm: train: document %d, token %d: word id %d outside the vocabulary of %d", d, i, w, docs.V)
			}
			seq = append(seq, w)
		}
		for i := 1; i < len(seq); i++ {
			for n := 1; n <= m.order && i-n+1 >= 0; n++ {
				raw[n-1][key(seq[i-n+1:i+1])]++
			}
		}
	}
	// Adjusted counts: raw at the highest order and for n-grams starting
	// with <s>; otherwise the number of distinct words seen before.
	for n := m.order; n >= 1; n-- {
		adj := make(map[uint64]float64, len(raw[n-1]))
		if n == m.order {
			for k, c := range raw[n-1] {
				adj[k] = c
			}
		} else {
			for k, c := range raw[n-1] {
				if m.startsWithBOS(k, n) {
					adj[k] = c
				}
			}
			// Every observed (n+1)-gram type v·g adds one to g; the mod
			// drops its oldest symbol.
			shift := pow(maxSymbols, n)
			for k := range raw[n] {
				if g := k % shift; !m.startsWithBOS(g, n) {
					adj[g]++
				}
			}
		}
		m.levels[n-1].adj = adj
	}
	for n := 1; n <= m.order; n++ {
		lv := &m.levels[n-1]
		if cfg.Discounts != nil {
			lv.disc = cfg.Discounts[n-1]
		} else {
			lv.disc = estimateDiscounts(countsOfCounts(lv.adj))
		}
		// Adjusted counts are whole numbers, so the sums below are exact in
		// any order of the map; the discounts are applied afterwards, in a
		// fixed order. No D_k exceeds k, so each n-gram loses exactly
		// D(a) ≤ a.
		counts := map[uint64][4]float64{} // context → total, N1, N2, N3+
		for k, a := range lv.adj {
			c := k / maxSymbols // the context: all but the last symbol
			n := counts[c]
			n[0] += a
			n[min(int(a), 3)]++
			counts[c] = n
		}
		lv.ctx = make(map[uint64]contextStat, len(counts))
		for c, n := range counts {
			lv.ctx[c] = contextStat{total: n[0], removed: lv.disc[0]*n[1] + lv.disc[1]*n[2] + lv.disc[2]*n[3]}
		}
	}
	return m, nil
}

// startsWithBOS reports whether the n-gram of length n packed in k begins
// with <s>.
func (m *NGram) startsWithBOS(k uint64, n int) bool {
	return k/pow(maxSymbols, n-1) == uint64(m.bos)
}

func pow(b uint64, e int) uint64 {
	p := uint64(1)
	for range e {
		p *= b
	}
	return p
}

// countsOfCounts returns n1 … n4: how many n-grams have adjusted count 1,
// 2, 3 and 4.
func countsOfCounts(adj map[uint64]float64) [4]float64 {
	var n [4]float64
	for _, a := range adj {
		if a >= 1 && a <= 4 && a == math.Trunc(a) {
			n[int(a)-1]++
		}
	}
	return n
}

// estimateDiscounts returns D1, D2 and D3+ from the counts of counts
// n1 … n4 (Chen and Goodman 1998, Eq. 26), with the fallback of the
// package documentation where the estimate is undefined or out of range.
func estimateDiscounts(n [4]float64) [3]float64 {
	y := math.NaN()
	if n[0] > 0 {
		y = n[0] / (n[0] + 2*n[1])
	}
	if !(y > 0 && y < 1) {
		y = 0.5
	}
	var d [3]float64
	prev := y
	for k := 1; k <= 3; k++ {
		dk := math.NaN()
		if n[k-1] > 0 {
			dk = float64(k) - float64(k+1)*y*n[k]/n[k-1]
		}
		// D_k = k would discount the n-grams seen k times away entirely.
		if !(dk > 0 && dk < float64(k)) {
			dk = prev
		}
		d[k-1], prev = dk, dk
	}
	return d
}

// discount returns the discount of an adjusted count a.
func (l *level) discount(a float64) float64 {
	switch {
	case a <= 0:
		return 0
	case a < 2:
		return l.disc[0]
	case a < 3:
		return l.disc[1]
	}
	return l.disc[2]
}

// Order returns the n-gram order.
func (m *NGram) Order() int { return m.order }

// V returns the number of words the model predicts.
func (m *NGram) V() int { return m.v }

// Discounts returns D1, D2 and D3+ of every order, lowest first.
func (m *NGram) Discounts() [][3]float64 {
	out := make([][3]float64, m.order)
	for n := range m.levels {
		out[n] = m.levels[n].disc
	}
	return out
}

// Prob returns P(w|history): history is the document's words before w,
// oldest first (all of them, or at least the last Order−1); a history
// shorter than Order−1 words is the start of the document. It panics if w
// or a history word is outside the vocabulary.
func (m *NGram) Prob(history []int32, w int32) float64 {
	var buf [3]int32
	ctx := m.context(history, buf[:0])
	return m.prob(ctx, w)
}

// context returns the last Order−1 symbols of <s>·history in buf.
func (m *NGram) context(history []int32, buf []int32) []int32 {
	n := m.order - 1
	if len(history) < n {
		buf = append(buf, m.bos)
		n = len(history)
	}
	for _, h := range history[len(history)-n:] {
		if h < 0 || int(h) >= m.v {
			panic(fmt.Sprintf("lm: history word %d outside the vocabulary of %d", h, m.v))
		}
		buf = append(buf, h)
	}
	return buf
}

// prob interpolates from the uniform distribution up through every order
// whose context (the last n−1 symbols of ctx) was seen.
func (m *NGram) prob(ctx []int32, w int32) float64 {
	if w < 0 || int(w) >= m.v {
		panic(fmt.Sprintf("lm: word %d outside the vocabulary of %d", w, m.v))
	}
	p := 1 / float64(m.v)
	for n := 1; n <= len(ctx)+1; n++ {
		lv := &m.levels[n-1]
		h := ctx[len(ctx)-(n-1):]
		st, ok := lv.ctx[key(h)]
		if !ok {
			continue
		}
		a := lv.adj[key(h)*maxSymbols+uint64(w)]
		p = (math.Max(a-lv.discount(a), 0) + st.removed*p) / st.total
	}
	return p
}
