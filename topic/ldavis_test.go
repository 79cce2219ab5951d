package topic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedtopic/fedtopic/corpus"
)

// ldavisInput is what pyLDAvis.prepare and LDAvis's createJSON take.
type ldavisInput struct {
	TopicTermDists [][]float64 `json:"topic_term_dists"`
	DocTopicDists  [][]float64 `json:"doc_topic_dists"`
	DocLengths     []int       `json:"doc_lengths"`
	Vocab          []string    `json:"vocab"`
	TermFrequency  []int       `json:"term_frequency"`
}

// decodeLDAvis decodes an export strictly: unknown keys are an error, since
// pyLDAvis.prepare(**data) rejects them.
func decodeLDAvis(t *testing.T, b []byte) ldavisInput {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var in ldavisInput
	if err := dec.Decode(&in); err != nil {
		t.Fatalf("WriteLDAvis output does not decode as LDAvis input: %v\n%s", err, b)
	}
	return in
}

func TestWriteLDAvis(t *testing.T) {
	m := tinyModel() // apple banana cherry date; rows [.5 .25 .25 0], [0 .125 .375 .5]
	tests := []struct {
		name string
		docs *corpus.Corpus
		want string
	}{
		{
			name: "every word used",
			docs: &corpus.Corpus{V: 4, Words: []int32{0, 1, 1, 3, 2}, DocStart: []int{0, 3, 5}},
			want: `{"topic_term_dists": [
[0.5,0.25,0.25,0],
[0,0.125,0.375,0.5]
],
"doc_topic_dists": [
[0.75,0.25],
[0.125,0.875]
],
"doc_lengths": [3,2],
"vocab": ["apple","banana","cherry","date"],
"term_frequency": [1,2,1,1]}
`,
		},
		{
			// apple is never used: the topics are renormalized over
			// banana, cherry, date (masses 0.5 and 1).
			name: "unused word left out",
			docs: &corpus.Corpus{V: 4, Words: []int32{1, 1, 3, 2}, DocStart: []int{0, 2, 4}},
			want: `{"topic_term_dists": [
[0.5,0.5,0],
[0.125,0.375,0.5]
],
"doc_topic_dists": [
[0.75,0.25],
[0.125,0.875]
],
"doc_lengths": [2,2],
"vocab": ["banana","cherry","date"],
"term_frequency": [2,1,1]}
`,
		},
	}
	theta := []float64{0.75, 0.25, 0.125, 0.875}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteLDAvis(&b, m, tt.docs, theta); err != nil {
				t.Fatalf("WriteLDAvis: %v", err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("WriteLDAvis =\n%s\nwant\n%s", got, tt.want)
			}
			decodeLDAvis(t, b.Bytes())
		})
	}
}

// TestWriteLDAvisInvariants checks what pyLDAvis's input check demands on a
// random model and corpus: matching shapes, rows of both distributions
// summing to 1, document lengths and term frequencies that add up to the
// corpus, and Φ's entries unchanged when every word is used.
func TestWriteLDAvisInvariants(t *testing.T) {
	for _, used := range []int{40, 25} {
		t.Run(fmt.Sprintf("%d of 40 words used", used), func(t *testing.T) {
			testLDAvisInvariants(t, used)
		})
	}
}

