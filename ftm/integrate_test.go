package ftm

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestTopL(t *testing.T) {
	tests := []struct {
		name      string
		row       []float64
		l         int
		wantWords []int32
		wantProbs []float64
	}{
		{name: "top two", row: []float64{0.1, 0.5, 0.15, 0.25}, l: 2, wantWords: []int32{1, 3}, wantProbs: []float64{0.5, 0.25}},
		{name: "ties keep the lower word", row: []float64{0.2, 0.2, 0.2, 0.4}, l: 2, wantWords: []int32{0, 3}, wantProbs: []float64{0.2, 0.4}},
		{name: "l beyond the row", row: []float64{0.7, 0.3}, l: 5, wantWords: []int32{0, 1}, wantProbs: []float64{0.7, 0.3}},
		{name: "l zero", row: []float64{0.7, 0.3}, l: 0, wantWords: []int32{}, wantProbs: []float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TopL(tt.row, tt.l)
			if !slices.Equal(got.Words, tt.wantWords) || !slices.Equal(got.Probs, tt.wantProbs) {
				t.Errorf("TopL(%v, %d) = %v, %v; want %v, %v", tt.row, tt.l, got.Words, got.Probs, tt.wantWords, tt.wantProbs)
			}
		})
	}
}

func TestSimilarity(t *testing.T) {
	a := []float64{0.5, 0.3, 0.2, 0, 0, 0}
	c := []float64{0.45, 0.35, 0.2, 0, 0, 0}
	b := []float64{0, 0, 0, 0.4, 0.4, 0.2}
	d := []float64{0, 0, 0.1, 0.1, 0.1, 0.7}
	tests := []struct {
		name string
		x, y []float64
		l    int
		want float64
	}{
		{name: "identical", x: a, y: a, l: 3, want: 1},
		{name: "disjoint", x: a, y: b, l: 3, want: 0},
		// Σ min = .45+.3+.2, Σ max = .5+.35+.2 over the shared top three.
		{name: "close", x: a, y: c, l: 3, want: 0.95 / 1.05},
		// Top three of d: 5 (.7), then 2 and 3 (.1, lower ids of a tie);
		// of b: 3, 4, 5. Union {2,3,4,5}: Σ min = .1 (w3) + .2 (w5),
		// Σ max = .1 + .4 + .4 + .7.
		{name: "truncation decides", x: b, y: d, l: 3, want: 0.3 / 1.6},
		// Top one: word 0 in both: min .45, max .5.
		{name: "top one", x: a, y: c, l: 1, want: 0.45 / 0.5},
		{name: "empty truncations", x: a, y: c, l: 0, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Similarity(TopL(tt.x, tt.l), TopL(tt.y, tt.l))
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Similarity(top %d of %v, %v) = %v; want %v", tt.l, tt.x, tt.y, got, tt.want)
			}
			if back := Similarity(TopL(tt.y, tt.l), TopL(tt.x, tt.l)); back != got {
				t.Errorf("Similarity is not symmetric: %v one way, %v the other", got, back)
			}
		})
	}
}

// Hand-made local models over six words for the integration tests. With
// L = 3 (all on the same top words {0, 1, 2}): ρ(a1, a2) = (.45+.3+.2)/
// (.5+.35+.2) ≈ .905, ρ(a2, a3) = (.4+.35+.2)/(.45+.4+.2) ≈ .905,
// ρ(a1, a3) = (.4+.3+.2)/(.5+.4+.2) ≈ .818; b1 and b2 share words 3 and 5
// of their top three: ρ = .3/1.6 = .1875. a4's top three are {0, 1, 5}:
// ρ(a4, a2) = (.3+.1)/(.45+.35+.2+.3) ≈ .308, ρ(a4, b1) = .2/1.5,
// ρ(a4, b2) = .3/1.3; ρ(a1, b2) = ρ(a3, b2) = .1/1.8; the a's and b1 are
// disjoint.
var (
	a1 = []float64{0.5, 0.3, 0.2, 0, 0, 0}
	a2 = []float64{0.45, 0.35, 0.2, 0, 0, 0}
	a3 = []float64{0.4, 0.4, 0.2, 0, 0, 0}
	a4 = []float64{0.3, 0.1, 0.1, 0.1, 0.1, 0.3}
	b1 = []float64{0, 0, 0, 0.4, 0.4, 0.2}
	b2 = []float64{0, 0, 0.1, 0.1, 0.1, 0.7}
)

