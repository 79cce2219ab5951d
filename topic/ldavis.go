package topic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/fedtopic/fedtopic/corpus"
)

// WriteLDAvis writes m, the documents docs and their topic proportions θ
// as the JSON object that LDAvis's createJSON (R) and pyLDAvis.prepare
// (Python) take as input, so a model opens in the tools users already have
// (Sievert and Shirley, "LDAvis: A method for visualizing and interpreting
// topics", ACL Workshop on Interactive Language Learning, 2014):
//
//	{"topic_term_dists": [[p(w|k) ...] ...],  // K rows over vocab
//	 "doc_topic_dists": [[θ_dk ...] ...],     // D rows of K
//	 "doc_lengths": [N_d ...],                // tokens per document
//	 "vocab": ["word" ...],
//	 "term_frequency": [n_w ...]}             // tokens of each word in docs
//
// In Python, pyLDAvis.prepare(**json.load(f)) reads it as it is; in R,
// createJSON(phi, theta, doc.length, vocab, term.frequency) takes the five
// fields in this order.
//
// The vocabulary is m's, restricted to the words docs uses: a word with
// term frequency 0 would give LDAvis an infinite lift, so it is left out
// and each topic that gave it probability is divided by the mass it keeps
// (as pyLDAvis's own helpers do with a model's used vocabulary); the other
// rows are Φ's, bit for bit. Kept words stay in vocabulary order. theta is row-major D×K as Infer returns it; docs must be encoded
// with m's vocabulary (docs.V = m.V). Numbers are written in the shortest
// form that parses back to the same float64, so the output is deterministic.
// It panics if len(theta) is not docs.NumDocs()·m.K.
func WriteLDAvis(w io.Writer, m *Model, docs *corpus.Corpus, theta []float64) error {
	if err := m.invalid(); err != nil {
		return fmt.Errorf("topic: write LDAvis: %w", err)
	}
	nd := docs.NumDocs()
	if len(theta) != nd*m.K {
		panic(fmt.Sprintf("topic: write LDAvis: theta has %d entries, want %d documents × %d topics", len(theta), nd, m.K))
	}
	if docs.V != m.V {
		return fmt.Errorf("topic: write LDAvis: corpus is encoded with %d words, the model has %d: encode it with the model's vocabulary", docs.V, m.V)
	}
	for i, x := range theta {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("topic: write LDAvis: theta of document %d, topic %d = %v, want a finite non-negative proportion", i/m.K, i%m.K, x)
		}
	}
	freq := make([]int, m.V)
	for _, w := range docs.Words {
		if w < 0 || int(w) >= m.V {
			return fmt.Errorf("topic: write LDAvis: word id %d outside the model's vocabulary of %d words", w, m.V)
		}
		freq[w]++
	}
	var kept []int
	for w, n := range freq {
		if n > 0 {
			kept = append(kept, w)
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("topic: write LDAvis: the corpus has no tokens")
	}
	// scale[k] divides topic k's kept entries; it is 1 (rows written as
	// they are) for a topic that loses no mass with the dropped words.
	scale := make([]float64, m.K)
	for k := range m.K {
		row := m.Row(k)
		s, lost := 0.0, 0.0
		for w, x := range row {
			if freq[w] > 0 {
				s += x
			} else {
				lost += x
			}
		}
		if !(s > 0) {
			return fmt.Errorf("topic: write LDAvis: topic %d gives the corpus's %d words no probability", k, len(kept))
		}
		scale[k] = 1
		if lost > 0 {
			scale[k] = s
		}
	}

	bw := bufio.NewWriterSize(w, 1<<16)
	num := make([]byte, 0, 64)
	bw.WriteString("{\"topic_term_dists\": [\n")
	for k := range m.K {
		row := m.Row(k)
		num = append(num[:0], '[')
		for i, w := range kept {
			if i > 0 {
				num = append(num, ',')
			}
			num = strconv.AppendFloat(num, row[w]/scale[k], 'g', -1, 64)
		}
		num = append(num, ']')
		num = listSep(num, k, m.K)
		bw.Write(num)
	}
	bw.WriteString("],\n\"doc_topic_dists\": [\n")
	for d := range nd {
		num = appendFloats(num[:0], theta[d*m.K:(d+1)*m.K])
		num = listSep(num, d, nd)
		bw.Write(num)
	}
	bw.WriteString("],\n\"doc_lengths\": [")
	for d := range nd {
		if d > 0 {
			bw.WriteByte(',')
		}
		bw.Write(strconv.AppendInt(num[:0], int64(docs.DocStart[d+1]-docs.DocStart[d]), 10))
	}
	bw.WriteString("],\n\"vocab\": ")
	words := make([]string, len(kept))
	for i, w := range kept {
		words[i] = m.Vocab[w]
	}
	var vb bytes.Buffer
	enc := json.NewEncoder(&vb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(words); err != nil {
		return fmt.Errorf("topic: write LDAvis: %w", err)
	}
	bw.Write(bytes.TrimRight(vb.Bytes(), "\n"))
	bw.WriteString(",\n\"term_frequency\": [")
	for i, w := range kept {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.Write(strconv.AppendInt(num[:0], int64(freq[w]), 10))
	}
	bw.WriteString("]}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("topic: write LDAvis: %w", err)
	}
	return nil
}

// listSep appends the separator after element i of n in a one-per-line
// JSON list.
func listSep(b []byte, i, n int) []byte {
	if i < n-1 {
		b = append(b, ',')
	}
	return append(b, '\n')
}
