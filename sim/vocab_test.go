package sim_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/sim/vocabround"
)

// partyDocs gives party p 200 documents: each has the common words
// "shared0" … "shared9", the party's own frequent word, and one word no
// other document has.
func partyDocs(p int) [][]string {
	var docs [][]string
	for d := range 200 {
		doc := []string{fmt.Sprintf("own%d", p), fmt.Sprintf("rare-%d-%d", p, d)}
		for s := range 10 {
			doc = append(doc, fmt.Sprintf("shared%d", s))
		}
		docs = append(docs, doc)
	}
	return docs
}

// TestSelectVocabulary: three parties select their vocabulary privately;
// words in all 200 documents of a party pass, words in one document do not,
// the union is sorted, and each party's ledger holds the charge. At ε = 5,
// δ = 1e-8, l₀ = 20 the noise is discrete Laplace with decay λ = ε/l₀ =
// 0.25 and the threshold T ≈ 1 + ln(l₀/δ)/λ ≈ 87: a count of 200 misses it
// with probability about e^(−0.25·113) < 1e-12 (39 such words), and a word
// of one document passes with probability below δ/l₀ = 5e-10 (600 such
// words): a false failure rate below 1e-6 for any seed.
func TestSelectVocabulary(t *testing.T) {
	dir := t.TempDir()
	sc := sim.Scenario{Seed: 3, LedgerDir: dir, Budget: accountant.Budget{Epsilon: 10, Delta: 1e-5}}
	p := vocabround.Params{Selection: privacy.PartitionSelectionConfig{Epsilon: 5, Delta: 1e-8, MaxWordsPerDoc: 20}}
	words, rec, err := sim.SelectVocabulary(context.Background(), sc, p, [][][]string{partyDocs(0), partyDocs(1), partyDocs(2)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"own0", "own1", "own2"}
	for s := range 10 {
		want = append(want, fmt.Sprintf("shared%d", s))
	}
	slices.Sort(want)
	if !slices.Equal(words, want) {
		t.Errorf("vocabulary %v; want %v", words, want)
	}
	if len(rec.Spent) != 3 || rec.Spent[0].Events[0].Mechanism != privacy.MechanismPartitionSelection {
		t.Errorf("round record spent %+v; want one partition selection per party", rec.Spent)
	}
	for _, id := range []string{"p1", "p2", "p3"} {
		l, err := accountant.OpenLedger(filepath.Join(dir, id+".ledger"), sc.Budget)
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Spent(); got.Epsilon != 5 || got.Delta != 1e-8 {
			t.Errorf("%s ledger: spent %+v; want ε = 5, δ = 1e-8", id, got)
		}
		l.Close()
	}
}

func TestRemap(t *testing.T) {
	old := []string{"b", "a", "c", "d"}
	c := &corpus.Corpus{V: 4, Words: []int32{0, 1, 3, 2, 3, 1}, DocStart: []int{0, 3, 4, 6},
		UnitStart: []int{0, 2, 3, 4, 6}, DocUnit: []int{0, 2, 3, 4}, IDs: []string{"x", "y", "z"}}
	got, err := sim.Remap(c, old, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("remapped corpus invalid: %v", err)
	}
	if want := []int32{1, 0, 2, 0}; !slices.Equal(got.Words, want) {
		t.Errorf("words %v; want %v", got.Words, want)
	}
	if want := []int{0, 2, 3, 4}; !slices.Equal(got.DocStart, want) {
		t.Errorf("DocStart %v; want %v", got.DocStart, want)
	}
	if want := []int{0, 2, 2, 3, 4}; !slices.Equal(got.UnitStart, want) {
		t.Errorf("UnitStart %v; want %v", got.UnitStart, want)
	}
	if _, err := sim.Remap(c, old, []string{"b", "a"}); err == nil {
		t.Error("Remap onto an unsorted vocabulary succeeded; want an error")
	}
}