func TestIntegrate(t *testing.T) {
	tests := []struct {
		name        string
		topics      []Topic
		xi          float64
		wantMembers [][]int
		wantRows    [][]float64
		wantWeights []float64
	}{
		{
			name:        "one merge weighted by documents",
			topics:      []Topic{{a1, 10}, {b1, 10}, {a2, 30}, {b2, 30}},
			xi:          0.8,
			wantMembers: [][]int{{0, 2}, {1}, {3}},
			wantRows: [][]float64{
				{(10*0.5 + 30*0.45) / 40, (10*0.3 + 30*0.35) / 40, 0.2, 0, 0, 0}, b1, b2,
			},
			wantWeights: []float64{40, 10, 30},
		},
		{
			name:        "a chain of redundant pairs is one component",
			topics:      []Topic{{a1, 1}, {a3, 2}, {b1, 3}, {a2, 1}},
			xi:          0.85, // a1–a2 and a2–a3 pass, a1–a3 does not
			wantMembers: [][]int{{0, 1, 3}, {2}},
			wantRows: [][]float64{
				{(0.5 + 2*0.4 + 0.45) / 4, (0.3 + 2*0.4 + 0.35) / 4, (0.2 + 2*0.2 + 0.2) / 4, 0, 0, 0}, b1,
			},
			wantWeights: []float64{4, 3},
		},
		{
			name:        "nothing redundant",
			topics:      []Topic{{a1, 1}, {b1, 1}},
			xi:          0.5,
			wantMembers: [][]int{{0}, {1}},
			wantRows:    [][]float64{a1, b1},
			wantWeights: []float64{1, 1},
		},
		{
			name:        "weights of zero average equally",
			topics:      []Topic{{a1, 0}, {a2, 0}},
			xi:          0.5,
			wantMembers: [][]int{{0, 1}},
			wantRows:    [][]float64{{0.475, 0.325, 0.2, 0, 0, 0}},
			wantWeights: []float64{0},
		},
	}
	approx := cmpopts.EquateApprox(0, 1e-12)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			global, members := Integrate(tt.topics, 3, tt.xi)
			if d := cmp.Diff(tt.wantMembers, members); d != "" {
				t.Errorf("Integrate members (-want +got):\n%s", d)
			}
			var rows [][]float64
			var weights []float64
			for _, g := range global {
				rows = append(rows, g.Row)
				weights = append(weights, g.Weight)
			}
			if d := cmp.Diff(tt.wantRows, rows, approx); d != "" {
				t.Errorf("Integrate rows (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantWeights, weights); d != "" {
				t.Errorf("Integrate weights (-want +got):\n%s", d)
			}
		})
	}
}

func TestCompose(t *testing.T) {
	g := []Topic{{a2, 40}, {b1, 10}, {b2, 30}}
	tests := []struct {
		name     string
		local    [][]float64
		xi       float64
		wantFrom []int
	}{
		{name: "each local topic takes its match", local: [][]float64{b2, a1, b1}, xi: 0.8, wantFrom: []int{2, 0, 1}},
		// Both a1 and a3 are closest to global 0; a1 comes first and takes
		// it, a3 finds nothing left above ξ and keeps itself.
		{name: "no global topic is used twice", local: [][]float64{a1, a3}, xi: 0.6, wantFrom: []int{0, -1}},
		// a4's best match is global 0 with ρ ≈ .31 < ξ: global 0 is removed
		// anyway, so a1, which would match it at .905, cannot take it.
		{name: "the best match is removed even when rejected", local: [][]float64{a4, a1}, xi: 0.8, wantFrom: []int{-1, -1}},
		{name: "more local topics than global ones", local: [][]float64{a1, b1, b2, a3}, xi: 0.5, wantFrom: []int{0, 1, 2, -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, from := Compose(tt.local, g, 3, tt.xi)
			if !slices.Equal(from, tt.wantFrom) {
				t.Fatalf("Compose from = %v; want %v", from, tt.wantFrom)
			}
			for k, f := range from {
				want := tt.local[k]
				if f >= 0 {
					want = g[f].Row
				}
				if !slices.Equal(rows[k], want) {
					t.Errorf("Compose row %d = %v; want %v", k, rows[k], want)
				}
			}
		})
	}
}