func testLDAvisInvariants(t *testing.T, used int) {
	m := randomModel(t, 3, 5, 40, 0.1)
	c := &corpus.Corpus{V: m.V, DocStart: []int{0}}
	for d := range 30 {
		for i := range 2 + d%7 {
			c.Words = append(c.Words, int32((d*13+i*7)%used))
		}
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	theta := make([]float64, c.NumDocs()*m.K)
	for d := range c.NumDocs() {
		for k := range m.K {
			theta[d*m.K+k] = 1 / float64(m.K)
		}
	}
	var b bytes.Buffer
	if err := WriteLDAvis(&b, m, c, theta); err != nil {
		t.Fatalf("WriteLDAvis: %v", err)
	}
	in := decodeLDAvis(t, b.Bytes())
	if len(in.TopicTermDists) != m.K || len(in.DocTopicDists) != c.NumDocs() || len(in.DocLengths) != c.NumDocs() {
		t.Fatalf("shapes: %d topic rows, %d doc rows, %d lengths; want %d, %d, %d",
			len(in.TopicTermDists), len(in.DocTopicDists), len(in.DocLengths), m.K, c.NumDocs(), c.NumDocs())
	}
	if len(in.Vocab) != len(in.TermFrequency) {
		t.Fatalf("%d vocabulary words, %d term frequencies; want equal", len(in.Vocab), len(in.TermFrequency))
	}
	sum := func(xs []float64) float64 {
		s := 0.0
		for _, x := range xs {
			s += x
		}
		return s
	}
	for k, row := range in.TopicTermDists {
		if len(row) != len(in.Vocab) {
			t.Errorf("topic %d has %d entries, want %d", k, len(row), len(in.Vocab))
		}
		// V float64 additions of values ≤ 1 err by at most V·2⁻⁵³ ≈ 4e-15.
		if s := sum(row); math.Abs(s-1) > 1e-12 {
			t.Errorf("topic %d sums to %v, want 1", k, s)
		}
	}
	for d, row := range in.DocTopicDists {
		if s := sum(row); math.Abs(s-1) > 1e-12 {
			t.Errorf("document %d sums to %v, want 1", d, s)
		}
	}
	tokens := 0
	for _, n := range in.DocLengths {
		tokens += n
	}
	freqs := 0
	for _, n := range in.TermFrequency {
		if n < 1 {
			t.Errorf("term frequency %d, want every exported word used", n)
		}
		freqs += n
	}
	if tokens != c.NumTokens() || freqs != c.NumTokens() {
		t.Errorf("doc lengths add to %d, term frequencies to %d; want %d tokens", tokens, freqs, c.NumTokens())
	}
	if len(in.Vocab) != used {
		t.Errorf("%d vocabulary words exported, want the %d the corpus uses", len(in.Vocab), used)
	}
	if len(in.Vocab) == m.V {
		for k := range m.K {
			if diff := cmp.Diff(m.Row(k), in.TopicTermDists[k]); diff != "" {
				t.Errorf("topic %d changed although every word is used (-model +export):\n%s", k, diff)
			}
		}
	}
}

func TestWriteLDAvisErrors(t *testing.T) {
	m := tinyModel()
	ok := []float64{0.5, 0.5}
	tests := []struct {
		name  string
		docs  *corpus.Corpus
		theta []float64
		want  string
	}{
		{name: "other vocabulary", docs: &corpus.Corpus{V: 5, Words: []int32{4}, DocStart: []int{0, 1}}, theta: ok, want: "encoded with 5 words, the model has 4"},
		{name: "word out of range", docs: &corpus.Corpus{V: 4, Words: []int32{9}, DocStart: []int{0, 1}}, theta: ok, want: "word id 9"},
		{name: "no tokens", docs: &corpus.Corpus{V: 4, DocStart: []int{0, 0}}, theta: ok, want: "no tokens"},
		{name: "NaN theta", docs: &corpus.Corpus{V: 4, Words: []int32{1}, DocStart: []int{0, 1}}, theta: []float64{math.NaN(), 1}, want: "theta of document 0, topic 0"},
		{name: "topic without mass on the corpus", docs: &corpus.Corpus{V: 4, Words: []int32{0}, DocStart: []int{0, 1}}, theta: ok, want: "topic 1 gives"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteLDAvis(&b, m, tt.docs, tt.theta)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("WriteLDAvis = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestWriteLDAvisShapePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("WriteLDAvis with 3 θ entries for 1 document × 2 topics did not panic")
		}
	}()
	WriteLDAvis(new(bytes.Buffer), tinyModel(), &corpus.Corpus{V: 4, Words: []int32{0}, DocStart: []int{0, 1}}, []float64{1, 0, 0})
}

func ExampleWriteLDAvis() {
	m := &Model{
		K: 2, V: 3,
		Phi:   []float64{0.5, 0.5, 0, 0, 0.25, 0.75},
		Vocab: []string{"apple", "pear", "bus"},
	}
	docs := &corpus.Corpus{V: 3, Words: []int32{0, 1, 2, 2}, DocStart: []int{0, 2, 4}} // "apple pear", "bus bus"
	theta := []float64{0.9, 0.1, 0.2, 0.8}
	if err := WriteLDAvis(os.Stdout, m, docs, theta); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"topic_term_dists": [
	// [0.5,0.5,0],
	// [0,0.25,0.75]
	// ],
	// "doc_topic_dists": [
	// [0.9,0.1],
	// [0.2,0.8]
	// ],
	// "doc_lengths": [2,2],
	// "vocab": ["apple","pear","bus"],
	// "term_frequency": [1,1,2]}
}
