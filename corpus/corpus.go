package corpus

// Document is one raw document as read from an input file, before
// tokenization. Source and Line say where it came from, for error messages.
type Document struct {
	ID     string // from the input (JSONL "id", file name) or "<file>:<line>"
	Label  string // optional class label (JSONL "label"), "" if none
	Text   string
	Source string // input file the document came from
	Line   int    // 1-based line in Source (0 for whole-file documents)
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
