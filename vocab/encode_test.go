package vocab_test

import (
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/vocab"
	"github.com/google/go-cmp/cmp"
)

func TestEncode(t *testing.T) {
	v, err := vocab.New([]string{"cat", "dog", "fish"})
	if err != nil {
		t.Fatal(err)
	}
	in := []corpus.TokenizedDoc{
		{ID: "a", Label: "pets", Source: "f1", Units: [][]string{{"cat", "bird"}, {"owl"}, {"dog", "dog"}}},
		{ID: "b", Source: "f1", Units: [][]string{{"owl", "bat"}}},
		{ID: "c", Source: "f2", Units: nil},
		{ID: "d", Label: "sea", Source: "f2", Units: [][]string{{"fish"}}},
	}
	c, st := v.Encode(in)
	want := &corpus.Corpus{
		Words:     []int32{0, 1, 1, 2},
		DocStart:  []int{0, 3, 4},
		UnitStart: []int{0, 1, 3, 4},
		DocUnit:   []int{0, 2, 3},
		IDs:       []string{"a", "d"},
		Labels:    []string{"pets", "sea"},
		V:         3,
		Sources:   []string{"f1", "f2"},
		DocSource: []int32{0, 1},
	}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("Encode corpus differs (-want +got):\n%s", diff)
	}
	wantSt := vocab.EncodeStats{Documents: 2, Tokens: 4, Units: 3, OOVTokens: 4, DroppedUnits: 2, SkippedDocs: 2, SkippedIDs: []string{"b", "c"}}
	if diff := cmp.Diff(wantSt, st); diff != "" {
		t.Errorf("Encode stats differ (-want +got):\n%s", diff)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Encode result: %v", err)
	}
}

func TestEncodeNoLabelsNoSources(t *testing.T) {
	v, err := vocab.New([]string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	c, st := v.Encode([]corpus.TokenizedDoc{{ID: "1", Units: [][]string{{"x"}}}, {ID: "2", Units: [][]string{{"x", "x"}}}})
	if c.Labels != nil || c.Sources != nil || c.DocSource != nil {
		t.Errorf("Encode without labels or sources: Labels %v, Sources %v, DocSource %v; want nil", c.Labels, c.Sources, c.DocSource)
	}
	if st.Documents != 2 || st.Tokens != 3 {
		t.Errorf("Encode stats = %+v; want 2 documents, 3 tokens", st)
	}
	empty, st := v.Encode([]corpus.TokenizedDoc{{ID: "1", Units: [][]string{{"y"}}}})
	if empty.NumDocs() != 0 || st.SkippedDocs != 1 || empty.Validate() != nil {
		t.Errorf("Encode of an out-of-vocabulary document: %d documents, %+v, Validate %v; want none, 1 skipped, valid", empty.NumDocs(), st, empty.Validate())
	}
}

func TestEncodeWords(t *testing.T) {
	v, err := vocab.New([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	ids, oov := v.EncodeWords([]string{"b", "z", "a", "b", "y"})
	if !slices.Equal(ids, []int32{1, 0, 1}) || oov != 2 {
		t.Errorf("EncodeWords = %v, %d; want [1 0 1], 2", ids, oov)
	}
}
