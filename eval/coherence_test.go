package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// Words a, b, c, d, e are ids 0..4. In the corpus below
//
//	d0 = {a, b}, d1 = {a, b, c}, d2 = {a}, d3 = {c}
//
// D(a) = 3, D(b) = 2, D(c) = 2, D(a,b) = 2, D(a,c) = 1, D(b,c) = 1, and d and
// e never occur. Repeated tokens count once per document.
var coherenceCorpus = docsOf(5, []int32{0, 1, 0}, []int32{2, 1, 0}, []int32{0}, []int32{2, 2})

func TestUMassHandComputed(t *testing.T) {
	// Topic [a, b, c]: the mean of log((D(b,a)+1)/D(a)),
	// log((D(c,a)+1)/D(a)) and log((D(c,b)+1)/D(b)), that is of log(3/3),
	// log(2/3) and log(2/2): log(2/3)/3 (Mimno et al.'s sum is log(2/3)).
	// Topic [c, a]: log((D(a,c)+1)/D(c)) = log(2/2) = 0.
	// Topic [d, a]: the only pair conditions on d, which never occurs:
	// skipped, and the topic is unscored.
	got, err := UMass([][]int32{{0, 1, 2}, {2, 0}, {3, 0}}, coherenceCorpus)
	if err != nil {
		t.Fatalf("UMass: %v", err)
	}
	want := Coherence{
		Mean:         math.Log(2.0/3) / 3 / 2,
		PerTopic:     []float64{math.Log(2.0/3) / 3, 0, 0},
		TopN:         3,
		Corpus:       "unnamed corpus",
		Documents:    4,
		Window:       "document",
		Unscored:     []int{2},
		SkippedPairs: 1,
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(closeTo)); diff != "" {
		t.Errorf("UMass (-want +got):\n%s", diff)
	}
}

func TestNPMIHandComputed(t *testing.T) {
	// N = 4. NPMI(x,y) = ln(P(x,y)/(P(x)P(y))) / −ln P(x,y):
	//   (a,b): ln(0.5/(0.75·0.5)) / −ln 0.5   = ln(4/3)/ln 2 =  0.415037…
	//   (a,c): ln(0.25/(0.75·0.5)) / −ln 0.25 = ln(2/3)/ln 4 = −0.292481…
	//   (b,c): ln(0.25/(0.5·0.5)) / −ln 0.25  = 0
	// Topic [a, b, c] is the mean of the three. Topic [a, d]: d never
	// occurs, so the pair never co-occurs and scores −1.
	got, err := NPMI([][]int32{{0, 1, 2}, {0, 3}}, coherenceCorpus)
	if err != nil {
		t.Fatalf("NPMI: %v", err)
	}
	abc := (math.Log(4.0/3)/math.Log(2) + math.Log(2.0/3)/math.Log(4)) / 3
	want := Coherence{Mean: (abc - 1) / 2, PerTopic: []float64{abc, -1}, TopN: 3, Corpus: "unnamed corpus", Documents: 4, Window: "document"}
	if diff := cmp.Diff(want, got, cmp.Comparer(closeTo)); diff != "" {
		t.Errorf("NPMI (-want +got):\n%s", diff)
	}
	// Two words present in every document: NPMI = 1 by convention.
	all := docsOf(2, []int32{0, 1}, []int32{1, 0})
	if got, err := NPMI([][]int32{{0, 1}}, all); err != nil || got.Mean != 1 {
		t.Errorf("NPMI(words in every document) = %v, %v; want mean 1", got, err)
	}
}

func TestCoherenceErrors(t *testing.T) {
	if _, err := UMass([][]int32{{0, 7}}, coherenceCorpus); err == nil || !strings.Contains(err.Error(), "topic 0: word id 7") {
		t.Errorf("UMass(word id 7 of 5) = %v; want an error naming topic 0 and word 7", err)
	}
	if _, err := NPMI([][]int32{{0, 1}}, docsOf(5)); err == nil || !strings.Contains(err.Error(), "no documents") {
		t.Errorf("NPMI(empty reference) = %v; want an error about no documents", err)
	}
	if _, err := NPMI([][]int32{{0, 1}}, docsOf(2, []int32{0, 5})); err == nil || !strings.Contains(err.Error(), "document 0 token 1") {
		t.Errorf("NPMI(corpus with word id 5 of 2) = %v; want an error naming document 0 token 1", err)
	}
}

func TestDocFreqsMatchBruteForce(t *testing.T) {
	r := rng.Derive(2, "eval", "docfreqs")
	const v = 40
	var docs [][]int32
	for range 300 {
		doc := make([]int32, r.IntN(12))
		for i := range doc {
			doc[i] = int32(r.IntN(v))
		}
		docs = append(docs, doc)
	}
	c := docsOf(v, docs...)
	topics := make([][]int32, 6)
	for k := range topics {
		for range 5 {
			topics[k] = append(topics[k], int32(r.IntN(v)))
		}
	}
	f, err := countDocFreqs(topics, c)
	if err != nil {
		t.Fatal(err)
	}
	has := func(d int, w int32) bool {
		for _, x := range docs[d] {
			if x == w {
				return true
			}
		}
		return false
	}
	for _, top := range topics {
		for _, a := range top {
			for _, b := range top {
				var wa, wb, wab int
				for d := range docs {
					ha, hb := has(d, a), has(d, b)
					if ha {
						wa++
					}
					if hb {
						wb++
					}
					if ha && hb {
						wab++
					}
				}
				da, db, dab := f.pair(a, b)
				if da != wa || db != wb || dab != wab {
					t.Fatalf("pair(%d, %d) = %d, %d, %d; want %d, %d, %d", a, b, da, db, dab, wa, wb, wab)
				}
			}
		}
	}
}

func TestDiversity(t *testing.T) {
	tests := []struct {
		name   string
		topics [][]int32
		want   float64
	}{
		{name: "disjoint", topics: [][]int32{{0, 1}, {2, 3}}, want: 1},
		{name: "one shared", topics: [][]int32{{0, 1}, {1, 2}}, want: 0.75},
		{name: "identical", topics: [][]int32{{0, 1}, {1, 0}, {0, 1}}, want: 2.0 / 6},
		{name: "empty", topics: nil, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diversity(tt.topics); got != tt.want {
				t.Errorf("Diversity(%v) = %v; want %v", tt.topics, got, tt.want)
			}
		})
	}
}

// closeTo compares floats to 1e-12.
func closeTo(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }
