package vocab

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fedtopic/fedtopic/corpus"
)

// Vocabulary maps words to dense ids 0..Len()-1 and back. It is immutable
// once made and safe for concurrent use.
type Vocabulary struct {
	words []string
	ids   map[string]int32
}

// New returns the vocabulary whose word with id i is words[i]. Words must be
// non-empty, valid UTF-8, free of line breaks and NUL, without leading or
// trailing white space (corpus.IsSpace) and distinct. An error names the
// word by its id; callers add where the list came from.
func New(words []string) (*Vocabulary, error) {
	v := &Vocabulary{words: slices.Clone(words), ids: make(map[string]int32, len(words))}
	if len(words) > math.MaxInt32 {
		return nil, fmt.Errorf("vocab: %d words is more than word ids can hold", len(words))
	}
	for i, w := range v.words {
		if err := checkWord(w); err != nil {
			return nil, fmt.Errorf("vocab: word with id %d: %w", i, err)
		}
		if j, dup := v.ids[w]; dup {
			return nil, fmt.Errorf("vocab: word %q is both id %d and id %d", w, j, i)
		}
		v.ids[w] = int32(i)
	}
	return v, nil
}

// checkWord reports why w cannot be a vocabulary entry, if it cannot.
func checkWord(w string) error {
	switch {
	case w == "":
		return errors.New("empty word")
	case !utf8.ValidString(w):
		return errors.New("invalid UTF-8")
	case strings.ContainsAny(w, "\n\r\x00"):
		return fmt.Errorf("word %q contains a line break or NUL", w)
	}
	return checkEnds(w)
}

// checkEnds reports a word that begins or ends with white space as the
// tokenizer defines it (corpus.IsSpace), which no token can.
func checkEnds(w string) error {
	if r, _ := utf8.DecodeRuneInString(w); corpus.IsSpace(r) {
		return fmt.Errorf("word %q begins with white space (%U)", w, r)
	}
	if r, _ := utf8.DecodeLastRuneInString(w); corpus.IsSpace(r) {
		return fmt.Errorf("word %q ends with white space (%U)", w, r)
	}
	return nil
}

// Len returns the number of words, V.
func (v *Vocabulary) Len() int { return len(v.words) }

// Word returns the word with the given id. It panics if id is out of range.
func (v *Vocabulary) Word(id int) string { return v.words[id] }

// ID returns the id of w and whether w is in the vocabulary.
func (v *Vocabulary) ID(w string) (int32, bool) {
	id, ok := v.ids[w]
	return id, ok
}

// Words returns a copy of the words in id order.
func (v *Vocabulary) Words() []string { return slices.Clone(v.words) }

// Orders of ids that Build can produce.
const (
	// OrderFrequency numbers words by decreasing document frequency, ties
	// broken by the words' byte order (the default).
	OrderFrequency = "frequency"
	// OrderAlphabetical numbers words in byte order.
	OrderAlphabetical = "alphabetical"
)

// BuildOptions prune and order a vocabulary built from a corpus. The zero
// value keeps every word and numbers words by decreasing document frequency.
// Document frequency (df) is the number of documents a word occurs in.
type BuildOptions struct {
	// MinDF drops words with a smaller df: a count when ≥ 1 (an integer),
	// a fraction of the documents when in (0, 1) (rounded up to a count).
	// 0 means 1.
	MinDF float64 `json:"min_df,omitempty"`
	// MaxDF drops words with a larger df: a fraction of the documents when
	// in (0, 1] (rounded down to a count), a count when > 1 (an integer).
	// 0 means no limit.
	MaxDF float64 `json:"max_df,omitempty"`
	// MaxSize keeps only the MaxSize words of highest df (ties broken by
	// byte order) after the df filters; 0 means no cap.
	MaxSize int `json:"max_size,omitempty"`
	// Order is OrderFrequency ("" means frequency) or OrderAlphabetical.
	Order string `json:"order,omitempty"`
}

// Validate reports every problem with the options.
func (o BuildOptions) Validate() error {
	var errs []error
	if math.IsNaN(o.MinDF) || o.MinDF < 0 || math.IsInf(o.MinDF, 0) || (o.MinDF >= 1 && o.MinDF != math.Trunc(o.MinDF)) {
		errs = append(errs, fmt.Errorf("vocab: min_df %v must be a fraction in (0, 1) or a whole count", o.MinDF))
	}
	if math.IsNaN(o.MaxDF) || o.MaxDF < 0 || math.IsInf(o.MaxDF, 0) || (o.MaxDF > 1 && o.MaxDF != math.Trunc(o.MaxDF)) {
		errs = append(errs, fmt.Errorf("vocab: max_df %v must be a fraction in (0, 1] or a whole count", o.MaxDF))
	}
	if o.MaxSize < 0 {
		errs = append(errs, fmt.Errorf("vocab: max_size %d is negative", o.MaxSize))
	}
	switch o.Order {
	case "", OrderFrequency, OrderAlphabetical:
	default:
		errs = append(errs, fmt.Errorf("vocab: order %q unknown (want %q or %q)", o.Order, OrderFrequency, OrderAlphabetical))
	}
	return errors.Join(errs...)
}

