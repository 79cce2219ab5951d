package corpus_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/google/go-cmp/cmp"
)

// labeled returns a corpus whose document d has d%7+1 tokens, one unit per
// token pair, and the label labels[d] (nil labels: none).
func labeled(labels []string) *corpus.Corpus {
	c := &corpus.Corpus{DocStart: []int{0}, UnitStart: []int{0}, DocUnit: []int{0}, V: 5, Labels: labels}
	for d := range labels {
		n := d%7 + 1
		for i := range n {
			c.Words = append(c.Words, int32((d+i)%c.V))
			if i%2 == 1 || i == n-1 {
				c.UnitStart = append(c.UnitStart, len(c.Words))
			}
		}
		c.DocStart = append(c.DocStart, len(c.Words))
		c.DocUnit = append(c.DocUnit, len(c.UnitStart)-1)
		c.IDs = append(c.IDs, fmt.Sprintf("doc%d", d))
	}
	return c
}

// withCounts returns labels where label name i occurs counts[i] times,
// interleaved.
func withCounts(counts map[string]int) []string {
	var names []string
	for n := range counts {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []string
	for left := true; left; {
		left = false
		for _, n := range names {
			if counts[n] > 0 {
				out = append(out, n)
				counts[n]--
				left = true
			}
		}
	}
	return out
}

// checkPartition fails unless every document of c is in exactly one part
// (or at most one, when partial), and each part's corpus is consistent.
func checkPartition(t *testing.T, c *corpus.Corpus, parts [][]int, partial bool) {
	t.Helper()
	seen := make([]int, c.NumDocs())
	for _, p := range parts {
		if !slices.IsSorted(p) {
			t.Errorf("party documents %v are not in corpus order", p)
		}
		for _, d := range p {
			seen[d]++
		}
	}
	for d, n := range seen {
		if n > 1 || (n == 0 && !partial) {
			t.Fatalf("document %d is assigned %d times; want exactly once", d, n)
		}
	}
}

func TestSplitSizes(t *testing.T) {
	tests := []struct {
		name string
		docs int
		spec corpus.SplitSpec
		want []int // documents per party
	}{
		{name: "1:2:3 exact", docs: 600, spec: corpus.SplitSpec{Sizes: []float64{1, 2, 3}}, want: []int{100, 200, 300}},
		{name: "1:2:3 rounded", docs: 601, spec: corpus.SplitSpec{Sizes: []float64{1, 2, 3}}, want: []int{100, 200, 301}},
		{name: "equal by parties", docs: 10, spec: corpus.SplitSpec{Parties: 3}, want: []int{4, 3, 3}},
		{name: "zero value is one party", docs: 7, spec: corpus.SplitSpec{}, want: []int{7}},
		{name: "tiny share gets one", docs: 5, spec: corpus.SplitSpec{Sizes: []float64{1, 1000}}, want: []int{1, 4}},
		{name: "counts", docs: 50, spec: corpus.SplitSpec{Method: corpus.SplitCounts, Counts: []int{10, 25}}, want: []int{10, 25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := labeled(make([]string, tt.docs))
			c.Labels = nil
			parts, err := corpus.Partition(c, tt.spec, rng.Derive(1, "split"))
			if err != nil {
				t.Fatalf("Partition(%v): %v", tt.spec, err)
			}
			var got []int
			for _, p := range parts {
				got = append(got, len(p))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Partition(%v) sizes = %v; want %v", tt.spec, got, tt.want)
			}
			checkPartition(t, c, parts, tt.spec.Method == corpus.SplitCounts)
			// IID: the documents are shuffled, not cut in input order.
			if len(parts) > 1 && parts[0][len(parts[0])-1] == len(parts[0])-1 {
				t.Errorf("Partition(%v) party 0 = %v; want a shuffled sample", tt.spec, parts[0])
			}
		})
	}
}

func TestSplitLabelGroups(t *testing.T) {
	// 12 labels with 5..60 documents: 390 documents.
	counts := map[string]int{}
	for i := range 12 {
		counts[fmt.Sprintf("L%02d", i)] = 5 * (i + 1)
	}
	c := labeled(withCounts(counts))
	D := c.NumDocs()
	for _, sizes := range [][]float64{{1, 2, 3}, {1, 1}, {1, 1, 1, 1}, {5, 1}} {
		spec := corpus.SplitSpec{Method: corpus.SplitLabels, Sizes: sizes}
		t.Run(spec.String(), func(t *testing.T) {
			parts, err := corpus.Partition(c, spec, nil)
			if err != nil {
				t.Fatalf("Partition(%v): %v", spec, err)
			}
			checkPartition(t, c, parts, false)
			owner := map[string]int{}
			sum := 0.0
			for _, s := range sizes {
				sum += s
			}
			for p, docs := range parts {
				for _, d := range docs {
					l := c.Labels[d]
					if q, ok := owner[l]; ok && q != p {
						t.Fatalf("label %s is held by parties %d and %d; want disjoint label groups", l, q, p)
					}
					owner[l] = p
				}
				// The greedy rule lands within the largest label (60
				// documents) of each target.
				target := float64(D) * sizes[p] / sum
				if math.Abs(float64(len(docs))-target) > 60 {
					t.Errorf("party %d has %d documents; want within 60 of its target %.1f", p, len(docs), target)
				}
			}
		})
	}
}

func TestSplitExplicitGroups(t *testing.T) {
	c := labeled(withCounts(map[string]int{"a": 3, "b": 4, "c": 5}))
	spec, err := corpus.ParseSplit("labels=c;a,b")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := corpus.Partition(c, spec, nil)
	if err != nil {
		t.Fatalf("Partition(%v): %v", spec, err)
	}
	checkPartition(t, c, parts, false)
	for p, want := range []string{"c", "ab"} {
		for _, d := range parts[p] {
			if !strings.Contains(want, c.Labels[d]) {
				t.Errorf("party %d holds a document labeled %q; want only labels %q", p, c.Labels[d], want)
			}
		}
	}
	if len(parts[0]) != 5 || len(parts[1]) != 7 {
		t.Errorf("party sizes %d, %d; want 5, 7", len(parts[0]), len(parts[1]))
	}
}

// tvFromPrior returns the mean total-variation distance between each party's
// label distribution and the corpus's.
func tvFromPrior(c *corpus.Corpus, parts [][]int, labels []string) float64 {
	prior := map[string]float64{}
	for _, l := range c.Labels {
		prior[l] += 1 / float64(c.NumDocs())
	}
	total := 0.0
	for _, docs := range parts {
		q := map[string]float64{}
		for _, d := range docs {
			q[c.Labels[d]] += 1 / float64(len(docs))
		}
		tv := 0.0
		for _, l := range labels {
			tv += math.Abs(q[l] - prior[l])
		}
		total += tv / 2
	}
	return total / float64(len(parts))
}

func TestSplitDirichlet(t *testing.T) {
	// 10 labels × 1000 documents, 10 parties of 1000.
	counts := map[string]int{}
	var labels []string
	for i := range 10 {
		l := fmt.Sprintf("L%d", i)
		counts[l] = 1000
		labels = append(labels, l)
	}
	c := labeled(withCounts(counts))
	split := func(alpha float64, seed uint64) [][]int {
		t.Helper()
		spec := corpus.SplitSpec{Method: corpus.SplitDirichlet, Alpha: alpha, Parties: 10}
		parts, err := corpus.Partition(c, spec, rng.Derive(seed, "split"))
		if err != nil {
			t.Fatalf("Partition(%v): %v", spec, err)
		}
		checkPartition(t, c, parts, false)
		for p, docs := range parts {
			if len(docs) != 1000 {
				t.Fatalf("party %d has %d documents; want equal sizes of 1000", p, len(docs))
			}
		}
		return parts
	}
	a, b := split(0.1, 7), split(0.1, 7)
	if !cmp.Equal(a, b) {
		t.Error("two Dirichlet splits with seed 7 differ; want the same")
	}
	if cmp.Equal(a, split(0.1, 8)) {
		t.Error("Dirichlet splits with seeds 7 and 8 are equal; want different")
	}
	// Thresholds. At α = 0.1 each party's q ~ Dir(0.01, ...) is nearly
	// one-hot, so its label distribution is far from the uniform prior
	// (TV ≈ 0.9 for a party holding one label; the pool limits of 1000
	// documents per label spread later parties, so the mean stays well above
	// 0.5). At α = 1000 each q_l has sd √(0.09/1001) ≈ 0.0095 and sampling
	// 1000 documents adds sd ≈ 0.0095, so E[TV] ≈ ½·10·0.8·0.0134 ≈ 0.054;
	// 0.15 leaves a margin of about 3×. The seeds are fixed, so the test is
	// deterministic; these bounds say why the values it checks are right.
	if tv := tvFromPrior(c, a, labels); tv < 0.5 {
		t.Errorf("α = 0.1: mean TV distance from the prior = %.3f; want ≥ 0.5 (non-IID)", tv)
	}
	if tv := tvFromPrior(c, split(1000, 7), labels); tv > 0.15 {
		t.Errorf("α = 1000: mean TV distance from the prior = %.3f; want ≤ 0.15 (close to IID)", tv)
	}
}

func TestSplitDirichletSizes(t *testing.T) {
	c := labeled(withCounts(map[string]int{"a": 100, "b": 200, "c": 300}))
	spec, err := corpus.ParseSplit("dirichlet=0.5:sizes=1,2,3")
	if err != nil {
		t.Fatal(err)
	}
	parts, err := corpus.Partition(c, spec, rng.Derive(3, "split"))
	if err != nil {
		t.Fatalf("Partition(%v): %v", spec, err)
	}
	checkPartition(t, c, parts, false)
	for p, want := range []int{100, 200, 300} {
		if len(parts[p]) != want {
			t.Errorf("party %d has %d documents; want %d", p, len(parts[p]), want)
		}
	}
}

func TestSplitFiles(t *testing.T) {
	c := labeled(make([]string, 6))
	c.Labels = nil
	c.Sources = []string{"a.txt", "b.txt"}
	c.DocSource = []int32{1, 0, 0, 1, 1, 0}
	parties, err := corpus.Split(c, corpus.SplitSpec{Method: corpus.SplitFiles}, nil)
	if err != nil {
		t.Fatalf("Split(files): %v", err)
	}
	if len(parties) != 2 {
		t.Fatalf("Split(files) made %d parties; want 2", len(parties))
	}
	for p, want := range [][]string{{"doc1", "doc2", "doc5"}, {"doc0", "doc3", "doc4"}} {
		if !slices.Equal(parties[p].IDs, want) {
			t.Errorf("party %d IDs = %v; want %v", p, parties[p].IDs, want)
		}
		if err := parties[p].Validate(); err != nil {
			t.Errorf("party %d corpus: %v", p, err)
		}
	}
}

func TestSplitKeepsStructure(t *testing.T) {
	c := labeled(withCounts(map[string]int{"x": 20, "y": 20}))
	parties, err := corpus.Split(c, corpus.SplitSpec{Sizes: []float64{1, 3}}, rng.Derive(5, "split"))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for d, id := range c.IDs {
		byID[id] = d
	}
	tokens := 0
	for p, pc := range parties {
		if err := pc.Validate(); err != nil {
			t.Fatalf("party %d: %v", p, err)
		}
		if pc.V != c.V || !pc.HasUnits() {
			t.Errorf("party %d: V = %d, units %v; want V = %d with units", p, pc.V, pc.HasUnits(), c.V)
		}
		tokens += pc.NumTokens()
		for d := range pc.NumDocs() {
			src := byID[pc.IDs[d]]
			if !slices.Equal(pc.Doc(d), c.Doc(src)) || pc.Labels[d] != c.Labels[src] {
				t.Errorf("party %d document %s differs from the original", p, pc.IDs[d])
			}
			f, e := pc.DocUnits(d)
			sf, se := c.DocUnits(src)
			if e-f != se-sf {
				t.Fatalf("party %d document %s has %d units; want %d", p, pc.IDs[d], e-f, se-sf)
			}
			for u := range e - f {
				if !slices.Equal(pc.Unit(f+u), c.Unit(sf+u)) {
					t.Errorf("party %d document %s unit %d differs from the original", p, pc.IDs[d], u)
				}
			}
		}
	}
	if tokens != c.NumTokens() {
		t.Errorf("parties hold %d tokens; want %d", tokens, c.NumTokens())
	}
}

func TestSplitErrors(t *testing.T) {
	three := labeled([]string{"a", "b", "a"})
	unlabeled := labeled(make([]string, 4))
	unlabeled.Labels = nil
	partly := labeled([]string{"a", "", "b"})
	tests := []struct {
		name string
		c    *corpus.Corpus
		spec corpus.SplitSpec
		msg  string
	}{
		{name: "too few documents", c: three, spec: corpus.SplitSpec{Parties: 4}, msg: "3 documents cannot fill 4 parties"},
		{name: "counts exceed corpus", c: three, spec: corpus.SplitSpec{Method: corpus.SplitCounts, Counts: []int{2, 2}}, msg: "4 documents requested, the corpus has 3"},
		{name: "labels without labels", c: unlabeled, spec: corpus.SplitSpec{Method: corpus.SplitLabels, Parties: 2}, msg: "the documents have no labels"},
		{name: "missing label", c: partly, spec: corpus.SplitSpec{Method: corpus.SplitDirichlet, Alpha: 1, Parties: 2}, msg: "1 documents have no label (first: doc1)"},
		{name: "more parties than labels", c: three, spec: corpus.SplitSpec{Method: corpus.SplitLabels, Parties: 3}, msg: "2 labels cannot be divided among 3 parties"},
		{name: "unknown group label", c: three, spec: corpus.SplitSpec{Method: corpus.SplitLabels, Groups: [][]string{{"a"}, {"z"}}}, msg: `label "z" of group 2 does not occur`},
		{name: "label in no group", c: three, spec: corpus.SplitSpec{Method: corpus.SplitLabels, Groups: [][]string{{"a"}}}, msg: `label "b" is in no group`},
		{name: "files without sources", c: three, spec: corpus.SplitSpec{Method: corpus.SplitFiles}, msg: "does not record its input files"},
		{name: "bad spec", c: three, spec: corpus.SplitSpec{Method: "random"}, msg: `unknown method "random"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := corpus.Split(tt.c, tt.spec, rng.Derive(1))
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Split(%v) error = %v; want one containing %q", tt.spec, err, tt.msg)
			}
		})
	}
	if _, err := corpus.Split(three, corpus.SplitSpec{Parties: 2}, nil); err == nil || !strings.Contains(err.Error(), "no random source") {
		t.Errorf("Split(sizes, nil rand) error = %v; want no random source", err)
	}
}

func TestParseSplit(t *testing.T) {
	tests := []struct {
		in      string
		want    corpus.SplitSpec
		str     string // String() of the result; "" means in
		parties int    // NumParties(4 files)
	}{
		{in: "sizes=1,2,3", want: corpus.SplitSpec{Method: "sizes", Sizes: []float64{1, 2, 3}}, parties: 3},
		{in: "sizes=0.5, 0.25,0.25", want: corpus.SplitSpec{Method: "sizes", Sizes: []float64{0.5, 0.25, 0.25}}, str: "sizes=0.5,0.25,0.25", parties: 3},
		{in: "counts=100,200", want: corpus.SplitSpec{Method: "counts", Counts: []int{100, 200}}, parties: 2},
		{in: "labels", want: corpus.SplitSpec{Method: "labels"}, parties: 1},
		{in: "labels:sizes=1,2,3", want: corpus.SplitSpec{Method: "labels", Sizes: []float64{1, 2, 3}}, parties: 3},
		{in: "labels=noun.Tops,verb.body;adj.all", want: corpus.SplitSpec{Method: "labels", Groups: [][]string{{"noun.Tops", "verb.body"}, {"adj.all"}}}, parties: 2},
		{in: "labels=a:b;c", want: corpus.SplitSpec{Method: "labels", Groups: [][]string{{"a:b"}, {"c"}}}, parties: 2},
		{in: "dirichlet=0.5", want: corpus.SplitSpec{Method: "dirichlet", Alpha: 0.5}, parties: 1},
		{in: "dirichlet=0.1:sizes=1,1,2", want: corpus.SplitSpec{Method: "dirichlet", Alpha: 0.1, Sizes: []float64{1, 1, 2}}, parties: 3},
		{in: "files", want: corpus.SplitSpec{Method: "files"}, parties: 4},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := corpus.ParseSplit(tt.in)
			if err != nil {
				t.Fatalf("ParseSplit(%q): %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseSplit(%q) differs (-want +got):\n%s", tt.in, diff)
			}
			str := tt.str
			if str == "" {
				str = tt.in
			}
			if s := got.String(); s != str {
				t.Errorf("ParseSplit(%q).String() = %q; want %q", tt.in, s, str)
			}
			if n := got.NumParties(4); n != tt.parties {
				t.Errorf("ParseSplit(%q).NumParties(4) = %d; want %d", tt.in, n, tt.parties)
			}
			again, err := corpus.ParseSplit(got.String())
			if err != nil || !cmp.Equal(again, got) {
				t.Errorf("ParseSplit(String()) = %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

func TestParseSplitErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{in: "", msg: `unknown method ""`},
		{in: "random", msg: `unknown method "random"`},
		{in: "sizes", msg: "want sizes=N,N,..."},
		{in: "sizes=1,x", msg: `size "x" is not a number`},
		{in: "sizes=1,-2", msg: "size 2 is -2"},
		{in: "sizes=1,0", msg: "size 2 is 0"},
		{in: "sizes=1,NaN", msg: "size 2 is NaN"},
		{in: "counts=1.5", msg: `count "1.5" is not an integer`},
		{in: "counts=3,0", msg: "count 2 is 0"},
		{in: "dirichlet", msg: "want dirichlet=α"},
		{in: "dirichlet=0", msg: "α is 0"},
		{in: "dirichlet=abc", msg: `α "abc" is not a number`},
		{in: "dirichlet=1:counts=1,2", msg: "want dirichlet:sizes=N,N,..."},
		{in: "files=2", msg: "files takes no arguments"},
		{in: "labels=a;a", msg: `label "a" is in groups 1 and 2`},
		{in: "labels=a;,", msg: "label group 2 is empty"},
		{in: "counts=1:sizes=1", msg: "want counts=N,N,..."},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := corpus.ParseSplit(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("ParseSplit(%q) error = %v; want one containing %q", tt.in, err, tt.msg)
			}
		})
	}
}

func TestSplitSpecValidate(t *testing.T) {
	spec := corpus.SplitSpec{Method: corpus.SplitCounts, Parties: 3, Counts: []int{1, 2}, Sizes: []float64{1}, Alpha: 2}
	err := spec.Validate()
	for _, want := range []string{"takes no sizes", "takes no α", "3 parties, but the spec lists"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v; want it to contain %q", err, want)
		}
	}
}
