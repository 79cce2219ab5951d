package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/topic"
)

// writeFile writes content to name in dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEvalWarnsDroppedText checks that eval says on stderr, one line each,
// how many documents and tokens of each corpus the model's vocabulary
// drops, and stays silent when it drops nothing.
func TestEvalWarnsDroppedText(t *testing.T) {
	model := trainThree(t)
	dir := t.TempDir()
	test := writeFile(t, dir, "test.txt", "apple banana zebra yak\nquark lepton\nengine wheel\n")
	ref := writeFile(t, dir, "ref.txt", "violin piano\nmuon\ngluon\npion kaon\n")
	_, stderr, err := runCmd(t, "eval", "--model", model, "--corpus", test, "--reference", ref, "--train", "testdata/three.txt")
	if err != nil {
		t.Fatalf("eval: %v; stderr:\n%s", err, stderr)
	}
	for _, want := range []string{
		"warning: test set (" + test + "): 1 of 3 documents (33.3%) have no word of the model's vocabulary and are left out of every metric\n",
		"warning: test set (" + test + "): 4 of 8 tokens (50.0%) are not in the model's vocabulary and are dropped before scoring\n",
		"warning: --reference (" + ref + "): 3 of 4 documents (75.0%) have no word",
		"warning: --reference (" + ref + "): 4 of 6 tokens (66.7%) are not in",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("eval stderr\n%s\nlacks %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "--train (") {
		t.Errorf("eval stderr\n%s\nwarns about --train, which the vocabulary covers", stderr)
	}

	_, stderr, err = runCmd(t, "eval", "--model", model, "--corpus", "testdata/three.txt")
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	if strings.Contains(stderr, "of the model's vocabulary") {
		t.Errorf("eval of the training text warns about dropped text:\n%s", stderr)
	}
}

// TestEvalNamesCoherence checks that eval labels UMass and NPMI as means
// over word pairs and topics and names the corpora their counts come from,
// in the table, in JSON and in --help.
func TestEvalNamesCoherence(t *testing.T) {
	model := trainThree(t)
	dir := t.TempDir()
	ref := writeFile(t, dir, "ref.txt", "apple banana cherry\nengine wheel brake\nviolin piano cello\n")
	stdout, stderr, err := runCmd(t, "eval", "--model", model, "--corpus", "testdata/three.txt", "--reference", ref)
	if err != nil {
		t.Fatalf("eval: %v; stderr:\n%s", err, stderr)
	}
	for _, want := range []string{
		"mean per pair of top-10 words (45 pairs per topic), averaged over topics; document counts from testdata/three.txt (150 documents; two words co-occur when one document holds both)",
		"mean per pair of top-10 words (45 pairs per topic), averaged over topics; reference corpus " + ref + " (3 documents; two words co-occur when one document holds both)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("eval table\n%s\nlacks %q", stdout, want)
		}
	}

	stdout, _, err = runCmd(t, "eval", "--model", model, "--corpus", "testdata/three.txt", "--reference", ref, "--json")
	if err != nil {
		t.Fatalf("eval --json: %v", err)
	}
	type coherence struct {
		TopN      int    `json:"top_n"`
		Corpus    string `json:"corpus"`
		Documents int    `json:"documents"`
		Window    string `json:"window"`
	}
	var rep struct {
		UMass coherence `json:"umass"`
		NPMI  coherence `json:"npmi"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, stdout)
	}
	if want := (coherence{TopN: 10, Corpus: "testdata/three.txt", Documents: 150, Window: "document"}); rep.UMass != want {
		t.Errorf("eval --json umass = %+v; want %+v", rep.UMass, want)
	}
	if want := (coherence{TopN: 10, Corpus: ref, Documents: 3, Window: "document"}); rep.NPMI != want {
		t.Errorf("eval --json npmi = %+v; want %+v", rep.NPMI, want)
	}

	help, _, err := runCmd(t, "eval", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"mean over pairs, then over topics", "gensim's u_mass", "the paper's sum is 45 times", "no\nsliding window"} {
		if !strings.Contains(help, want) {
			t.Errorf("eval --help\n%s\nlacks %q", help, want)
		}
	}
}

// TestEvalWarnsMoreTopicsThanWords checks the warning for a model with more
// topics than vocabulary words.
func TestEvalWarnsMoreTopicsThanWords(t *testing.T) {
	dir := t.TempDir()
	m := &topic.Model{K: 4, V: 3, Vocab: []string{"apple", "banana", "cherry"}, Phi: make([]float64, 12), Beta: 0.01}
	for i := range m.Phi {
		m.Phi[i] = 1.0 / 3
	}
	path := filepath.Join(dir, "tiny.model")
	if err := topic.Save(path, m); err != nil {
		t.Fatal(err)
	}
	test := writeFile(t, dir, "test.txt", "apple banana\nbanana cherry apple\n")
	_, stderr, err := runCmd(t, "eval", "--model", path, "--corpus", test)
	if err != nil {
		t.Fatalf("eval: %v; stderr:\n%s", err, stderr)
	}
	for _, want := range []string{
		"warning: the model has more topics (K = 4) than vocabulary words (V = 3)",
		"warning: coherence pairs the top 10 words of each topic, but the vocabulary has only 3",
		"warning: topic diversity counts the top 25 words of each topic, but the vocabulary has only 3",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("eval stderr\n%s\nlacks %q", stderr, want)
		}
	}
}
