package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/topic"
)

// demoCorpus is the corpus the README's main command runs on.
const demoCorpus = "../../demo/wordnet-glosses.jsonl"

// TestDefaultsOnDemo runs every algorithm as a newcomer would, with only
// --corpus, --topics and --out (and a seed), on the demo corpus: each run
// must finish, say what it spends, keep a vocabulary large enough for the
// topics, and produce distinct topics rather than one list of frequent
// words repeated.
func TestDefaultsOnDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every algorithm on the demo corpus (about 15 s)")
	}
	for _, alg := range methodNames(methods()) {
		t.Run(alg, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			stdout, stderr, err := runCmd(t, "simulate", "--algorithm", alg, "--corpus", demoCorpus, "--topics", "10", "--out", out, "--seed", "1")
			if err != nil {
				t.Fatalf("simulate --algorithm %s with defaults: %v; stderr:\n%s", alg, err, stderr)
			}
			if strings.Contains(stderr, "warning") {
				t.Errorf("simulate --algorithm %s with defaults warned:\n%s", alg, stderr)
			}
			if !strings.Contains(stderr, "privacy: each party spends ε = ") || !strings.Contains(stdout, " per document") {
				t.Errorf("simulate --algorithm %s: stderr %q, stdout %q; want the planned spend before training and ε per document after", alg, stderr, stdout)
			}
			m, err := topic.Load(filepath.Join(out, "model"))
			if err != nil {
				t.Fatal(err)
			}
			// 200 words is 20 per topic, the least checkVocabSize accepts
			// without a warning; the demo corpus gives about 440.
			if m.V < 200 {
				t.Errorf("%s: vocabulary of %d words; want at least 200", alg, m.V)
			}
			// Distinct topics: the top ten words of the topics hold at
			// least 50 different words, half of what 10 topics with
			// disjoint top words would. Topics that all repeat the most
			// frequent words (the failure this guards against: 16 to 28
			// words kept by the vocabulary round) hold about ten. FTM's
			// global model has more topics than K (each party's, merged
			// where similar), so the bound is on K = 10.
			seen := map[int32]bool{}
			for _, ws := range m.TopWordIDs(10) {
				for _, w := range ws {
					seen[w] = true
				}
			}
			if len(seen) < 50 {
				t.Errorf("%s: the topics' top ten words hold %d distinct words; want at least 50", alg, len(seen))
			}
		})
	}
}

// TestPreflightRefusesBeforeWork checks that a budget too small for the
// configuration is refused before anything is read, released or written,
// with the numbers and the flags to change.
func TestPreflightRefusesBeforeWork(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	_, stderr, err := runCmd(t, "simulate", "--algorithm", "ftm", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace",
		"--topics", "3", "--max-doc-length", "30", "--budget-epsilon", "10", "--out", out)
	var ue usageError
	if !errors.As(err, &ue) {
		t.Fatalf("simulate with budget 10: %v; want a usage error", err)
	}
	for _, want := range []string{"ε = 334 per document", "11 per word occurrence × 30 words", "4 for the vocabulary round", "the budget is ε = 10", "raise --budget-epsilon to at least 334", "--epsilon", "--max-doc-length"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q; want it to contain %q", stderr, want)
		}
	}
	if strings.Contains(stderr, "corpus:") {
		t.Errorf("stderr %q: the corpus was read before the refusal", stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused run left %d entries in %s; want none", len(entries), dir)
	}
}

