package ftm

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
)

// randomCorpus returns docs documents of 1 to 12 tokens over v words, in
// sentences of 1 to 4 tokens.
func randomCorpus(v, docs int, seed uint64) *corpus.Corpus {
	r := rng.Derive(seed, "corpus")
	var d [][][]int32
	for range docs {
		var doc [][]int32
		for n := 1 + r.IntN(12); n > 0; {
			l := min(n, 1+r.IntN(4))
			s := make([]int32, l)
			for i := range s {
				s[i] = int32(r.IntN(v))
			}
			doc = append(doc, s)
			n -= l
		}
		d = append(d, doc)
	}
	return tinyCorpus(v, d)
}

// allItems reads every item of st in order and decodes it.
func allItems(st *store) [][]entry {
	var out [][]entry
	rd := st.newReader()
	for b := 0; b+1 < len(st.blocks); b++ {
		rd.openBlock(b)
		for d := st.blocks[b]; d < st.blocks[b+1]; d++ {
			rd.openDoc(d)
			for i := st.docStart[d]; i < st.docStart[d+1]; i++ {
				out = append(out, st.decodeBody(nil, rd.next(i)))
			}
		}
	}
	return out
}

// TestStoreReproducesMechanism checks that the items the sampler reads are
// exactly the mechanism's vectors — document d's items drawn in order from
// the stream of index d — whether they are kept encoded, regenerated, or
// split between the two by the memory budget, for tokens and sentences.
func TestStoreReproducesMechanism(t *testing.T) {
	const v = 300
	c := randomCorpus(v, 120, 1)
	src := privacy.NewSeededSource(5)
	idx := src.Indexed("test", "privatize")
	mech, err := newMechanism(3, 0.2, v)
	if err != nil {
		t.Fatal(err)
	}
	for _, sentences := range []bool{false, true} {
		// The reference: the mechanism on each document's stream.
		var want [][]entry
		chacha := chacha8.New([32]byte{})
		r := rand.New(chacha)
		docStart, itemStart := c.DocStart, []int(nil)
		if sentences {
			docStart, itemStart = c.DocUnit, c.UnitStart
		}
		for d := 0; d+1 < len(docStart); d++ {
			idx.Seed(chacha, uint64(d))
			for i := docStart[d]; i < docStart[d+1]; i++ {
				var pe []privacy.Entry
				if itemStart == nil {
					pe = mech.Draw(r, int(c.Words[i]), nil)
				} else {
					var cs []privacy.Count
					ws := slices.Clone(c.Words[itemStart[i]:itemStart[i+1]])
					slices.Sort(ws)
					for _, w := range ws {
						if len(cs) > 0 && cs[len(cs)-1].Word == w {
							cs[len(cs)-1].N++
						} else {
							cs = append(cs, privacy.Count{Word: w, N: 1})
						}
					}
					pe = mech.DrawCounts(r, cs, nil)
				}
				es := make([]entry, len(pe))
				for j, e := range pe {
					es[j] = entry{w: e.Word, s: int32(float64(e.Value) / mech.Granularity())}
				}
				want = append(want, es)
			}
		}
		for _, tc := range []struct {
			name   string
			memory int64
		}{{"all encoded", 1 << 30}, {"all regenerated", -1}, {"half and half", 40 << 10}} {
			pc := privatizeConfig{mech: mech, sentences: sentences, blockSize: 64, noiseMemory: tc.memory, workers: 2}
			st, err := newStore(context.Background(), c, pc, idx)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "half and half" && (st.stored == 0 || st.stored == len(st.blocks)-1) {
				t.Errorf("sentences=%v: %s: %d of %d blocks kept; want some of each", sentences, tc.name, st.stored, len(st.blocks)-1)
			}
			got := allItems(st)
			if len(got) != len(want) {
				t.Fatalf("sentences=%v %s: %d items; want %d", sentences, tc.name, len(got), len(want))
			}
			for i := range want {
				if !slices.Equal(got[i], want[i]) {
					t.Fatalf("sentences=%v %s: item %d = %v; want the mechanism's %v", sentences, tc.name, i, got[i], want[i])
				}
			}
		}
	}
}

