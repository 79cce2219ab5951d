package corpus

import (
	"errors"
	"fmt"
	"strconv"
)

// Document is one raw document as read from an input file, before
// tokenization. Source and Line say where it came from, for error messages.
type Document struct {
	ID     string // from the input (JSONL "id", file name) or "<file>:<line>"
	Label  string // optional class label (JSONL "label"), "" if none
	Text   string
	Source string // input file the document came from
	Line   int    // 1-based line in Source (0 for whole-file documents)
}

// Where names the document for messages: "FILE:LINE", "FILE" for a
// whole-file document, or `document "ID"` when it names no file.
func (d *Document) Where() string {
	switch {
	case d.Source == "":
		return "document " + strconv.Quote(d.ID)
	case d.Line > 0:
		return d.Source + ":" + strconv.Itoa(d.Line)
	}
	return d.Source
}

// Corpus is a tokenized, vocabulary-encoded corpus in compact form: the word
// ids of all documents concatenated, with offsets. It is what the samplers
// train on and what Split divides among parties.
//
// Document d holds the tokens Words[DocStart[d]:DocStart[d+1]]. When sentence
// (or other semantic unit) boundaries are known, unit u holds the tokens
// Words[UnitStart[u]:UnitStart[u+1]] and document d holds the units
// DocUnit[d] .. DocUnit[d+1]-1; units never cross document boundaries and
// cover each document's tokens exactly. Without units, UnitStart and DocUnit
// are nil.
type Corpus struct {
	Words     []int32 // word ids into the vocabulary, all documents concatenated
	DocStart  []int   // len D+1; DocStart[0] = 0, DocStart[D] = len(Words)
	UnitStart []int   // len U+1, token offsets of semantic units, or nil
	DocUnit   []int   // len D+1, index of each document's first unit, or nil
	IDs       []string
	Labels    []string // "" where a document has no label; nil if none has
	V         int      // vocabulary size; every word id is in [0, V)

	// Sources lists the input files the documents came from, and
	// DocSource[d] indexes Sources for document d. Both are nil when the
	// provenance is unknown (synthetic corpora); Split "files" needs them.
	Sources   []string
	DocSource []int32
}

// NumDocs returns the number of documents.
func (c *Corpus) NumDocs() int {
	if len(c.DocStart) == 0 {
		return 0
	}
	return len(c.DocStart) - 1
}

// NumTokens returns the number of tokens.
func (c *Corpus) NumTokens() int { return len(c.Words) }

// Doc returns the word ids of document d (a view, not a copy).
func (c *Corpus) Doc(d int) []int32 { return c.Words[c.DocStart[d]:c.DocStart[d+1]] }

// HasUnits reports whether the corpus carries semantic-unit boundaries.
func (c *Corpus) HasUnits() bool { return c.UnitStart != nil }

// NumUnits returns the number of semantic units, or 0 without units.
func (c *Corpus) NumUnits() int {
	if len(c.UnitStart) == 0 {
		return 0
	}
	return len(c.UnitStart) - 1
}

// Unit returns the word ids of unit u (a view, not a copy).
func (c *Corpus) Unit(u int) []int32 { return c.Words[c.UnitStart[u]:c.UnitStart[u+1]] }

// DocUnits returns the range [first, end) of document d's units.
func (c *Corpus) DocUnits(d int) (first, end int) { return c.DocUnit[d], c.DocUnit[d+1] }

