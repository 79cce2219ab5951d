package pctd

import (
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/eval"
)

// TestRelation builds R from four vectors — a and b close, c orthogonal to
// both, d without a vector — and checks its entries and Eq. 13: a topic
// holding a gains mass on its related word b, and the result is a
// distribution.
func TestRelation(t *testing.T) {
	vecs := "a 1 0 0\nb 0.9 0.1 0\nc 0 0 1\n"
	vocab := []string{"a", "b", "c", "d"}
	e, err := eval.ReadEmbeddings(strings.NewReader(vecs), vocab)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRelation(e, len(vocab), 5, 0.5, 2)
	want := map[[2]int]bool{{0, 0}: true, {0, 1}: true, {1, 0}: true, {1, 1}: true, {2, 2}: true, {3, 3}: true}
	for a := range vocab {
		cols, vals := r.Neighbours(a)
		for i, b := range cols {
			if !want[[2]int{a, int(b)}] {
				t.Errorf("R(%s, %s) = %v is stored; want it absent (cosine below the cutoff)", vocab[a], vocab[b], vals[i])
			}
			if a == int(b) && vals[i] != 1 {
				t.Errorf("R(%s, %s) = %v; want 1 on the diagonal", vocab[a], vocab[b], vals[i])
			}
		}
	}
	if r.Entries() != len(want) {
		t.Errorf("R has %d entries; want %d", r.Entries(), len(want))
	}
	p := []float64{0.6, 0.1, 0.2, 0.1}
	r.apply(p, 0.3)
	var s float64
	for _, x := range p {
		s += x
	}
	if math.Abs(s-1) > 1e-12 {
		t.Errorf("after Eq. 13 the topic sums to %v; want 1", s)
	}
	// By hand: Rp = (0.6+0.9939·0.1, 0.9939·0.6+0.1, 0.2, 0.1), pᵀRp and
	// the normalized p + 0.3·p∘Rp/pᵀRp.
	cos := 0.9 / math.Sqrt(0.82)
	rp := []float64{0.6 + cos*0.1, cos*0.6 + 0.1, 0.2, 0.1}
	q := []float64{0.6, 0.1, 0.2, 0.1}
	var den, tot float64
	for i := range q {
		den += q[i] * rp[i]
	}
	want2 := make([]float64, 4)
	for i := range q {
		want2[i] = q[i] + 0.3*q[i]*rp[i]/den
		tot += want2[i]
	}
	for i := range p {
		if math.Abs(p[i]-want2[i]/tot) > 1e-6 {
			t.Errorf("p'(%s) = %v; want %v", vocab[i], p[i], want2[i]/tot)
		}
	}
	if p[1] <= 0.1*(1+0.3*0.1/den)/(1+0.3) {
		t.Errorf("p'(b) = %v: b gained nothing from its relation to a", p[1])
	}
}
