package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/internal/rng"
)

// labelledCorpus writes a JSONL corpus of n documents, each of 6 to 12
// words of one of the three word groups (its label), in sentences of
// three words, and returns its path.
func labelledCorpus(t *testing.T, n int) string {
	t.Helper()
	r := rng.Derive(9, "experiment-test")
	var b strings.Builder
	for d := 0; d < n; d++ {
		g := r.IntN(len(wordGroups))
		var words []string
		for i := range 6 + r.IntN(7) {
			words = append(words, wordGroups[g][r.IntN(len(wordGroups[g]))])
			if i%3 == 2 {
				words[len(words)-1] += "."
			}
		}
		line, _ := json.Marshal(map[string]string{"id": fmt.Sprint(d), "label": fmt.Sprint("group", g), "text": strings.Join(words, " ")})
		b.Write(line)
		b.WriteByte('\n')
	}
	p := filepath.Join(t.TempDir(), "labelled.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readLines parses a JSON lines file.
func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

// count returns how many lines have key equal to value.
func count(lines []map[string]any, key string, value any) int {
	n := 0
	for _, l := range lines {
		if fmt.Sprint(l[key]) == fmt.Sprint(value) {
			n++
		}
	}
	return n
}

// TestExperiments runs every experiment on a tiny labelled corpus with
// small settings and checks the lines each writes: one per model or round
// measured, and the claim lines.
func TestExperiments(t *testing.T) {
	corpusPath := labelledCorpus(t, 300)
	dir := t.TempDir()
	models := filepath.Join(dir, "models")
	common := []string{"--corpus", corpusPath, "--min-df", "1", "--workers", "2", "--seed", "3"}
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, lines []map[string]any)
	}{
		{name: "e1", args: []string{"e1", "--topics-grid", "2,3", "--iterations", "20", "--rounds", "2", "--local-iterations", "3", "--models-dir", models},
			check: func(t *testing.T, lines []map[string]any) {
				// 3 parties × 2 K × 2 families, 2 FTM variants × 2 families.
				if n := count(lines, "method", "party"); n != 12 {
					t.Errorf("%d party-model lines; want 12", n)
				}
				if n := count(lines, "method", "ftm"); n != 4 {
					t.Errorf("%d FTM lines; want 4", n)
				}
				if n := count(lines, "claim", "the FTM global model beats every party's own model"); n != 4 {
					t.Errorf("%d claim lines; want 4", n)
				}
			}},
		{name: "e4 reusing e1", args: []string{"e4", "--base-words", "10", "--models-dir", models, "--debias", "none,output"},
			check: func(t *testing.T, lines []map[string]any) {
				// none, 3 parties × 2 families, 2 FTM variants × 2 families.
				if n := len(lines) - count(lines, "method", "<nil>"); n != 11 {
					t.Errorf("%d feature-set lines; want 11", n)
				}
				if n := len(lines) - count(lines, "claim", "<nil>"); n != 6 {
					t.Errorf("%d claim lines; want 6 (per variant: 2 families, SentenceLDA vs LDA)", n)
				}
				if count(lines, "method", "ftm") != 0 {
					t.Errorf("e4 trained FTM again instead of reusing e1's model")
				}
			}},
		{name: "e2", args: []string{"e2", "--epsilons", "8,11", "--taus", "0.2,0.3", "--topics", "3", "--rounds", "1", "--local-iterations", "2"},
			check: func(t *testing.T, lines []map[string]any) {
				if n := count(lines, "method", "ftm"); n != 4 {
					t.Errorf("%d grid lines; want 4", n)
				}
				if n := count(lines, "method", "ftm-no-noise"); n != 1 {
					t.Errorf("%d no-noise reference lines; want 1", n)
				}
				if n := len(lines) - count(lines, "claim", "<nil>"); n != 3 {
					t.Errorf("%d claim lines; want 3 (rising in ε per τ, best τ)", n)
				}
			}},
		{name: "e3", args: []string{"e3", "--topics", "3", "--rounds", "2", "--local-iterations", "2", "--adlda-rounds", "4", "--adlda-eval-every", "2", "--adlda-eval-first", "0",
			"--splits", "sizes=1,2,3;sizes=28,57,80,13", "--debias", "none"},
			check: func(t *testing.T, lines []map[string]any) {
				// Per layout: AD-LDA rounds 2 and 4, FTM rounds 1 and 2, a claim.
				if n := count(lines, "method", "adlda"); n != 4 {
					t.Errorf("%d AD-LDA round lines; want 4", n)
				}
				if n := count(lines, "method", "ftm"); n != 4 {
					t.Errorf("%d FTM round lines; want 4", n)
				}
				for _, l := range lines {
					if l["method"] == "ftm" && !(l["bytes_up"].(float64) > 0) {
						t.Errorf("FTM round line without bytes: %v", l)
					}
				}
			}},
		{name: "dev", args: []string{"dev", "--top-l", "3,5", "--xi", "0.3,0.5", "--topics", "3", "--local-iterations", "2", "--mh-steps", "1,2", "--debias", "none"},
			check: func(t *testing.T, lines []map[string]any) {
				if n := count(lines, "measure", "integration"); n != 4 {
					t.Errorf("%d integration lines; want 4", n)
				}
				if n := count(lines, "measure", "round"); n != 2 {
					t.Errorf("%d round lines; want 2", n)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.name+".jsonl")
			args := append(append([]string{"experiment"}, tt.args...), append(common, "--out", out)...)
			if _, stderr, err := runCmd(t, args...); err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
			}
			lines := readLines(t, out)
			for _, l := range lines {
				if l["experiment"] != strings.Fields(tt.name)[0] {
					t.Fatalf("line %v does not name experiment %s", l, tt.name)
				}
			}
			tt.check(t, lines)
		})
	}
}
