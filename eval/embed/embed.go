package embed

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/fedtopic/fedtopic/corpus"
)

// Defaults of Config, used where a field is zero; doc.go says how each was
// chosen.
const (
	DefaultDim        = 100
	DefaultWindow     = 5
	DefaultMinCount   = 5
	DefaultMaxWords   = 20000
	DefaultOversample = 10
	DefaultPowerIters = 3
	// ContextAlpha is the exponent of context-distribution smoothing.
	ContextAlpha = 0.75
)

// Config holds the parameters of Train. The zero value of every field
// means the default in its comment.
type Config struct {
	// Dim is the vector dimension; default DefaultDim.
	Dim int `json:"dim,omitempty"`
	// Window is the largest distance, in tokens, at which two tokens of a
	// document co-occur; default DefaultWindow.
	Window int `json:"window,omitempty"`
	// MinCount drops words seen fewer times; default DefaultMinCount.
	MinCount int `json:"min_count,omitempty"`
	// MaxWords keeps at most this many words, the most frequent; default
	// DefaultMaxWords.
	MaxWords int `json:"max_words,omitempty"`
	// Oversample is the number of extra columns of the randomized SVD's
	// test matrix; default DefaultOversample.
	Oversample int `json:"oversample,omitempty"`
	// PowerIters is the number of power iterations of the randomized SVD;
	// default DefaultPowerIters. Negative means none.
	PowerIters int `json:"power_iters,omitempty"`
	// Seed draws the randomized SVD's test matrix.
	Seed uint64 `json:"seed,omitempty"`
	// Workers is the number of goroutines; it never changes the result.
	// Default 1.
	Workers int `json:"workers,omitempty"`
}