// TestSimulateOutDir checks the output directory rules: a file or a
// non-empty directory is refused unless --force, a failed run leaves
// nothing, and --force replaces a run without leaving its stale report.
func TestSimulateOutDir(t *testing.T) {
	dir := t.TempDir()
	vocabFile := filepath.Join(dir, "vocab.txt")
	words := append(append(append([]string(nil), wordGroups[0]...), wordGroups[1]...), wordGroups[2]...)
	if err := os.WriteFile(vocabFile, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"simulate", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--vocab", vocabFile, "--topics", "3", "--rounds", "2", "--seed", "2"}

	file := filepath.Join(dir, "afile")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, err := runCmd(t, append(base, "--out", file)...); err == nil || !strings.Contains(stderr, "is a file") {
		t.Errorf("simulate --out FILE: %v, %q; want a refusal saying it is a file", err, stderr)
	}

	out := filepath.Join(dir, "run")
	if _, stderr, err := runCmd(t, append(base, "--out", out, "--report")...); err != nil {
		t.Fatalf("first run: %v; stderr:\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
		t.Fatalf("first run wrote no report: %v", err)
	}
	if _, stderr, err := runCmd(t, append(base, "--out", out)...); err == nil || !strings.Contains(stderr, "--force") {
		t.Errorf("simulate into a non-empty --out: %v, %q; want a refusal naming --force", err, stderr)
	}
	if _, stderr, err := runCmd(t, append(base, "--out", out, "--force")...); err != nil {
		t.Fatalf("simulate --force: %v; stderr:\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "report.html")); err == nil {
		t.Errorf("simulate --force without --report left the old run's report.html beside the new run")
	}

	// A run that fails after it started (a vocabulary smaller than K)
	// leaves nothing behind: no directory, no temporary files.
	failed := filepath.Join(dir, "failed")
	if _, stderr, err := runCmd(t, append(base, "--out", failed, "--topics", "30")...); err == nil || !strings.Contains(stderr, "fewer than the 30 topics") {
		t.Errorf("simulate with K above V: %v, %q; want a refusal naming the vocabulary size", err, stderr)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); n != "afile" && n != "run" && n != "vocab.txt" {
			t.Errorf("a failed run left %s in %s", n, dir)
		}
	}
}

// TestVocabularyWarning checks that a vocabulary too small for the number
// of topics is warned about, with what to change.
func TestVocabularyWarning(t *testing.T) {
	dir := t.TempDir()
	vocabFile := filepath.Join(dir, "vocab.txt")
	words := append(append(append([]string(nil), wordGroups[0]...), wordGroups[1]...), wordGroups[2]...)
	if err := os.WriteFile(vocabFile, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCmd(t, "simulate", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--vocab", vocabFile,
		"--topics", "5", "--rounds", "1", "--seed", "2", "--out", filepath.Join(dir, "run"))
	if err != nil {
		t.Fatalf("simulate: %v; stderr:\n%s", err, stderr)
	}
	want := "warning: the shared vocabulary has only 24 words for 5 topics"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr %q; want %q", stderr, want)
	}
}

// TestPrivacyShownPlainly checks the privacy a run spent as a user reads
// it: the summary names the unit and the breakdown, and the report holds
// the cost per release at both units, a plain sentence on what ε per
// document means, the parties' numbers of topics, and no internal names.
func TestPrivacyShownPlainly(t *testing.T) {
	dir := t.TempDir()
	vocabFile := filepath.Join(dir, "vocab.txt")
	words := append(append(append([]string(nil), wordGroups[0]...), wordGroups[1]...), wordGroups[2]...)
	if err := os.WriteFile(vocabFile, []byte(strings.Join(words, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	stdout, stderr, err := runCmd(t, "simulate", "--algorithm", "ftm", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--vocab", vocabFile,
		"--topics", "2,3,4", "--epsilon", "5", "--max-doc-length", "20", "--rounds", "2", "--local-iterations", "3", "--seed", "4", "--out", out, "--report")
	if err != nil {
		t.Fatalf("simulate: %v; stderr:\n%s", err, stderr)
	}
	if want := "ε = 100 per document (5 per word occurrence × 20 words for FTM's privatized counts)"; !strings.Contains(stdout, want) {
		t.Errorf("stdout %q; want %q", stdout, want)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{"2, 3, 4 per party", "What each release costs every party", "ε = 5 per word occurrence × 20", "In plain words: ε = 100 per document"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, internal := range []string{"privacy/accountant", "(check)", "epsilon-delta"} {
		if strings.Contains(page, internal) || strings.Contains(stdout+stderr, internal) {
			t.Errorf("an internal name %q reached the user", internal)
		}
	}
}

// TestTrainOutChecked checks that train refuses an --out it cannot or
// should not write before it trains: a directory, an existing file without
// --force, a directory that does not exist.
func TestTrainOutChecked(t *testing.T) {
	dir := t.TempDir()
	base := []string{"train", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--topics", "3", "--iterations", "5", "--seed", "1"}
	tests := []struct {
		name, out, want string
		extra           []string
	}{
		{name: "directory", out: dir, want: "is a directory"},
		{name: "missing parent", out: filepath.Join(dir, "no", "such", "m.model"), want: "cannot write in"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, append(base, "--out", tt.out)...)
			if err == nil || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "corpus:") {
				t.Errorf("train --out %s: %v, %q; want a refusal mentioning %q before the corpus is read", tt.out, err, stderr, tt.want)
			}
		})
	}
	out := filepath.Join(dir, "m.model")
	if _, stderr, err := runCmd(t, append(base, "--out", out)...); err != nil {
		t.Fatalf("train: %v; stderr:\n%s", err, stderr)
	}
	if _, stderr, err := runCmd(t, append(base, "--out", out)...); err == nil || !strings.Contains(stderr, "--force") {
		t.Errorf("train over an existing model: %v, %q; want a refusal naming --force", err, stderr)
	}
	if _, stderr, err := runCmd(t, append(base, "--out", out, "--force")...); err != nil {
		t.Errorf("train --force over an existing model: %v; stderr:\n%s", err, stderr)
	}
}

// TestHelpExamplesOnDemo runs every example of train's and simulate's help
// that uses the demo corpus, as written (with --out in a temporary
// directory), and checks that each finishes without a warning and gives
// distinct topics: a help text's examples are what a newcomer tries first.
func TestHelpExamplesOnDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the help's examples on the demo corpus (about 15 s)")
	}
	root := newRootCmd(&env{stdout: io.Discard, stderr: io.Discard})
	ran := 0
	for _, c := range root.Commands() {
		if c.Name() != "train" && c.Name() != "simulate" {
			continue
		}
		for i, line := range strings.Split(c.Example, "\n") {
			if !strings.Contains(line, "demo/wordnet-glosses.jsonl") {
				continue
			}
			args := strings.Fields(line)[1:] // drop "fedtopic"
			out := filepath.Join(t.TempDir(), "out")
			for j := range args {
				switch {
				case args[j] == "demo/wordnet-glosses.jsonl":
					args[j] = demoCorpus
				case j > 0 && args[j-1] == "--out":
					args[j] = out
				}
			}
			ran++
			t.Run(fmt.Sprintf("%s-%d", c.Name(), i), func(t *testing.T) {
				_, stderr, err := runCmd(t, args...)
				if err != nil {
					t.Fatalf("fedtopic %s: %v; stderr:\n%s", strings.Join(args, " "), err, stderr)
				}
				if strings.Contains(stderr, "warning") {
					t.Errorf("fedtopic %s warned:\n%s", strings.Join(args, " "), stderr)
				}
				path := out
				if c.Name() == "simulate" {
					path = filepath.Join(out, "model")
				}
				m, err := topic.Load(path)
				if err != nil {
					t.Fatal(err)
				}
				// As in TestDefaultsOnDemo: at least 50 distinct words
				// among the topics' top ten.
				seen := map[int32]bool{}
				for _, ws := range m.TopWordIDs(10) {
					for _, w := range ws {
						seen[w] = true
					}
				}
				if len(seen) < 50 {
					t.Errorf("fedtopic %s: the topics' top ten words hold %d distinct words; want at least 50", strings.Join(args, " "), len(seen))
				}
			})
		}
	}
	if ran < 4 {
		t.Errorf("ran %d examples on the demo corpus; want train's and simulate's (at least 4)", ran)
	}
}

// TestVocabularyRoundTooLittleText checks that a corpus too small for the
// private vocabulary round is refused with the threshold and the flags that
// help, and leaves nothing behind.
func TestVocabularyRoundTooLittleText(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "fr.txt")
	if err := os.WriteFile(in, []byte("Quelle heure est-il\u202f? Il est midi\nBonjour le monde\nLe chat dort\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	_, stderr, err := runCmd(t, "simulate", "--corpus", in, "--stopwords", "none", "--topics", "2", "--out", out)
	if err == nil {
		t.Fatalf("simulate on three short documents succeeded; want the vocabulary round refused")
	}
	for _, want := range []string{"reaches 5", "--vocab-epsilon", "--vocab FILE"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q; want it to contain %q", stderr, want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a failed run left %s", out)
	}
}

// TestModelProvenancePrivacy checks that a simulated model states each
// party's whole spend once: the run's accounting, the vocabulary round
// included, with no second, partial tally beside it.
func TestModelProvenancePrivacy(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if _, stderr, err := runCmd(t, "simulate", "--algorithm", "ftm", "--corpus", demoCorpus, "--topics", "5", "--rounds", "1", "--local-iterations", "2", "--seed", "3", "--out", out); err != nil {
		t.Fatalf("simulate: %v; stderr:\n%s", err, stderr)
	}
	for _, path := range []string{"model", filepath.Join("parties", "p1.model")} {
		m, err := topic.Load(filepath.Join(out, path))
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Prov.Privacy) != 3 {
			t.Fatalf("%s: provenance privacy %+v; want one entry for each of 3 parties", path, m.Prov.Privacy)
		}
		for _, ps := range m.Prov.Privacy {
			if ps.Epsilon != 334 || ps.Unit != "document" || ps.Delta != 1e-6 {
				t.Errorf("%s: %s spent ε = %v, δ = %v per %s; want 334, 1e-06 per document", path, ps.Party, ps.Epsilon, ps.Delta, ps.Unit)
			}
		}
	}
}
