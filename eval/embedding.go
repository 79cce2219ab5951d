package eval

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// Embeddings holds word vectors for the words of a vocabulary, read from a
// word2vec or GloVe text file. Vectors are stored normalized to unit
// length, so a dot product is a cosine.
type Embeddings struct {
	// Dim is the vector dimension.
	Dim int
	vec []float32 // unit vectors of the covered words, Dim each, in file order
	at  []int     // at[w]: index of word w's vector in vec, or −1
}

// Covered returns the number of vocabulary words that have a vector.
func (e *Embeddings) Covered() int { return len(e.vec) / max(e.Dim, 1) }

// Vector returns the unit vector of vocabulary word w and whether it has
// one. The slice is a view; do not modify it.
func (e *Embeddings) Vector(w int) ([]float32, bool) {
	if w < 0 || w >= len(e.at) || e.at[w] < 0 {
		return nil, false
	}
	i := e.at[w]
	return e.vec[i*e.Dim : (i+1)*e.Dim], true
}

// ReadEmbeddings reads word vectors in the word2vec or GloVe text format and
// keeps those of the words in vocab (word id = index in vocab). Each line
// is a word followed by Dim numbers separated by spaces or tabs; word2vec's
// optional first line "count dim" is recognized and its dimension
// enforced. A word containing spaces (some GloVe files have them) is
// everything before the last Dim fields. Only vocabulary words' numbers are
// parsed, so a large file reads quickly; every line's field count is
// checked. If a word appears twice the first vector counts; an all-zero
// vector counts as missing. Errors name the line.
func ReadEmbeddings(r io.Reader, vocab []string) (*Embeddings, error) {
	e, err := readEmbeddings(r, vocab)
	if err != nil {
		return nil, fmt.Errorf("eval: read embeddings: %w", err)
	}
	return e, nil
}

// LoadEmbeddings reads the embedding file at path (see ReadEmbeddings).
func LoadEmbeddings(path string, vocab []string) (*Embeddings, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("eval: load embeddings: %w", err)
	}
	defer f.Close()
	e, err := readEmbeddings(f, vocab)
	if err != nil {
		return nil, fmt.Errorf("eval: load embeddings %s: %w", path, err)
	}
	return e, nil
}

func readEmbeddings(r io.Reader, vocab []string) (*Embeddings, error) {
	index := make(map[string]int, len(vocab))
	for w, s := range vocab {
		if _, dup := index[s]; !dup {
			index[s] = w
		}
	}
	e := &Embeddings{at: make([]int, len(vocab))}
	for w := range e.at {
		e.at[w] = -1
	}
	br := bufio.NewReaderSize(r, 1<<16)
	var long []byte // a line longer than br's buffer
	var fields [][]byte
	var scratch []float64
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("line %d: %w", lineNo, err)
		}
		fields = splitFields(fields[:0], line)
		if len(fields) > 0 {
			if lineNo == 1 && len(fields) == 2 {
				// word2vec header: "count dim".
				_, errC := strconv.Atoi(string(fields[0]))
				dim, errD := strconv.Atoi(string(fields[1]))
				if errC == nil && errD == nil {
					if dim < 1 {
						return nil, fmt.Errorf("line 1: header dimension %d, want at least 1", dim)
					}
					e.Dim = dim
					continue
				}
			}
			if e.Dim == 0 {
				if len(fields) < 2 {
					return nil, fmt.Errorf("line %d: a word and no vector", lineNo)
				}
				e.Dim = len(fields) - 1
			}
			if len(fields) < e.Dim+1 {
				return nil, fmt.Errorf("line %d: %d values, want %d", lineNo, len(fields)-1, e.Dim)
			}
			nw := len(fields) - e.Dim
			word := fields[0]
			if nw > 1 {
				word = bytes.Join(fields[:nw], []byte(" "))
			}
			if w, ok := index[string(word)]; ok && e.at[w] < 0 {
				if len(scratch) != e.Dim {
					scratch = make([]float64, e.Dim)
				}
				if err := e.set(w, fields[nw:], scratch); err != nil {
					return nil, fmt.Errorf("line %d: word %q: %w", lineNo, word, err)
				}
			}
		}
		if err != nil { // io.EOF
			break
		}
	}
	if e.Dim == 0 {
		return nil, errors.New("no vectors")
	}
	return e, nil
}

// set parses and stores the unit vector of word w; scratch holds Dim
// float64s. Memory grows with the vectors actually read, never with a
// dimension a header merely claims.
func (e *Embeddings) set(w int, vals [][]byte, scratch []float64) error {
	big := 0.0 // largest magnitude, divided out first so no square overflows
	for i, f := range vals {
		x, err := strconv.ParseFloat(string(f), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("value %d (%q) is not a finite number", i+1, f)
		}
		scratch[i] = x
		big = max(big, math.Abs(x))
	}
	if big == 0 {
		return nil // a zero vector has no direction: the word stays uncovered
	}
	norm := 0.0
	for i := range scratch {
		scratch[i] /= big
		norm += scratch[i] * scratch[i]
	}
	inv := 1 / math.Sqrt(norm)
	e.at[w] = len(e.vec) / e.Dim
	for _, x := range scratch {
		e.vec = append(e.vec, float32(x*inv))
	}
	return nil
}

// splitFields appends the space- or tab-separated fields of line to dst.
func splitFields(dst [][]byte, line []byte) [][]byte {
	i := 0
	for i < len(line) {
		for i < len(line) && isSep(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !isSep(line[j]) {
			j++
		}
		if j > i {
			dst = append(dst, line[i:j])
		}
		i = j
	}
	return dst
}

func isSep(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// EmbeddingCoherence returns the word-embedding coherence of each topic
// (FedNMF+MI Eq. 4; Fang et al. 2016): the mean cosine similarity over the
// pairs of the topic's words, C = 2/(N(N−1)) Σ_{i<j} cos(v_i, v_j). Words
// without a vector are left out and the pairs they would form counted in
// SkippedPairs; a topic with fewer than two covered words is Unscored.
// topics lists word ids (topic.Model.TopWordIDs) in e's vocabulary.
func EmbeddingCoherence(topics [][]int32, e *Embeddings) (Coherence, error) {
	for k, top := range topics {
		for _, w := range top {
			if w < 0 || int(w) >= len(e.at) {
				return Coherence{}, fmt.Errorf("eval: embedding coherence: topic %d: word id %d outside the vocabulary [0, %d)", k, w, len(e.at))
			}
		}
	}
	res := Coherence{PerTopic: make([]float64, len(topics))}
	for k, top := range topics {
		s, pairs := 0.0, 0
		for i := 1; i < len(top); i++ {
			for j := range i {
				a, okA := e.Vector(int(top[i]))
				b, okB := e.Vector(int(top[j]))
				if !okA || !okB {
					res.SkippedPairs++
					continue
				}
				dot := 0.0
				for t := range a {
					dot += float64(a[t]) * float64(b[t])
				}
				s += dot
				pairs++
			}
		}
		if pairs == 0 {
			res.Unscored = append(res.Unscored, k)
			continue
		}
		res.PerTopic[k] = s / float64(pairs)
	}
	res.TopN = topN(topics)
	res.finish()
	return res, nil
}
