package privacy

import (
	"fmt"
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

func TestKRRFrequencies(t *testing.T) {
	for _, c := range []struct {
		eps float64
		k   int
	}{{1, 2}, {0.5, 10}, {4, 1000}} {
		m, err := NewKRR(c.eps, c.k, "")
		if err != nil {
			t.Fatal(err)
		}
		p := math.Exp(c.eps) / (math.Exp(c.eps) + float64(c.k-1))
		if math.Abs(m.KeepProb()-p) > 1e-15 {
			t.Errorf("KRR(%v, %d).KeepProb() = %v; want %v", c.eps, c.k, m.KeepProb(), p)
		}
		r := rng.Derive(6, "krr", c.k)
		const n = 200000
		keep, other := 0, 0
		for range n {
			switch m.Perturb(r, 1) {
			case 1:
				keep++
			case 0:
				other++
			}
		}
		name := fmt.Sprintf("kRR(ε=%v, k=%d)", c.eps, c.k)
		checkProportion(t, name+" keeps", keep, n, p)
		checkProportion(t, name+" reports category 0", other, n, (1-p)/float64(c.k-1))
	}
}

func TestTruncatedKRR(t *testing.T) {
	m, err := NewTruncatedKRR(1, 20, []int{3, 7, 11, 19}, "")
	if err != nil {
		t.Fatal(err)
	}
	if e := m.Event(1); e.Mechanism != MechanismTruncatedKRR || e.Categories != 4 {
		t.Errorf("Event = %+v; want truncated-krr over 4 categories", e)
	}
	r := rng.Derive(7, "tkrr")
	const n = 100000
	in, out := map[int]int{}, map[int]int{}
	for range n {
		in[m.Perturb(r, 7)]++
		out[m.Perturb(r, 5)]++
	}
	p := math.E / (math.E + 3)
	checkProportion(t, "t-kRR keeps a word of S", in[7], n, p)
	checkProportion(t, "t-kRR moves a word of S to 3", in[3], n, (1-p)/3)
	for _, w := range []int{3, 7, 11, 19} {
		checkProportion(t, fmt.Sprintf("t-kRR maps a word outside S to %d", w), out[w], n, 0.25)
	}
	if len(in) != 4 || len(out) != 4 {
		t.Errorf("t-kRR reported words outside S: %v, %v", in, out)
	}
}

func TestRRPEtaTheorem1(t *testing.T) {
	// η = 1/(δ δ₀ e^ε + 1), δ₀ = δ − (δ^(−1/γ) + 1)^(−γ); with γ = 1,
	// δ₀ = δ − δ/(1+δ) = δ²/(1+δ).
	for _, c := range []struct{ eps, delta float64 }{{1, 0.1}, {5, 0.05}, {10, 0.2}} {
		d0 := c.delta * c.delta / (1 + c.delta)
		want := 1 / (c.delta*d0*math.Exp(c.eps) + 1)
		if got := RRPEta(c.eps, c.delta, 1); math.Abs(got-want) > 1e-14 {
			t.Errorf("RRPEta(%v, %v, 1) = %v; want %v", c.eps, c.delta, got, want)
		}
	}
	m, err := NewRRP(RRPConfig{Epsilon: 2, Delta: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	e := m.Event(70)
	if e.Delta != 0.2 || e.Count != 70 || e.Assumption != RRPAssumption || e.Unit != "user" {
		t.Errorf("RRP.Event(70) = %+v; want δ = 2·0.1, count 70, the Zipf assumption, unit user", e)
	}
}

func TestHeadsAndRRPPerturb(t *testing.T) {
	phi := [][]float64{
		{0.6, 0.2, 0.1, 0.05, 0.02, 0.02, 0.01},
		{0.8, 0.1, 0.04, 0.03, 0.01, 0.01, 0.01},
	}
	h, err := NewHeads(phi, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	// Topic 0: the tail {0.01, 0.02, 0.02, 0.05} has mass 0.10 ≤ δ; adding
	// 0.1 would exceed it. Topic 1: {0.01×3, 0.03, 0.04} = 0.10.
	wantHeads := [][]bool{
		{true, true, true, false, false, false, false},
		{true, true, false, false, false, false, false},
	}
	for k := range phi {
		for w := range phi[k] {
			if got := h.InHead(k, w); got != wantHeads[k][w] {
				t.Errorf("InHead(%d, %d) = %v; want %v", k, w, got, wantHeads[k][w])
			}
		}
	}
	// Alias sampling follows φ.
	r := rng.Derive(8, "heads")
	const n = 200000
	cnt := make([]int, 7)
	for range n {
		w, head := h.Sample(r, 0)
		cnt[w]++
		if head != wantHeads[0][w] {
			t.Fatalf("Sample reported head = %v for word %d", head, w)
		}
	}
	for w, p := range phi[0] {
		checkProportion(t, fmt.Sprintf("φ₀ sample word %d", w), cnt[w], n, p)
	}
	// RRP: with θ on topic 1 only, the report is the true word with
	// probability 1 − η + η·P(w' ∉ head) and word 0 with η·0.8.
	m, err := NewRRP(RRPConfig{Epsilon: 1, Delta: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	eta := m.Eta()
	same, zero := 0, 0
	for range n {
		switch m.Perturb(r, 4, []float64{0, 3}, h) {
		case 4:
			same++
		case 0:
			zero++
		}
	}
	checkProportion(t, "RRP keeps word 4", same, n, 1-eta+eta*0.1)
	checkProportion(t, "RRP reports word 0", zero, n, eta*0.8)
	if _, err := NewHeads([][]float64{{1, math.NaN()}}, 0.1); err == nil {
		t.Errorf("NewHeads with NaN: got nil error")
	}
	if _, err := NewHeads([][]float64{{0, 0}}, 0.1); err == nil {
		t.Errorf("NewHeads with an all-zero topic: got nil error")
	}
}
