package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/topic"
)

// runCmd runs the command line args and returns stdout, stderr and the error.
func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

// trainThree trains a 3-topic model on testdata/three.txt, whose documents
// are drawn from three disjoint word groups (fruit, car parts, instruments).
func trainThree(t *testing.T, extra ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "three.model")
	args := append([]string{"train", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace",
		"--topics", "3", "--iterations", "200", "--seed", "5", "--workers", "2", "--out", out}, extra...)
	if _, stderr, err := runCmd(t, args...); err != nil {
		t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
	}
	return out
}

var wordGroups = [][]string{
	{"apple", "banana", "cherry", "grape", "lemon", "mango", "peach", "pear"},
	{"engine", "wheel", "brake", "gear", "clutch", "piston", "tire", "axle"},
	{"violin", "piano", "cello", "flute", "drum", "guitar", "harp", "oboe"},
}

// checkTopicsSeparate asserts that each topic's top 5 words come from one
// group and that every group has a topic.
func checkTopicsSeparate(t *testing.T, m *topic.Model) {
	t.Helper()
	seen := map[int]bool{}
	for k := range m.K {
		g := -1
		for _, wp := range m.TopWords(k, 5) {
			wg := slices.IndexFunc(wordGroups, func(ws []string) bool { return slices.Contains(ws, wp.Word) })
			if g == -1 {
				g = wg
			}
			if wg != g {
				t.Errorf("topic %d mixes word groups: %v", k, m.TopWords(k, 5))
				break
			}
		}
		seen[g] = true
	}
	if len(seen) != len(wordGroups) {
		t.Errorf("topics cover word groups %v; want all %d", seen, len(wordGroups))
	}
}

func TestTrainRecoversTopics(t *testing.T) {
	for _, model := range []string{"lda", "slda", "pctd", "nmf"} {
		t.Run(model, func(t *testing.T) {
			args := []string{"--model", model}
			switch model {
			case "pctd":
				args = append(args, "--iterations", "30") // EM iterations
			case "nmf":
				args = append(args, "--iterations", "200") // at most; HALS stops when settled
			}
			path := trainThree(t, args...)
			m, err := topic.Load(path)
			if err != nil {
				t.Fatalf("topic.Load(%s) = %v", path, err)
			}
			if m.K != 3 || m.V != 24 || m.Prov.Seed != 5 {
				t.Errorf("model K=%d V=%d seed=%d; want 3, 24, 5", m.K, m.V, m.Prov.Seed)
			}
			checkTopicsSeparate(t, m)
		})
	}
}

// TestTrainNMFSGD checks that train --model nmf-sgd writes an NMF model
// and records how: SGD NMF from a random start may merge two of the three
// word groups of the test corpus (a local minimum), so the test asserts
// the model and its provenance, not separated topics; the fednmf package
// tests the solver itself.
func TestTrainNMFSGD(t *testing.T) {
	path := trainThree(t, "--model", "nmf-sgd", "--iterations", "20", "--mi-lambda", "0.1")
	m, err := topic.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m.K != 3 || m.V != 24 || m.Prov.Method != "nmf-sgd" || m.Prov.Params["mi_lambda"] != "0.1" || m.Prov.Params["iterations"] != "20" {
		t.Errorf("model K=%d V=%d provenance %+v; want 3 topics over 24 words, nmf-sgd, λ 0.1, 20 iterations", m.K, m.V, m.Prov)
	}
	if _, stderr, err := runCmd(t, "train", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace", "--topics", "3", "--model", "nmf",
		"--mi-lambda", "0.1", "--out", filepath.Join(t.TempDir(), "m")); err == nil || !strings.Contains(stderr, "--mi-lambda applies to --model nmf-sgd only") {
		t.Errorf("train --model nmf --mi-lambda: %v, %q; want a usage error", err, stderr)
	}
}