// Validate checks the corpus invariants: offsets that start at 0, never
// decrease and end at len(Words); word ids in [0, V); units that tile every
// document exactly; and per-document slices of the right length. It reports
// every problem found, joined.
func (c *Corpus) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		if len(errs) < 10 {
			errs = append(errs, fmt.Errorf("corpus: "+format, args...))
		}
	}
	if c.V < 0 {
		bad("negative vocabulary size %d", c.V)
	}
	for i, w := range c.Words {
		if w < 0 || int(w) >= c.V {
			bad("token %d has word id %d outside [0, %d)", i, w, c.V)
			break
		}
	}
	if !offsetsOK(c.DocStart, len(c.Words)) {
		bad("DocStart is not a non-decreasing offset list from 0 to %d", len(c.Words))
		return errors.Join(errs...)
	}
	d := c.NumDocs()
	if c.IDs != nil && len(c.IDs) != d {
		bad("%d IDs for %d documents", len(c.IDs), d)
	}
	if c.Labels != nil && len(c.Labels) != d {
		bad("%d labels for %d documents", len(c.Labels), d)
	}
	if c.DocSource != nil {
		if len(c.DocSource) != d {
			bad("%d DocSource entries for %d documents", len(c.DocSource), d)
		}
		for i, s := range c.DocSource {
			if s < 0 || int(s) >= len(c.Sources) {
				bad("document %d has source %d outside [0, %d)", i, s, len(c.Sources))
				break
			}
		}
	}
	if (c.UnitStart == nil) != (c.DocUnit == nil) {
		bad("UnitStart and DocUnit must both be set or both be nil")
	}
	if c.UnitStart != nil && c.DocUnit != nil {
		if !offsetsOK(c.UnitStart, len(c.Words)) {
			bad("UnitStart is not a non-decreasing offset list from 0 to %d", len(c.Words))
		} else if !offsetsOK(c.DocUnit, c.NumUnits()) || len(c.DocUnit) != d+1 {
			bad("DocUnit is not a non-decreasing list of %d unit indexes from 0 to %d", d+1, c.NumUnits())
		} else {
			for i := range d {
				if c.UnitStart[c.DocUnit[i]] != c.DocStart[i] {
					bad("units of document %d do not start at its first token", i)
					break
				}
			}
		}
	}
	return errors.Join(errs...)
}

// offsetsOK reports whether off is a non-empty, non-decreasing list from 0
// to end.
func offsetsOK(off []int, end int) bool {
	if len(off) == 0 || off[0] != 0 || off[len(off)-1] != end {
		return false
	}
	for i := 1; i < len(off); i++ {
		if off[i] < off[i-1] {
			return false
		}
	}
	return true
}

// Subset returns a new corpus holding the documents docs of c, in the order
// given, with their units, IDs, labels and sources. The vocabulary (V and
// word ids) is shared; the word ids are copied. It panics if an index is out
// of range.
func (c *Corpus) Subset(docs []int) *Corpus {
	n := 0
	for _, d := range docs {
		n += c.DocStart[d+1] - c.DocStart[d]
	}
	s := &Corpus{
		Words:    make([]int32, 0, n),
		DocStart: make([]int, 1, len(docs)+1),
		V:        c.V,
		Sources:  c.Sources,
	}
	if c.IDs != nil {
		s.IDs = make([]string, 0, len(docs))
	}
	if c.Labels != nil {
		s.Labels = make([]string, 0, len(docs))
	}
	if c.DocSource != nil {
		s.DocSource = make([]int32, 0, len(docs))
	}
	if c.UnitStart != nil {
		s.UnitStart = []int{0}
		s.DocUnit = []int{0}
	}
	for _, d := range docs {
		base := len(s.Words)
		s.Words = append(s.Words, c.Doc(d)...)
		s.DocStart = append(s.DocStart, len(s.Words))
		if c.IDs != nil {
			s.IDs = append(s.IDs, c.IDs[d])
		}
		if c.Labels != nil {
			s.Labels = append(s.Labels, c.Labels[d])
		}
		if c.DocSource != nil {
			s.DocSource = append(s.DocSource, c.DocSource[d])
		}
		if c.UnitStart != nil {
			first, end := c.DocUnits(d)
			for u := first; u < end; u++ {
				s.UnitStart = append(s.UnitStart, base+c.UnitStart[u+1]-c.DocStart[d])
			}
			s.DocUnit = append(s.DocUnit, len(s.UnitStart)-1)
		}
	}
	return s
}