// twoSample returns the chi-square statistic of two equal-size samples'
// histograms over the same cells, pooling cells with fewer than 10
// observations in total, and its degrees of freedom.
func twoSample(a, b map[int]int) (float64, int) {
	keys := make([]int, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var stat float64
	var pa, pb, cells int
	for _, k := range keys {
		x, y := a[k], b[k]
		if x+y < 10 {
			pa, pb = pa+x, pb+y
			continue
		}
		d := float64(x - y)
		stat += d * d / float64(x+y)
		cells++
	}
	if pa+pb > 0 {
		d := float64(pa - pb)
		stat += d * d / float64(pa+pb)
		cells++
	}
	return stat, cells - 1
}

// TestPrivatizationMatchesNaive compares the privatized tokens the sampler
// reads with the literal mechanism — V Laplace draws on the grid, then the
// threshold (privacy.ThresholdedLaplace.DrawNaive) — in distribution, at
// V = 10, ε = 1, τ = 0.2, where a zero entry survives with probability
// ≈ 0.40. For 20,000 tokens of word 3 from each, three statistics are
// compared by a two-sample chi-square test at the 1 − 10⁻⁶ quantile: the
// number of surviving entries, the value (in grid steps) of the true
// word's entry, and the surviving values at the other words.
func TestPrivatizationMatchesNaive(t *testing.T) {
	const (
		v, n = 10, 20000
		word = 3
	)
	mech, err := newMechanism(1, 0.2, v)
	if err != nil {
		t.Fatal(err)
	}
	c := &corpus.Corpus{V: v, DocStart: []int{0}}
	for d := 0; d < n/10; d++ {
		for range 10 {
			c.Words = append(c.Words, word)
		}
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	st, err := newStore(context.Background(), c, privatizeConfig{mech: mech, blockSize: 1000, noiseMemory: 1 << 30, workers: 2},
		privacy.NewSeededSource(7).Indexed("test"))
	if err != nil {
		t.Fatal(err)
	}
	type hists struct{ count, trueVal, noiseVal map[int]int }
	tally := func(h hists, es []entry) {
		h.count[len(es)]++
		seen := false
		for _, e := range es {
			if e.w == word {
				h.trueVal[int(e.s)]++
				seen = true
			} else {
				h.noiseVal[int(e.s)]++
			}
		}
		if !seen {
			h.trueVal[-1]++
		}
	}
	newHists := func() hists { return hists{map[int]int{}, map[int]int{}, map[int]int{}} }
	ours, naive := newHists(), newHists()
	for _, es := range allItems(st) {
		tally(ours, es)
	}
	r := rng.Derive(8, "naive")
	counts := []privacy.Count{{Word: word, N: 1}}
	for range n {
		pe := mech.DrawNaive(r, counts, nil)
		es := make([]entry, len(pe))
		for j, e := range pe {
			es[j] = entry{w: e.Word, s: int32(float64(e.Value) / mech.Granularity())}
		}
		tally(naive, es)
	}
	for _, h := range []struct {
		name string
		a, b map[int]int
	}{{"entries per token", ours.count, naive.count}, {"true word's value", ours.trueVal, naive.trueVal}, {"noise values", ours.noiseVal, naive.noiseVal}} {
		stat, dof := twoSample(h.a, h.b)
		crit := distuv.ChiSquared{K: float64(dof)}.Quantile(1 - 1e-6)
		if stat > crit {
			t.Errorf("%s: chi-square %.1f with %d degrees of freedom > %.1f: the privatized tokens do not follow the naive mechanism", h.name, stat, dof, crit)
		}
	}
}

func TestProposalWords(t *testing.T) {
	mech, err := newMechanism(11, 0.2, 12000)
	if err != nil {
		t.Fatal(err)
	}
	st := &store{v: 12000, mech: mech, unit: mech.Granularity()}
	step := func(x float64) int32 { return int32(x / mech.Granularity()) }
	// The cut-off: τ + ln(q·V)/ε ≈ 0.2 + ln(657)/11 ≈ 0.79.
	es := []entry{{w: 5, s: step(0.5)}, {w: 9, s: step(1.1)}, {w: 40, s: step(0.95)}, {w: 70, s: step(1.1)}, {w: 90, s: step(0.3)}}
	if got := st.appendProposal(nil, es); !slices.Equal(got, []int32{9}) {
		t.Errorf("token proposal = %v; want [9] (the largest entry, lower word among ties)", got)
	}
	st.itemStart = []int{0}
	if got := st.appendProposal(nil, es); !slices.Equal(got, []int32{9, 70, 40}) {
		t.Errorf("sentence proposal = %v; want [9 70 40] (entries above the cut-off, largest first)", got)
	}
	low := []entry{{w: 5, s: step(0.5)}, {w: 7, s: step(0.6)}}
	if got := st.appendProposal(nil, low); !slices.Equal(got, []int32{7}) {
		t.Errorf("sentence proposal with nothing above the cut-off = %v; want the largest entry [7]", got)
	}
}

func TestClipCorpus(t *testing.T) {
	c := tinyCorpus(10, [][][]int32{{{1, 2, 3}, {4, 5}}, {{6}}, {{7, 8, 9, 1, 2}}})
	tests := []struct {
		name      string
		sentences bool
		wantWords []int32
		wantDocs  []int
		wantUnits []int
	}{
		{name: "tokens", wantWords: []int32{1, 2, 3, 4, 6, 7, 8, 9, 1}, wantDocs: []int{0, 4, 5, 9}},
		{name: "whole sentences", sentences: true, wantWords: []int32{1, 2, 3, 6, 7, 8, 9, 1}, wantDocs: []int{0, 3, 4, 8}, wantUnits: []int{0, 3, 4, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := clipCorpus(c, 4, tt.sentences)
			if err := got.Validate(); err != nil {
				t.Fatalf("clipCorpus: invalid corpus: %v", err)
			}
			if !slices.Equal(got.Words, tt.wantWords) || !slices.Equal(got.DocStart, tt.wantDocs) {
				t.Errorf("clipCorpus(…, 4) words %v docs %v; want %v %v", got.Words, got.DocStart, tt.wantWords, tt.wantDocs)
			}
			if tt.sentences && !slices.Equal(got.UnitStart, tt.wantUnits) {
				t.Errorf("clipCorpus(…, 4) sentences %v; want %v", got.UnitStart, tt.wantUnits)
			}
		})
	}
	if got := clipCorpus(c, 5, false); got != c {
		t.Errorf("clipCorpus with no document over the limit made a copy")
	}
}
