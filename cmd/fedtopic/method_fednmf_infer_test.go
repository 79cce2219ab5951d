package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/topic"
)

// TestInferNMF checks infer, export and eval on NMF models through run():
// θ of a document is its normalized least-squares weights (each row sums
// to 1, and a document of mostly fruit puts most of its weight on the
// fruit topic), the same whatever the seed and in export's theta-csv; eval
// leaves perplexity out and says why, and still scores NPMI and
// diversity; --burn-in is refused.
func TestInferNMF(t *testing.T) {
	for _, model := range []string{"nmf", "nmf-sgd"} {
		t.Run(model, func(t *testing.T) {
			path := trainThree(t, "--model", model, "--iterations", "50")
			m, err := topic.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			infer := func(seed string) [][]float64 {
				t.Helper()
				stdout, stderr, err := runCmd(t, "infer", "--model", path, "--corpus", "testdata/three.txt", "--seed", seed)
				if err != nil {
					t.Fatalf("infer: %v; stderr:\n%s", err, stderr)
				}
				var rows [][]float64
				for line := range strings.Lines(stdout) {
					var r struct {
						Theta []float64 `json:"theta"`
					}
					if err := json.Unmarshal([]byte(line), &r); err != nil {
						t.Fatalf("infer line %q: %v", line, err)
					}
					rows = append(rows, r.Theta)
				}
				return rows
			}
			theta := infer("1")
			if len(theta) != 150 {
				t.Fatalf("infer wrote %d rows; want 150", len(theta))
			}
			for d, row := range theta {
				var s float64
				for _, x := range row {
					s += x
				}
				if len(row) != 3 || math.Abs(s-1) > 1e-9 {
					t.Fatalf("document %d: θ = %v; want 3 proportions summing to 1", d, row)
				}
			}
			if model == "nmf" {
				// Document 0 is 19 fruit words and one instrument.
				best := slices.Index(theta[0], slices.Max(theta[0]))
				top := m.TopWords(best, 1)[0].Word
				if !slices.Contains(wordGroups[0], top) || theta[0][best] < 0.8 {
					t.Errorf("document 0: θ = %v, its largest on a topic led by %q; want ≥ 0.8 on the fruit topic", theta[0], top)
				}
			}
			if again := infer("2"); !slices.EqualFunc(theta, again, slices.Equal) {
				t.Errorf("infer with seed 2 differs from seed 1; NMF's θ depends on no seed")
			}

			csvOut := filepath.Join(t.TempDir(), "theta.csv")
			if _, stderr, err := runCmd(t, "export", "--model", path, "--format", "theta-csv", "--corpus", "testdata/three.txt", "--out", csvOut); err != nil {
				t.Fatalf("export theta-csv: %v; stderr:\n%s", err, stderr)
			}
			raw, err := os.ReadFile(csvOut)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
			if len(lines) != 151 {
				t.Fatalf("theta-csv has %d lines; want a header and 150 rows", len(lines))
			}
			for d, line := range lines[1:] {
				f := strings.Split(line, ",")
				for k, s := range f[1:] {
					x, err := strconv.ParseFloat(s, 64)
					if err != nil || math.Abs(x-theta[d][k]) > 1e-6 {
						t.Fatalf("theta-csv document %d topic %d = %q; want infer's %v", d, k, s, theta[d][k])
					}
				}
			}

			stdout, stderr, err := runCmd(t, "eval", "--model", path, "--corpus", "testdata/three.txt", "--json")
			if err != nil {
				t.Fatalf("eval: %v; stderr:\n%s", err, stderr)
			}
			var rep map[string]any
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
			if _, ok := rep["perplexity"]; ok {
				t.Errorf("eval of an NMF model reports perplexity %v; want none", rep["perplexity"])
			}
			if _, ok := rep["npmi"]; !ok {
				t.Errorf("eval of an NMF model: no NPMI in %s", stdout)
			}
			if !strings.Contains(stderr, "perplexity is not computed: the model is NMF ("+model+")") {
				t.Errorf("eval stderr %q; want it to say why perplexity is left out", stderr)
			}

			if _, stderr, err := runCmd(t, "infer", "--model", path, "--corpus", "testdata/three.txt", "--burn-in", "5"); err == nil || !strings.Contains(stderr, "--burn-in applies to fold-in Gibbs sampling") {
				t.Errorf("infer --burn-in on NMF: %v, %q; want a usage error", err, stderr)
			}
		})
	}
}

// TestEvalLDAKeepsPerplexity checks that an LDA model is still scored on
// perplexity: only NMF models leave it out.
func TestEvalLDAKeepsPerplexity(t *testing.T) {
	path := trainThree(t)
	stdout, stderr, err := runCmd(t, "eval", "--model", path, "--corpus", "testdata/three.txt", "--json")
	if err != nil {
		t.Fatalf("eval: %v; stderr:\n%s", err, stderr)
	}
	if !strings.Contains(stdout, `"perplexity"`) || strings.Contains(stderr, "not computed") {
		t.Errorf("eval of LDA: stdout %s, stderr %q; want perplexity and no NMF note", stdout, stderr)
	}
}
