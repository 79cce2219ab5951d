package topic

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTopWords(t *testing.T) {
	m := &Model{
		K: 2, V: 5,
		Phi:   []float64{0.1, 0.3, 0.1, 0.3, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2},
		Vocab: []string{"a", "b", "c", "d", "e"},
	}
	tests := []struct {
		name string
		k, n int
		want []WordProb
	}{
		{name: "ties by id", k: 0, n: 3, want: []WordProb{{1, "b", 0.3}, {3, "d", 0.3}, {4, "e", 0.2}}},
		{name: "all tied", k: 1, n: 2, want: []WordProb{{0, "a", 0.2}, {1, "b", 0.2}}},
		{name: "n above V", k: 0, n: 9, want: []WordProb{{1, "b", 0.3}, {3, "d", 0.3}, {4, "e", 0.2}, {0, "a", 0.1}, {2, "c", 0.1}}},
		{name: "n zero", k: 0, n: 0, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := m.TopWords(tt.k, tt.n)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("TopWords(%d, %d) (-want +got):\n%s", tt.k, tt.n, diff)
			}
		})
	}
	if diff := cmp.Diff([][]int32{{1, 3}, {0, 1}}, m.TopWordIDs(2)); diff != "" {
		t.Errorf("TopWordIDs(2) (-want +got):\n%s", diff)
	}
}

func TestTopWordsMatchesFullSort(t *testing.T) {
	m := randomModel(t, 9, 4, 500, 0.2)
	for k := range m.K {
		all := m.TopWords(k, m.V)
		for i := 1; i < len(all); i++ {
			a, b := all[i-1], all[i]
			if a.Prob < b.Prob || (a.Prob == b.Prob && a.ID > b.ID) {
				t.Fatalf("TopWords(%d, V) out of order at %d: %v before %v", k, i, a, b)
			}
		}
		top := m.TopWords(k, 17)
		if diff := cmp.Diff(all[:17], top); diff != "" {
			t.Errorf("TopWords(%d, 17) differs from the first 17 of a full ranking (-want +got):\n%s", k, diff)
		}
	}
}

func TestTopWordsPanicsOnBadTopic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("TopWords(2, 1) on a 2-topic model did not panic")
		}
	}()
	tinyModel().TopWords(2, 1)
}
