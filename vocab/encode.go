package vocab

import (
	"github.com/fedtopic/fedtopic/corpus"
)

// EncodeStats counts what encoding dropped. Nothing is dropped silently.
type EncodeStats struct {
	Documents    int      `json:"documents"`             // documents kept
	Tokens       int      `json:"tokens"`                // tokens kept
	Units        int      `json:"units"`                 // units kept
	OOVTokens    int      `json:"oov_tokens"`            // tokens not in the vocabulary, dropped
	DroppedUnits int      `json:"dropped_units"`         // units left with no token, dropped
	SkippedDocs  int      `json:"skipped_docs"`          // documents left with no token, skipped
	SkippedIDs   []string `json:"skipped_ids,omitempty"` // IDs of the skipped documents, in input order
}

// EncodeWords maps tokens to word ids, dropping tokens not in v, and returns
// the ids and the number dropped.
func (v *Vocabulary) EncodeWords(tokens []string) (ids []int32, oov int) {
	ids = make([]int32, 0, len(tokens))
	for _, w := range tokens {
		if id, ok := v.ids[w]; ok {
			ids = append(ids, id)
		} else {
			oov++
		}
	}
	return ids, oov
}

// Encode maps tokenized documents to a compact corpus over v (V = v.Len()).
// Tokens outside v are dropped, units left empty are dropped, and documents
// left with no token are skipped; all three are counted. Unit boundaries,
// IDs, labels and input files are kept (Labels is nil when no document has a
// label; Sources is nil when no document names its file).
func (v *Vocabulary) Encode(docs []corpus.TokenizedDoc) (*corpus.Corpus, EncodeStats) {
	var a assembler
	n := 0
	for _, d := range docs {
		n += d.NumTokens()
	}
	a.init(v.Len(), n, nil)
	for _, d := range docs {
		for _, u := range d.Units {
			for _, w := range u {
				id, ok := v.ids[w]
				if !ok {
					id = -1
				}
				a.token(id)
			}
			a.endUnit()
		}
		a.endDoc(d.ID, d.Label, d.Source)
	}
	return a.finish()
}

// assembler builds a corpus.Corpus one token, unit and document at a time.
// A token id of -1 is out of vocabulary: counted and dropped.
type assembler struct {
	c        *corpus.Corpus
	st       EncodeStats
	unitOpen int // first token of the current unit
	docUnits int // units kept in the current document
	hasLabel bool
	sources  map[string]int32
}

// init starts an empty corpus over V words; tokens is a capacity hint, and
// sources (may be nil) are the input files known in advance, in order.
func (a *assembler) init(V, tokens int, sources []string) {
	a.c = &corpus.Corpus{
		Words:     make([]int32, 0, tokens),
		DocStart:  []int{0},
		UnitStart: []int{0},
		DocUnit:   []int{0},
		V:         V,
	}
	a.sources = make(map[string]int32)
	for _, s := range sources {
		if _, ok := a.sources[s]; !ok {
			a.sources[s] = int32(len(a.c.Sources))
			a.c.Sources = append(a.c.Sources, s)
		}
	}
}

func (a *assembler) token(id int32) {
	if id < 0 {
		a.st.OOVTokens++
		return
	}
	a.c.Words = append(a.c.Words, id)
}

func (a *assembler) endUnit() {
	if len(a.c.Words) == a.unitOpen {
		a.st.DroppedUnits++
		return
	}
	a.c.UnitStart = append(a.c.UnitStart, len(a.c.Words))
	a.unitOpen = len(a.c.Words)
	a.docUnits++
}

func (a *assembler) endDoc(id, label, source string) {
	if a.docUnits == 0 {
		a.st.SkippedDocs++
		a.st.SkippedIDs = append(a.st.SkippedIDs, id)
		return
	}
	a.docUnits = 0
	c := a.c
	c.DocStart = append(c.DocStart, len(c.Words))
	c.DocUnit = append(c.DocUnit, len(c.UnitStart)-1)
	c.IDs = append(c.IDs, id)
	c.Labels = append(c.Labels, label)
	a.hasLabel = a.hasLabel || label != ""
	s, ok := a.sources[source]
	if !ok {
		s = int32(len(c.Sources))
		a.sources[source] = s
		c.Sources = append(c.Sources, source)
	}
	c.DocSource = append(c.DocSource, s)
}

func (a *assembler) finish() (*corpus.Corpus, EncodeStats) {
	c := a.c
	if !a.hasLabel {
		c.Labels = nil
	}
	if len(c.Sources) == 1 && c.Sources[0] == "" {
		c.Sources, c.DocSource = nil, nil
	}
	if c.NumDocs() == 0 {
		c.Sources, c.DocSource, c.Labels = nil, nil, nil
	}
	a.st.Documents = c.NumDocs()
	a.st.Tokens = c.NumTokens()
	a.st.Units = c.NumUnits()
	return c, a.st
}
