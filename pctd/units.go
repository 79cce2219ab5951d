package pctd

import (
	"slices"

	"github.com/fedtopic/fedtopic/corpus"
)

// units is a party's documents as semantic units in compact form: unit u
// holds the distinct words w[start[u]:start[u+1]] with their counts c,
// and document d holds the units docUnit[d] .. docUnit[d+1]-1. It is the
// count table N_u of Eq. 4, sparse: about 12 bytes per token.
type units struct {
	docUnit []int
	start   []int
	w       []int32
	c       []float64
	tokens  int
}

func (us *units) numDocs() int  { return len(us.docUnit) - 1 }
func (us *units) numUnits() int { return len(us.start) - 1 }

// buildUnits cuts c into semantic units: each document is clipped to its
// longest prefix with Σ_w a_w² ≤ maxTokens for its word counts a_w (0: no
// limit) — at most maxTokens tokens, all of them when they are distinct
// words —, then each of its corpus units (the
// whole document when the corpus has none) is cut into consecutive windows
// of window tokens (0: kept whole; negative: the whole document is one
// unit, whatever units the corpus has). Words that repeat within a unit
// are counted once with their count.
func buildUnits(c *corpus.Corpus, window, maxTokens int) *units {
	us := &units{docUnit: make([]int, 1, c.NumDocs()+1), start: []int{0}}
	var scratch []int32
	seen := map[int32]int{}
	add := func(toks []int32) {
		if len(toks) == 0 {
			return
		}
		scratch = append(scratch[:0], toks...)
		slices.Sort(scratch)
		for i := 0; i < len(scratch); {
			j := i
			for j < len(scratch) && scratch[j] == scratch[i] {
				j++
			}
			us.w = append(us.w, scratch[i])
			us.c = append(us.c, float64(j-i))
			i = j
		}
		us.start = append(us.start, len(us.w))
		us.tokens += len(toks)
	}
	for d := 0; d < c.NumDocs(); d++ {
		var spans [][]int32
		if c.HasUnits() && window >= 0 {
			first, end := c.DocUnits(d)
			for u := first; u < end; u++ {
				spans = append(spans, c.Unit(u))
			}
		} else {
			spans = [][]int32{c.Doc(d)}
		}
		// The clip: the longest prefix whose word counts a_w satisfy
		// Σ_w a_w² ≤ maxTokens (a word's k-th occurrence adds 2k − 1).
		// It keeps at most maxTokens tokens, and bounds ‖a_d‖₂ by
		// √maxTokens.
		left := maxTokens
		clear(seen)
		for _, s := range spans {
			if maxTokens > 0 {
				n := 0
				for n < len(s) {
					c := seen[s[n]]
					if 2*c+1 > left {
						break
					}
					left -= 2*c + 1
					seen[s[n]] = c + 1
					n++
				}
				if n < len(s) {
					left = 0
				}
				s = s[:n]
			}
			if window <= 0 {
				add(s)
				continue
			}
			for i := 0; i < len(s); i += window {
				add(s[i:min(len(s), i+window)])
			}
			if maxTokens > 0 && left == 0 {
				break
			}
		}
		us.docUnit = append(us.docUnit, us.numUnits())
	}
	return us
}

// docCounts returns the word-count vector a_d of document d as parallel
// slices of distinct words and counts, for the sensitivity bound.
func (us *units) docCounts(d int) map[int32]float64 {
	a := map[int32]float64{}
	for u := us.docUnit[d]; u < us.docUnit[d+1]; u++ {
		for i := us.start[u]; i < us.start[u+1]; i++ {
			a[us.w[i]] += us.c[i]
		}
	}
	return a
}

// without returns the units of every document but d, sharing nothing
// mutable with us.
func (us *units) without(d int) *units {
	out := &units{docUnit: []int{0}, start: []int{0}}
	for e := 0; e < us.numDocs(); e++ {
		if e == d {
			continue
		}
		for u := us.docUnit[e]; u < us.docUnit[e+1]; u++ {
			for i := us.start[u]; i < us.start[u+1]; i++ {
				out.w = append(out.w, us.w[i])
				out.c = append(out.c, us.c[i])
				out.tokens += int(us.c[i])
			}
			out.start = append(out.start, len(out.w))
		}
		out.docUnit = append(out.docUnit, out.numUnits())
	}
	return out
}
