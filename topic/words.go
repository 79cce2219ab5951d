package topic

import (
	"container/heap"
	"fmt"
	"sort"
)

// WordProb is one word of a topic with its probability p(w|k).
type WordProb struct {
	ID   int     `json:"id"`   // word id
	Word string  `json:"word"` // Vocab[ID]
	Prob float64 `json:"prob"` // p(w|k)
}

// TopWords returns the n most probable words of topic k, most probable
// first; words of equal probability come in increasing id order, so the
// result is deterministic. n is capped at V; n ≤ 0 gives nil. It panics if k
// is not a topic of m.
func (m *Model) TopWords(k, n int) []WordProb {
	ids := m.topIDs(k, n)
	if ids == nil {
		return nil
	}
	out := make([]WordProb, len(ids))
	row := m.Row(k)
	for i, w := range ids {
		out[i] = WordProb{ID: int(w), Word: m.Vocab[w], Prob: row[w]}
	}
	return out
}

// TopWordIDs returns the ids of the n most probable words of every topic,
// in the order of TopWords: row k lists topic k's words, most probable
// first.
func (m *Model) TopWordIDs(n int) [][]int32 {
	out := make([][]int32, m.K)
	for k := range m.K {
		out[k] = m.topIDs(k, n)
	}
	return out
}

// topIDs returns the n most probable words of topic k (see TopIDs).
func (m *Model) topIDs(k, n int) []int32 {
	if k < 0 || k >= m.K {
		panic(fmt.Sprintf("topic: topic %d out of range [0, %d)", k, m.K))
	}
	return TopIDs(m.Row(k), n)
}

// TopIDs returns the ids of the n largest entries of row (at most
// len(row)), most probable first, ties broken by the lower id. It keeps a
// bounded min-heap: O(len(row)·log n).
func TopIDs(row []float64, n int) []int32 {
	n = min(n, len(row))
	if n <= 0 {
		return nil
	}
	h := &wordHeap{row: row, ids: make([]int32, 0, n)}
	for w := range row {
		if len(h.ids) < n {
			heap.Push(h, int32(w))
		} else if better(row, int32(w), h.ids[0]) {
			h.ids[0] = int32(w)
			heap.Fix(h, 0)
		}
	}
	ids := h.ids
	sort.Slice(ids, func(i, j int) bool { return better(row, ids[i], ids[j]) })
	return ids
}

// better reports whether word a ranks before word b: higher probability,
// then lower id.
func better(row []float64, a, b int32) bool {
	if row[a] != row[b] {
		return row[a] > row[b]
	}
	return a < b
}

// wordHeap is a heap of word ids whose root is the worst-ranked word.
type wordHeap struct {
	row []float64
	ids []int32
}

func (h *wordHeap) Len() int           { return len(h.ids) }
func (h *wordHeap) Less(i, j int) bool { return better(h.row, h.ids[j], h.ids[i]) }
func (h *wordHeap) Swap(i, j int)      { h.ids[i], h.ids[j] = h.ids[j], h.ids[i] }
func (h *wordHeap) Push(x any)         { h.ids = append(h.ids, x.(int32)) }
func (h *wordHeap) Pop() any {
	x := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return x
}
