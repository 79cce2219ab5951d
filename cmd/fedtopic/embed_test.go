package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/eval"
)

// TestEmbed trains vectors on a corpus of three disjoint word groups: the
// file loads with eval.LoadEmbeddings, every word has a vector and each
// word's nearest neighbours are its own group's.
func TestEmbed(t *testing.T) {
	out := filepath.Join(t.TempDir(), "vectors.txt")
	var words []string
	for _, g := range wordGroups {
		words = append(words, g...)
	}
	args := []string{"embed", "--corpus", labelledCorpus(t, 300), "--dim", "3", "--min-count", "1", "--workers", "1",
		"--out", out, "--nearest", "apple,engine,nosuchword"}
	stdout, stderr, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	e, err := eval.LoadEmbeddings(out, words)
	if err != nil {
		t.Fatalf("LoadEmbeddings(%s) = %v", out, err)
	}
	if e.Covered() != len(words) || e.Dim != 3 {
		t.Errorf("loaded %d vectors of dimension %d; want %d of dimension 3", e.Covered(), e.Dim, len(words))
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 3 || lines[2] != "nosuchword: no vector" {
		t.Fatalf("--nearest printed %q; want 3 lines, the last saying nosuchword has no vector", stdout)
	}
	for i, line := range lines[:2] {
		word, list, _ := strings.Cut(line, ": ")
		nn := strings.Fields(list)
		group := wordGroups[[]int{0, 1}[i]]
		for _, w := range nn[:len(group)-1] {
			if !slices.Contains(group, w) {
				t.Errorf("nearest neighbours of %s: %v; want its own group %v first", word, nn, group)
				break
			}
		}
	}
}

func TestEmbedErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no out", args: []string{"embed", "--corpus", "testdata/three.txt"}, want: "--out is required"},
		{name: "negative dim", args: []string{"embed", "--corpus", "testdata/three.txt", "--out", "x", "--dim", "-1"}, want: "dim = -1"},
		{name: "no word often enough", args: []string{"embed", "--corpus", "testdata/three.txt", "--out", "x", "--min-count", "1000000"}, want: "lower the minimum count"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, tt.args...)
			if err == nil || !strings.Contains(stderr, tt.want) {
				t.Errorf("run(%q) = %v, stderr %q; want an error containing %q", tt.args, err, stderr, tt.want)
			}
		})
	}
}