// dfBounds resolves MinDF and MaxDF to counts for a corpus of n documents:
// a word is kept when lo ≤ df ≤ hi.
func (o BuildOptions) dfBounds(n int) (lo, hi int) {
	lo, hi = 1, n
	switch {
	case o.MinDF >= 1:
		lo = int(o.MinDF)
	case o.MinDF > 0:
		lo = max(1, int(math.Ceil(o.MinDF*float64(n)-1e-9)))
	}
	switch {
	case o.MaxDF > 1:
		hi = int(o.MaxDF)
	case o.MaxDF > 0:
		hi = int(math.Floor(o.MaxDF*float64(n) + 1e-9))
	}
	return lo, hi
}

// BuildStats says what pruning removed.
type BuildStats struct {
	Documents  int `json:"documents"`    // documents counted
	Types      int `json:"types"`        // distinct words before pruning
	BelowMinDF int `json:"below_min_df"` // words dropped by MinDF
	AboveMaxDF int `json:"above_max_df"` // words dropped by MaxDF
	OverSize   int `json:"over_size"`    // words dropped by MaxSize
	Size       int `json:"size"`         // words kept, V
}

// counter accumulates document frequencies and interns words to temporary
// ids in order of first appearance. A word that cannot be a vocabulary word
// is interned all the same; err records the first, naming the document it
// came from (at holds the current document's ID, Source and Line).
type counter struct {
	ids   map[string]int32
	words []string
	df    []int
	last  []int // last document (1-based) that counted each word
	docs  int
	at    corpus.Document
	err   error
}

func newCounter() *counter { return &counter{ids: make(map[string]int32)} }

// startDoc begins a new document.
func (c *counter) startDoc() { c.docs++ }

// add counts one occurrence of w in the current document and returns its
// temporary id.
func (c *counter) add(w string) int32 {
	id, ok := c.ids[w]
	if !ok {
		id = int32(len(c.words))
		if err := checkWord(w); err != nil && c.err == nil {
			c.err = fmt.Errorf("vocab: %s: %w", c.at.Where(), err)
		}
		w = strings.Clone(w) // do not pin the document text
		c.ids[w] = id
		c.words = append(c.words, w)
		c.df = append(c.df, 0)
		c.last = append(c.last, 0)
	}
	if c.last[id] != c.docs {
		c.last[id] = c.docs
		c.df[id]++
	}
	return id
}

// build prunes and orders the counted words. remap[tmp] is the final id of
// temporary id tmp, or -1 for a dropped word.
func (c *counter) build(o BuildOptions) (v *Vocabulary, remap []int32, st BuildStats, err error) {
	if err := o.Validate(); err != nil {
		return nil, nil, st, err
	}
	if c.err != nil {
		return nil, nil, st, c.err
	}
	st.Documents, st.Types = c.docs, len(c.words)
	lo, hi := o.dfBounds(c.docs)
	keep := make([]int32, 0, len(c.words))
	for id, df := range c.df {
		switch {
		case df < lo:
			st.BelowMinDF++
		case df > hi:
			st.AboveMaxDF++
		default:
			keep = append(keep, int32(id))
		}
	}
	byFreq := func(a, b int32) int {
		if c.df[a] != c.df[b] {
			return c.df[b] - c.df[a]
		}
		return strings.Compare(c.words[a], c.words[b])
	}
	slices.SortFunc(keep, byFreq)
	if o.MaxSize > 0 && len(keep) > o.MaxSize {
		st.OverSize = len(keep) - o.MaxSize
		keep = keep[:o.MaxSize]
	}
	if o.Order == OrderAlphabetical {
		slices.SortFunc(keep, func(a, b int32) int { return cmp.Compare(c.words[a], c.words[b]) })
	}
	if len(keep) == 0 {
		return nil, nil, st, fmt.Errorf("vocab: no word is left after pruning (%d words, %d documents; kept df in [%d, %d]): %w", st.Types, st.Documents, lo, hi, ErrEmpty)
	}
	words := make([]string, len(keep))
	remap = make([]int32, len(c.words))
	for i := range remap {
		remap[i] = -1
	}
	for i, id := range keep {
		words[i] = c.words[id]
		remap[id] = int32(i)
	}
	v, err = New(words)
	if err != nil {
		return nil, nil, st, err
	}
	st.Size = v.Len()
	return v, remap, st, nil
}

// Build returns the vocabulary of the tokenized documents, pruned and
// ordered as o says. The ids depend only on the multiset of documents, not
// on their order. It fails with ErrEmpty when no word survives pruning, and
// with an error naming the document (file and line) when a token cannot be
// a word.
func Build(docs []corpus.TokenizedDoc, o BuildOptions) (*Vocabulary, BuildStats, error) {
	c := newCounter()
	for i := range docs {
		d := &docs[i]
		c.at = corpus.Document{ID: d.ID, Source: d.Source, Line: d.Line}
		c.startDoc()
		for _, u := range d.Units {
			for _, w := range u {
				c.add(w)
			}
		}
	}
	v, _, st, err := c.build(o)
	return v, st, err
}