// TestTrainAverage checks that --average sets how many final sweeps the
// model averages, that the default is the last tenth, and that the
// provenance says which.
func TestTrainAverage(t *testing.T) {
	load := func(path string) *topic.Model {
		t.Helper()
		m, err := topic.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	def, last, five := load(trainThree(t)), load(trainThree(t, "--average", "1")), load(trainThree(t, "--average", "5"))
	for _, c := range []struct {
		m    *topic.Model
		want string
	}{{def, "20"}, {last, "1"}, {five, "5"}} {
		if got := c.m.Prov.Params["average"]; got != c.want {
			t.Errorf("provenance average = %q; want %q", got, c.want)
		}
		checkTopicsSeparate(t, c.m)
	}
	if slices.Equal(def.Phi, last.Phi) || slices.Equal(def.Phi, five.Phi) {
		t.Error("averaging over 20, 5 and 1 sweeps gave the same Φ; want averages of different states")
	}
}

func TestTrainDeterministicAcrossWorkers(t *testing.T) {
	a, err := os.ReadFile(trainThree(t, "--workers", "1"))
	if err != nil {
		t.Fatal(err)
	}
	ma, _ := topic.Read(bytes.NewReader(a))
	b, _ := os.ReadFile(trainThree(t, "--workers", "3"))
	mb, _ := topic.Read(bytes.NewReader(b))
	if !slices.Equal(ma.Phi, mb.Phi) {
		t.Error("train with --workers 1 and --workers 3 gave different Φ; want identical models")
	}
}

func TestTrainFixedVocab(t *testing.T) {
	dir := t.TempDir()
	vf := filepath.Join(dir, "vocab.txt")
	// Two words the corpus uses and one it never does.
	if err := os.WriteFile(vf, []byte("apple\nengine\nzeppelin\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "m")
	_, stderr, err := runCmd(t, "train", "--corpus", "testdata/three.txt", "--tokenizer", "whitespace",
		"--topics", "2", "--iterations", "20", "--seed", "1", "--vocab", vf, "--out", out)
	if err != nil {
		t.Fatalf("train --vocab: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "outside the vocabulary dropped") {
		t.Errorf("stderr does not report dropped tokens:\n%s", stderr)
	}
	m, err := topic.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Vocab, []string{"apple", "engine", "zeppelin"}) {
		t.Fatalf("vocabulary = %v; want the file's, in its order", m.Vocab)
	}
	for k := range m.K {
		if p := m.Row(k)[2]; p <= 0 {
			t.Errorf("p(zeppelin|%d) = %v; an unused vocabulary word keeps its prior mass", k, p)
		}
	}
}

func TestExportJSON(t *testing.T) {
	path := trainThree(t)
	out := filepath.Join(t.TempDir(), "m.json")
	if _, stderr, err := runCmd(t, "export", "--model", path, "--format", "json", "--out", out); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Vocab     []string    `json:"vocab"`
		TopicWord [][]float64 `json:"topic_word"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("export is not JSON: %v", err)
	}
	m, _ := topic.Load(path)
	if !slices.Equal(got.Vocab, m.Vocab) || len(got.TopicWord) != m.K {
		t.Fatalf("export has %d words, %d topics; want %d, %d", len(got.Vocab), len(got.TopicWord), m.V, m.K)
	}
	for k, row := range got.TopicWord {
		if !slices.Equal(row, m.Row(k)) {
			t.Errorf("topic_word[%d] differs from the model's row", k)
		}
	}
}

func TestTopicsInferEval(t *testing.T) {
	path := trainThree(t)
	stdout, _, err := runCmd(t, "topics", "--model", path, "--n", "3")
	if err != nil || strings.Count(stdout, "\n") != 3 {
		t.Errorf("topics = %q, %v; want 3 lines", stdout, err)
	}
	stdout, _, err = runCmd(t, "infer", "--model", path, "--corpus", "testdata/three.txt", "--seed", "2")
	if err != nil {
		t.Fatalf("infer: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 150 {
		t.Fatalf("infer printed %d lines; want 150", len(lines))
	}
	var doc struct {
		ID    string    `json:"id"`
		Theta []float64 `json:"theta"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &doc); err != nil || len(doc.Theta) != 3 {
		t.Fatalf("infer line %q: %v; want 3 topic proportions", lines[0], err)
	}
	stdout, _, err = runCmd(t, "eval", "--model", path, "--corpus", "testdata/three.txt", "--json")
	if err != nil {
		t.Fatalf("eval: %v", err)
	}
	var rep struct {
		Perplexity struct{ Perplexity float64 } `json:"perplexity"`
		Diversity  float64                      `json:"topic_diversity"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, stdout)
	}
	// The 24 words are equally frequent, so a model without topic structure
	// scores 24. Each document draws 90% of its words from the 8 words of
	// its group: the true θ and Φ give about exp(0.9·ln 8.9 + 0.1·ln 80) ≈ 11;
	// θ fitted on 10 observed words under the prior α = 5/3 is flatter, which
	// costs a few points (about 13 by the same arithmetic with θ ≈ 0.68).
	if p := rep.Perplexity.Perplexity; p < 10 || p > 16 {
		t.Errorf("perplexity = %v; want between 10 and 16 (24 without topic structure)", p)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.txt", "\n\n")
	badJSON := write("bad.jsonl", "{\"text\": \"fine words here\"}\nnot json\n")
	noText := write("notext.jsonl", "{\"id\": \"a\"}\n")
	badUTF8 := write("bad.txt", "good line\nbad \xff line\n")
	binary := write("bin.txt", "ab\x00\x01\x02")
	model := trainThree(t)
	raw, _ := os.ReadFile(model)
	truncated := write("trunc.model", string(raw[:len(raw)/2]))
	notModel := write("not.model", "hello")
	out := filepath.Join(dir, "out.model")

	tests := []struct {
		name     string
		args     []string
		usage    bool     // want exit code 2
		contains []string // in the error message
	}{
		{name: "no topics", args: []string{"train", "--corpus", "testdata/three.txt", "--out", out}, usage: true, contains: []string{"--topics"}},
		{name: "K zero", args: []string{"train", "--corpus", "testdata/three.txt", "--topics", "0", "--out", out}, usage: true, contains: []string{"--topics 0"}},
		{name: "no out", args: []string{"train", "--corpus", "testdata/three.txt", "--topics", "2"}, usage: true, contains: []string{"--out"}},
		{name: "unknown flag", args: []string{"train", "--bogus"}, usage: true, contains: []string{"bogus"}},
		{name: "bad seed", args: []string{"train", "--corpus", "testdata/three.txt", "--topics", "2", "--seed", "x", "--out", out}, usage: true, contains: []string{"--seed"}},
		{name: "average beyond the iterations", args: []string{"train", "--corpus", "testdata/three.txt", "--topics", "2", "--iterations", "10", "--average", "11", "--out", out}, usage: true, contains: []string{"--average 11", "10 iterations"}},
		{name: "negative average", args: []string{"train", "--corpus", "testdata/three.txt", "--topics", "2", "--average", "-1", "--out", out}, usage: true, contains: []string{"--average -1"}},
		{name: "empty corpus", args: []string{"train", "--corpus", empty, "--topics", "2", "--out", out}, contains: []string{"empty.txt"}},
		{name: "missing file", args: []string{"train", "--corpus", filepath.Join(dir, "nope.txt"), "--topics", "2", "--out", out}, contains: []string{"nope.txt"}},
		{name: "not JSON", args: []string{"train", "--corpus", badJSON, "--topics", "2", "--out", out}, contains: []string{"bad.jsonl:2"}},
		{name: "no text field", args: []string{"train", "--corpus", noText, "--topics", "2", "--out", out}, contains: []string{"notext.jsonl:1", "text"}},
		{name: "invalid UTF-8", args: []string{"train", "--corpus", badUTF8, "--topics", "2", "--out", out}, contains: []string{"bad.txt:2", "UTF-8"}},
		{name: "binary", args: []string{"train", "--corpus", binary, "--topics", "2", "--out", out}, contains: []string{"bin.txt"}},
		{name: "truncated model", args: []string{"topics", "--model", truncated}, contains: []string{"trunc.model", "truncated"}},
		{name: "not a model", args: []string{"export", "--model", notModel, "--format", "json", "--out", out}, contains: []string{"not.model", "not a fedtopic model"}},
		{name: "export format", args: []string{"export", "--model", model, "--format", "xml", "--out", out}, usage: true, contains: []string{"xml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, tt.args...)
			if err == nil {
				t.Fatalf("run(%q) succeeded; want an error", tt.args)
			}
			var ue usageError
			if got := errors.As(err, &ue); got != tt.usage {
				t.Errorf("run(%q) usage error = %v; want %v (err %v)", tt.args, got, tt.usage, err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(stderr, s) {
					t.Errorf("run(%q) stderr = %q; want it to mention %q", tt.args, stderr, s)
				}
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("run(%q) left %s behind; a failed command writes nothing", tt.args, out)
			}
		})
	}
}

func TestSkipInvalid(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.txt")
	os.WriteFile(p, []byte("apple banana\nbad \xff line\ncherry grape\n"), 0o644)
	_, stderr, err := runCmd(t, "train", "--corpus", p, "--tokenizer", "whitespace", "--topics", "2",
		"--iterations", "5", "--seed", "1", "--skip-invalid", "--out", filepath.Join(dir, "m"))
	if err != nil {
		t.Fatalf("train --skip-invalid: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "1 documents with invalid UTF-8 skipped") {
		t.Errorf("stderr = %q; want it to count the skipped document", stderr)
	}
}

// TestCPUProfile checks that --cpuprofile writes a profile go tool pprof
// reads (a gzip-compressed protocol buffer) for a command that fails as
// well as for one that succeeds, and that a profile path that cannot be
// created is an error naming it, before the command runs.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	model := trainThree(t)
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"topics", []string{"topics", "--model", model}, false},
		{"failing command", []string{"topics", "--model", filepath.Join(dir, "missing.model")}, true},
	} {
		path := filepath.Join(dir, tc.name+".prof")
		_, stderr, err := runCmd(t, append([]string{"--cpuprofile", path}, tc.args...)...)
		if (err != nil) != tc.wantErr {
			t.Fatalf("%s: error %v, want one: %v; stderr:\n%s", tc.name, err, tc.wantErr, stderr)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: the profile is not gzip data (%d bytes)", tc.name, len(b))
		}
	}
	bad := filepath.Join(dir, "no-such-dir", "x.prof")
	out := filepath.Join(dir, "never.json")
	_, _, err := runCmd(t, "--cpuprofile", bad, "export", "--model", model, "--format", "json", "--out", out)
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("unwritable profile: error %v, want one naming %s", err, bad)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command ran although its profile could not be created (stat %s: %v)", out, err)
	}
}
