package main

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/topic"
)

// leakWords is the common vocabulary of the leak corpus: every word is in
// many documents of every party, so the private vocabulary round releases
// it.
var leakWords = slices.Concat(wordGroups[0], wordGroups[1], wordGroups[2])

// leakCorpus is a corpus of three parties whose documents carry canary
// strings and whose counts are distinctive.
type leakCorpus struct {
	files   []string     // one file per party
	docs    [][][]string // docs[p][d]: party p's documents, tokens in order
	canary  []string     // strings that occur in one document each: the vocabulary round must drop them
	counts  [][]int      // counts[p][w]: party p's occurrences of leakWords[w]
	docFreq [][]int      // docFreq[p][w]: party p's documents holding leakWords[w]
}

// The marker: party 0 holds leakWords[leakMarkerWord] exactly
// leakMarkerCount times, a number no run record, ledger or log has reason
// to hold.
const (
	leakMarkerWord  = 22
	leakMarkerCount = 4871
)

// newLeakCorpus writes the corpus under dir. Party p's count of word w is
// 61 + 3·(24·p + w), every count of every party distinct, except the
// marker; the tokens are dealt into documents of 12 to 17 words, each
// drawn from the words' group. One document of each party carries two
// canary strings and one carries a canary sentence.
func newLeakCorpus(t *testing.T, dir string) *leakCorpus {
	t.Helper()
	lc := &leakCorpus{}
	r := rand.New(rand.NewPCG(39, 7))
	for p := range 3 {
		// The pool of tokens per group, shuffled, then cut into documents.
		counts := make([]int, len(leakWords))
		var docs [][]string
		for g, group := range wordGroups {
			var pool []string
			for i, w := range group {
				wi := g*len(group) + i
				counts[wi] = 61 + 3*(len(leakWords)*p+wi)
				if p == 0 && wi == leakMarkerWord {
					counts[wi] = leakMarkerCount
				}
				for range counts[wi] {
					pool = append(pool, w)
				}
			}
			r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
			for len(pool) > 0 {
				n := min(len(pool), 12+r.IntN(6))
				docs = append(docs, pool[:n])
				pool = pool[n:]
			}
		}
		r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
		a, b := fmt.Sprintf("zqcanary%dalpha", p), fmt.Sprintf("zqcanary%dbeta", p)
		docs[3] = append(slices.Clip(docs[3]), a, b)
		sentence := []string{"xylocarp" + strconv.Itoa(p), "quoinwort", "vexillary"}
		docs[7] = append(slices.Clip(docs[7]), sentence...)
		lc.canary = append(lc.canary, a, b, sentence[0], strings.Join(sentence, " "))
		df := make([]int, len(leakWords))
		for _, d := range docs {
			seen := map[string]bool{}
			for _, w := range d {
				if i := slices.Index(leakWords, w); i >= 0 && !seen[w] {
					seen[w] = true
					df[i]++
				}
			}
		}
		var text strings.Builder
		for _, d := range docs {
			text.WriteString(strings.Join(d, " ") + "\n")
		}
		path := filepath.Join(dir, fmt.Sprintf("party%d.txt", p))
		if err := os.WriteFile(path, []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		lc.files = append(lc.files, path)
		lc.docs = append(lc.docs, docs)
		lc.counts = append(lc.counts, counts)
		lc.docFreq = append(lc.docFreq, df)
	}
	return lc
}

// leakSource is one log stream or output file of a run: its text, and the
// sequences of numbers it holds (in order of appearance; for a model file,
// also its topic-word matrix decoded from the binary).
type leakSource struct {
	name string
	text string
	nums [][]float64
}

var numberRE = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?`)

// textNumbers returns the numbers written in s, in order.
func textNumbers(s string) []float64 {
	var out []float64
	for _, m := range numberRE.FindAllString(s, -1) {
		if x, err := strconv.ParseFloat(m, 64); err == nil {
			out = append(out, x)
		}
	}
	return out
}

// leakSources reads stdout, stderr and every file under dir.
func leakSources(t *testing.T, stdout, stderr, dir string) []leakSource {
	t.Helper()
	srcs := []leakSource{
		{name: "stdout", text: stdout, nums: [][]float64{textNumbers(stdout)}},
		{name: "stderr", text: stderr, nums: [][]float64{textNumbers(stderr)}},
	}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		s := leakSource{name: rel, text: string(b), nums: [][]float64{textNumbers(string(b))}}
		if bytes.HasPrefix(b, []byte("FEDTOPIC")) {
			m, err := topic.Load(path)
			if err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
			s.nums = append(s.nums, m.Phi, m.Alpha)
			for k := range m.K {
				s.nums = append(s.nums, m.Row(k))
			}
			s.text += "\n" + strings.Join(m.Vocab, "\n")
		}
		srcs = append(srcs, s)
		return nil
	})
	if err != nil {
		t.Fatalf("reading the run's files: %v", err)
	}
	return srcs
}

// containsVector reports whether seq holds want, in order, as contiguous
// values, each within relative tolerance tol.
func containsVector(seq, want []float64, tol float64) bool {
	for i := 0; i+len(want) <= len(seq); i++ {
		ok := true
		for j, w := range want {
			if math.Abs(seq[i+j]-w) > tol*math.Abs(w) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// vectorsOver returns v restricted to the words of vocab (in vocab's
// order), as counts and as proportions.
func vectorsOver(v []int, vocab []string) (counts, props []float64) {
	var total float64
	for _, w := range vocab {
		if i := slices.Index(leakWords, w); i >= 0 {
			counts = append(counts, float64(v[i]))
			total += float64(v[i])
		} else {
			counts = append(counts, 0)
		}
	}
	for _, c := range counts {
		props = append(props, c/total)
	}
	return counts, props
}

// TestNoRawValuesInOutputs: an end-to-end run of every private
// method (PC-TD also under secure aggregation with distributed noise),
// through run(), on a corpus with canary strings and distinctive
// counts; stdout, stderr and every file the run writes (the models decoded
// from their binary form, the run record, the ledgers, the vocabulary and
// the HTML report) are scanned. None may hold a canary — a string of one
// document, which the private vocabulary round does not release — nor a
// run of five words of any document as written, nor a party's exact count
// vector over the vocabulary (word occurrences or document frequencies, as
// counts or proportions), nor the marker: one word's distinctive exact count.
func TestNoRawValuesInOutputs(t *testing.T) {
	lc := newLeakCorpus(t, t.TempDir())
	common := []string{"simulate", "--corpus", strings.Join(lc.files, ","), "--split", "files", "--tokenizer", "whitespace",
		"--vocab-epsilon", "8", "--vocab-l0", "4", "--seed", "11", "--report"}
	tests := []struct {
		name string
		args []string
	}{
		{name: "ftm", args: []string{"--algorithm", "ftm", "--topics", "3", "--rounds", "2", "--local-iterations", "2"}},
		{name: "ftm slda", args: []string{"--algorithm", "ftm", "--model", "slda", "--topics", "3", "--rounds", "2", "--local-iterations", "2"}},
		{name: "pctd ssp", args: []string{"--algorithm", "pctd", "--variant", "ssp", "--topics", "3", "--rounds", "3"}},
		{name: "pctd ssp secure", args: []string{"--algorithm", "pctd", "--variant", "ssp", "--secure-aggregation", "--threshold", "2", "--topics", "3", "--rounds", "3"}},
		{name: "pctd unit", args: []string{"--algorithm", "pctd", "--variant", "unit", "--topics", "3", "--rounds", "3"}},
		{name: "fedlda krr", args: []string{"--algorithm", "fedlda", "--mechanism", "krr", "--topics", "3", "--rounds", "3"}},
		{name: "fedlda tkrr", args: []string{"--algorithm", "fedlda", "--mechanism", "tkrr", "--topics", "3", "--rounds", "3"}},
		{name: "fedlda rrp", args: []string{"--algorithm", "fedlda", "--mechanism", "rrp", "--truncation", "1e-8", "--topics", "3", "--rounds", "3"}},
		{name: "fednmf dp", args: []string{"--algorithm", "fednmf", "--clip", "1", "--noise-multiplier", "1", "--client-fraction", "1", "--topics", "3", "--rounds", "3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := slices.Concat(common, tt.args, []string{"--out", out})
			stdout, stderr, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
			}
			vb, err := os.ReadFile(filepath.Join(out, "vocab.txt"))
			if err != nil {
				t.Fatal(err)
			}
			vocab := strings.Fields(string(vb))
			if len(vocab) != len(leakWords) {
				t.Fatalf("the vocabulary round released %d words; want the %d common words (the scan needs them all)", len(vocab), len(leakWords))
			}
			for _, f := range scanLeaks(lc, vocab, leakSources(t, stdout, stderr, out)) {
				t.Error(f)
			}
		})
	}
}

// scanLeaks returns a finding for every canary, document text, exact count
// vector and marker count in srcs.
func scanLeaks(lc *leakCorpus, vocab []string, srcs []leakSource) []string {
	var found []string
	for _, s := range srcs {
		for _, c := range lc.canary {
			if strings.Contains(s.text, c) {
				found = append(found, fmt.Sprintf("%s holds the canary %q, which the vocabulary round did not release", s.name, c))
			}
		}
		for p, docs := range lc.docs {
			for d, doc := range docs {
				if run := strings.Join(doc[:5], " "); strings.Contains(s.text, run) {
					found = append(found, fmt.Sprintf("%s holds %q, the first words of party %d's document %d as written", s.name, run, p, d))
				}
			}
		}
		for p := range lc.counts {
			for _, v := range []struct {
				what string
				raw  []int
			}{{"word counts", lc.counts[p]}, {"document frequencies", lc.docFreq[p]}} {
				counts, props := vectorsOver(v.raw, vocab)
				for _, seq := range s.nums {
					if containsVector(seq, counts, 0) || containsVector(seq, props, 1e-9) {
						found = append(found, fmt.Sprintf("%s holds party %d's exact %s over the vocabulary", s.name, p, v.what))
					}
				}
			}
		}
		for _, seq := range s.nums {
			if slices.Contains(seq, leakMarkerCount) {
				found = append(found, fmt.Sprintf("%s holds %v, party 0's exact count of %q", s.name, leakMarkerCount, leakWords[leakMarkerWord]))
			}
		}
	}
	return found
}

// TestScanLeaksFinds shows the scan of TestNoRawValuesInOutputs has
// power: a log line or file holding any of the things it looks for is
// found.
func TestScanLeaksFinds(t *testing.T) {
	lc := newLeakCorpus(t, t.TempDir())
	vocab := slices.Clone(leakWords)
	slices.Reverse(vocab) // a vocabulary order other than the corpus's
	counts, props := vectorsOver(lc.counts[1], vocab)
	df, _ := vectorsOver(lc.docFreq[2], vocab)
	var js []string
	for _, c := range counts {
		js = append(js, strconv.FormatFloat(c, 'g', -1, 64))
	}
	tests := []struct {
		name string
		src  leakSource
		want string
	}{
		{name: "canary in a log line", src: leakSource{name: "stderr", text: "party p1: token " + lc.canary[0] + "\n"}, want: "canary"},
		{name: "canary sentence", src: leakSource{name: "report.html", text: "<td>" + lc.canary[3] + "</td>"}, want: "canary"},
		{name: "document text", src: leakSource{name: "run.jsonl", text: `{"doc":"` + strings.Join(lc.docs[2][9], " ") + `"}`}, want: "first words of party 2's document 9"},
		{name: "counts in JSON", src: leakSource{name: "run.jsonl", nums: [][]float64{textNumbers(`{"round":1,"counts":[` + strings.Join(js, ",") + `]}`)}}, want: "party 1's exact word counts"},
		{name: "proportions in a model", src: leakSource{name: "model", nums: [][]float64{append([]float64{0.5}, props...)}}, want: "party 1's exact word counts"},
		{name: "document frequencies", src: leakSource{name: "stdout", nums: [][]float64{df}}, want: "party 2's exact document frequencies"},
		{name: "marker", src: leakSource{name: "ledgers/p1.ledger", nums: [][]float64{textNumbers("seen 4871 times")}}, want: "4871"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := scanLeaks(lc, vocab, []leakSource{tt.src})
			if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), tt.want) {
				t.Errorf("scanLeaks(%s) = %q; want a finding with %q", tt.name, got, tt.want)
			}
		})
	}
	clean := leakSource{name: "run.jsonl", text: strings.Join(vocab, " "), nums: [][]float64{props[:len(props)-1], counts[1:]}}
	if got := scanLeaks(lc, vocab, []leakSource{clean}); len(got) != 0 {
		t.Errorf("scanLeaks(the vocabulary, partial vectors) = %q; want none", got)
	}
}