// Validate reports every problem with c, joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("embed: "+format, args...)) }
	if c.Dim < 0 {
		bad("dim = %d, want ≥ 1", c.Dim)
	}
	if c.Window < 0 {
		bad("window = %d, want ≥ 1", c.Window)
	}
	if c.MinCount < 0 {
		bad("min_count = %d, want ≥ 1", c.MinCount)
	}
	if c.MaxWords < 0 {
		bad("max_words = %d, want ≥ 2", c.MaxWords)
	}
	if c.Oversample < 0 {
		bad("oversample = %d, want ≥ 0", c.Oversample)
	}
	if c.Workers < 0 {
		bad("workers = %d, want ≥ 1", c.Workers)
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Dim == 0 {
		c.Dim = DefaultDim
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.MinCount == 0 {
		c.MinCount = DefaultMinCount
	}
	if c.MaxWords == 0 {
		c.MaxWords = DefaultMaxWords
	}
	if c.Oversample == 0 {
		c.Oversample = DefaultOversample
	}
	switch {
	case c.PowerIters == 0:
		c.PowerIters = DefaultPowerIters
	case c.PowerIters < 0:
		c.PowerIters = 0
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	return c
}

// Vectors are trained word vectors.
type Vectors struct {
	// Words are the words with a vector, most frequent first.
	Words []string
	// Dim is the vector dimension; it can be below Config.Dim when fewer
	// words were kept.
	Dim int
	// Vec holds the vectors, Dim values per word in the order of Words.
	Vec []float32
	// Singular holds the Dim largest singular values of the PPMI matrix
	// as the randomized SVD estimates them, largest first.
	Singular []float64
	// Tokens is the number of corpus tokens of kept words; NonZero the
	// number of non-zero entries of the PPMI matrix.
	Tokens, NonZero int
}

// Vector returns the vector of word i (an index into Words). The slice is
// a view; do not modify it.
func (v *Vectors) Vector(i int) []float32 { return v.Vec[i*v.Dim : (i+1)*v.Dim] }

// Nearest returns the n words most similar to word i by cosine, most
// similar first (ties by index), word i itself left out; words with a
// zero vector are never returned.
func (v *Vectors) Nearest(i, n int) []int {
	norms := v.norms()
	type scored struct {
		w   int
		cos float64
	}
	var all []scored
	if norms[i] == 0 {
		return nil
	}
	a := v.Vector(i)
	for w := range v.Words {
		if w == i || norms[w] == 0 {
			continue
		}
		all = append(all, scored{w, dot(a, v.Vector(w)) / (norms[i] * norms[w])})
	}
	slices.SortFunc(all, func(x, y scored) int {
		if c := cmp.Compare(y.cos, x.cos); c != 0 {
			return c
		}
		return cmp.Compare(x.w, y.w)
	})
	out := make([]int, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.w)
	}
	return out
}

// Ranks returns, for word i, the rank (1 = most similar) of every other
// word by cosine similarity to i; ranks[i] is 0. Ties share the better
// rank. Words with a zero vector rank last.
func (v *Vectors) Ranks(i int) []int {
	norms := v.norms()
	cos := make([]float64, len(v.Words))
	a := v.Vector(i)
	for w := range v.Words {
		switch {
		case norms[w] == 0 || norms[i] == 0:
			cos[w] = math.Inf(-1)
		default:
			cos[w] = dot(a, v.Vector(w)) / (norms[i] * norms[w])
		}
	}
	order := make([]int, 0, len(v.Words)-1)
	for w := range v.Words {
		if w != i {
			order = append(order, w)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return cmp.Compare(cos[y], cos[x]) })
	ranks := make([]int, len(v.Words))
	for r, w := range order {
		ranks[w] = r + 1
		if r > 0 && cos[w] == cos[order[r-1]] {
			ranks[w] = ranks[order[r-1]]
		}
	}
	return ranks
}

func (v *Vectors) norms() []float64 {
	n := make([]float64, len(v.Words))
	for w := range v.Words {
		x := v.Vector(w)
		n[w] = math.Sqrt(dot(x, x))
	}
	return n
}

func dot(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// WriteText writes the vectors in the word2vec text format: a first line
// "count dim", then one line per word, the word and its Dim values
// separated by spaces. eval.ReadEmbeddings reads it.
func (v *Vectors) WriteText(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	fmt.Fprintf(bw, "%d %d\n", len(v.Words), v.Dim)
	var buf []byte
	for i, word := range v.Words {
		buf = append(buf[:0], word...)
		for _, x := range v.Vector(i) {
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, float64(x), 'g', 6, 32)
		}
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return fmt.Errorf("embed: write vectors: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("embed: write vectors: %w", err)
	}
	return nil
}

// Train trains word vectors on c, whose word ids index words (doc.go
// describes the method). It fails when fewer than two words are seen
// Config.MinCount times.
func Train(ctx context.Context, c *corpus.Corpus, words []string, cfg Config) (*Vectors, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if c.V > len(words) {
		return nil, fmt.Errorf("embed: the corpus has %d word ids, the vocabulary %d words", c.V, len(words))
	}
	cfg = cfg.withDefaults()
	keep, kept := selectWords(c, cfg)
	if len(kept) < 2 {
		return nil, fmt.Errorf("embed: %d words seen at least %d times, want at least 2 (lower the minimum count or give a larger corpus)", len(kept), cfg.MinCount)
	}
	m, tokens, err := cooccurrences(ctx, c, keep, len(kept), cfg)
	if err != nil {
		return nil, err
	}
	m.ppmi()
	dim := min(cfg.Dim, len(kept))
	u, s, err := randomizedSVD(ctx, m, dim, cfg)
	if err != nil {
		return nil, err
	}
	v := &Vectors{Dim: dim, Words: make([]string, len(kept)), Vec: make([]float32, len(kept)*dim),
		Singular: s, Tokens: tokens, NonZero: len(m.val)}
	for i, w := range kept {
		v.Words[i] = words[w]
	}
	for i := range kept {
		for t := range dim {
			v.Vec[i*dim+t] = float32(u[i*dim+t] * math.Sqrt(s[t]))
		}
	}
	return v, nil
}

// selectWords returns keep (corpus word id → row, or −1) and the kept word
// ids in row order: the words seen at least MinCount times, at most
// MaxWords of them, most frequent first, ties by id.
func selectWords(c *corpus.Corpus, cfg Config) (keep []int32, kept []int32) {
	count := make([]int, c.V)
	for _, w := range c.Words {
		count[w]++
	}
	for w, n := range count {
		if n >= cfg.MinCount {
			kept = append(kept, int32(w))
		}
	}
	slices.SortStableFunc(kept, func(a, b int32) int { return cmp.Compare(count[b], count[a]) })
	if len(kept) > cfg.MaxWords {
		kept = kept[:cfg.MaxWords]
	}
	keep = make([]int32, c.V)
	for w := range keep {
		keep[w] = -1
	}
	for i, w := range kept {
		keep[w] = int32(i)
	}
	return keep, kept
}
