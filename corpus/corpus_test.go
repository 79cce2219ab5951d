package corpus_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
)

func TestCorpusValidate(t *testing.T) {
	good := func() *corpus.Corpus {
		return &corpus.Corpus{
			Words:     []int32{0, 1, 2, 1},
			DocStart:  []int{0, 3, 4},
			UnitStart: []int{0, 2, 3, 4},
			DocUnit:   []int{0, 2, 3},
			IDs:       []string{"a", "b"},
			Labels:    []string{"x", ""},
			V:         3,
			Sources:   []string{"f"},
			DocSource: []int32{0, 0},
		}
	}
	tests := []struct {
		name   string
		mutate func(c *corpus.Corpus)
		msg    string // "" means valid
	}{
		{name: "valid", mutate: func(*corpus.Corpus) {}},
		{name: "no units", mutate: func(c *corpus.Corpus) { c.UnitStart, c.DocUnit = nil, nil }},
		{name: "word id too large", mutate: func(c *corpus.Corpus) { c.Words[2] = 3 }, msg: "token 2 has word id 3 outside [0, 3)"},
		{name: "negative word id", mutate: func(c *corpus.Corpus) { c.Words[0] = -1 }, msg: "word id -1"},
		{name: "offsets past the end", mutate: func(c *corpus.Corpus) { c.DocStart[2] = 5 }, msg: "DocStart is not"},
		{name: "decreasing offsets", mutate: func(c *corpus.Corpus) { c.DocStart = []int{0, 3, 2, 4}; c.IDs = nil; c.Labels = nil }, msg: "DocStart is not"},
		{name: "ids length", mutate: func(c *corpus.Corpus) { c.IDs = c.IDs[:1] }, msg: "1 IDs for 2 documents"},
		{name: "labels length", mutate: func(c *corpus.Corpus) { c.Labels = append(c.Labels, "z") }, msg: "3 labels for 2 documents"},
		{name: "source index", mutate: func(c *corpus.Corpus) { c.DocSource[1] = 1 }, msg: "document 1 has source 1 outside [0, 1)"},
		{name: "half units", mutate: func(c *corpus.Corpus) { c.DocUnit = nil }, msg: "both be set"},
		{name: "unit crosses documents", mutate: func(c *corpus.Corpus) { c.UnitStart = []int{0, 2, 4}; c.DocUnit = []int{0, 1, 2} }, msg: "units of document 1 do not start"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good()
			tt.mutate(c)
			err := c.Validate()
			switch {
			case tt.msg == "" && err != nil:
				t.Errorf("Validate() = %v; want nil", err)
			case tt.msg != "" && (err == nil || !strings.Contains(err.Error(), tt.msg)):
				t.Errorf("Validate() = %v; want an error containing %q", err, tt.msg)
			}
		})
	}
}

func TestSubset(t *testing.T) {
	c := &corpus.Corpus{
		Words:     []int32{0, 1, 2, 1, 4, 4},
		DocStart:  []int{0, 3, 4, 6},
		UnitStart: []int{0, 2, 3, 4, 5, 6},
		DocUnit:   []int{0, 2, 3, 5},
		IDs:       []string{"a", "b", "c"},
		V:         5,
	}
	s := c.Subset([]int{2, 0})
	if err := s.Validate(); err != nil {
		t.Fatalf("Subset: %v", err)
	}
	if !slices.Equal(s.Words, []int32{4, 4, 0, 1, 2}) || !slices.Equal(s.IDs, []string{"c", "a"}) || s.Labels != nil || s.V != 5 {
		t.Errorf("Subset(2, 0) = words %v ids %v labels %v V %d; want [4 4 0 1 2], [c a], nil, 5", s.Words, s.IDs, s.Labels, s.V)
	}
	if !slices.Equal(s.UnitStart, []int{0, 1, 2, 4, 5}) || !slices.Equal(s.DocUnit, []int{0, 2, 4}) {
		t.Errorf("Subset(2, 0) units = %v / %v; want [0 1 2 4 5] / [0 2 4]", s.UnitStart, s.DocUnit)
	}
	s.Words[0] = 3
	if c.Words[4] != 4 {
		t.Error("Subset shares its word ids with the original; want a copy")
	}
	if e := c.Subset(nil); e.NumDocs() != 0 || e.Validate() != nil {
		t.Errorf("Subset(nil) = %d documents, Validate %v; want an empty valid corpus", e.NumDocs(), e.Validate())
	}
}
