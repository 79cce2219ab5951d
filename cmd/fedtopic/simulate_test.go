package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/topic"
)

// simulateRecord reads dir/run.jsonl and returns its round lines and summary.
func simulateRecord(t *testing.T, dir string) ([]fed.RoundLine, fed.SummaryLine) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "run.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rounds []fed.RoundLine
	var sum fed.SummaryLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"type":"summary"`) {
			if err := json.Unmarshal(sc.Bytes(), &sum); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var l fed.RoundLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		rounds = append(rounds, l)
	}
	return rounds, sum
}

// TestSimulate runs the commands of the issue as written: a split corpus
// with the private vocabulary round, and one file per party with a shared
// vocabulary file. Each writes a loadable global model, local models and a
// run record with one line per round and bytes for every party.
func TestSimulate(t *testing.T) {
	tmp := t.TempDir()
	lines, err := os.ReadFile("testdata/three.txt")
	if err != nil {
		t.Fatal(err)
	}
	docs := strings.SplitAfter(strings.TrimSpace(string(lines)), "\n")
	var files []string
	for i := range 3 {
		p := filepath.Join(tmp, "p"+string(rune('1'+i))+".txt")
		if err := os.WriteFile(p, []byte(strings.Join(docs[i*len(docs)/3:(i+1)*len(docs)/3], "")), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	vocabFile := filepath.Join(tmp, "vocab.txt")
	if err := os.WriteFile(vocabFile, []byte(strings.Join(append(append(wordGroups[0], wordGroups[1]...), wordGroups[2]...), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		parties int
		report  bool // --report: DIR/report.html is written
	}{
		{name: "split with private vocabulary", parties: 3, report: true, args: []string{"--corpus", "testdata/three.txt", "--tokenizer", "whitespace",
			"--parties", "3", "--split", "sizes=1,2,3", "--vocab-epsilon", "8", "--vocab-l0", "4", "--report"}},
		{name: "files with shared vocabulary", parties: 3, args: []string{"--corpus", strings.Join(files, ","), "--split", "files",
			"--tokenizer", "whitespace", "--vocab", vocabFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"simulate", "--algorithm", "adlda", "--topics", "3", "--rounds", "15", "--seed", "4", "--out", out}, tt.args...)
			stdout, stderr, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("run(%q) = %v; stderr:\n%s", args, err, stderr)
			}
			if !strings.Contains(stdout, "wrote "+out) {
				t.Errorf("stdout %q; want it to say what was written", stdout)
			}
			reportPath := filepath.Join(out, "report.html")
			if !strings.Contains(stdout, "report: ") || !strings.Contains(stdout, reportPath) {
				t.Errorf("stdout %q; want it to end by saying where the report is (%s)", stdout, reportPath)
			}
			html, err := os.ReadFile(reportPath)
			if tt.report && (err != nil || !bytes.Contains(html, []byte("<svg"))) {
				t.Errorf("--report: %s holds %d bytes, err %v; want an HTML report with plots", reportPath, len(html), err)
			}
			if !tt.report && err == nil {
				t.Errorf("without --report, %s was written", reportPath)
			}
			m, err := topic.Load(filepath.Join(out, "model"))
			if err != nil {
				t.Fatalf("global model: %v", err)
			}
			if m.K != 3 || m.Prov.Method != "adlda" || m.Prov.Rounds != 15 || m.Prov.Seed != 4 {
				t.Errorf("model K %d, provenance %+v; want 3 topics of adlda, 15 rounds, seed 4", m.K, m.Prov)
			}
			for p := 1; p <= tt.parties; p++ {
				if _, err := topic.Load(filepath.Join(out, "parties", "p"+string(rune('0'+p))+".model")); err != nil {
					t.Errorf("local model of p%d: %v", p, err)
				}
			}
			rounds, sum := simulateRecord(t, out)
			if len(rounds) != 15 || sum.Rounds != 15 || len(sum.Bytes) != tt.parties {
				t.Fatalf("run record: %d round lines, summary rounds %d, bytes of %d parties; want 15, 15, %d", len(rounds), sum.Rounds, len(sum.Bytes), tt.parties)
			}
			for _, b := range rounds[len(rounds)-1].Bytes {
				if b.Up == 0 || b.Down == 0 {
					t.Errorf("last round bytes of %s: %+v; want traffic both ways", b.Party, b)
				}
			}
			if _, _, err := runCmd(t, "export", "--model", filepath.Join(out, "model"), "--format", "json", "--out", filepath.Join(out, "m.json")); err != nil {
				t.Errorf("export of the simulated model: %v", err)
			}
		})
	}
}

func TestSimulateUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "no out", args: []string{"--corpus", "testdata/three.txt", "--topics", "3"}, want: "--out is required"},
		{name: "no topics", args: []string{"--corpus", "testdata/three.txt", "--out", "x"}, want: "--topics 0"},
		{name: "unknown algorithm", args: []string{"--corpus", "testdata/three.txt", "--topics", "3", "--out", "x", "--algorithm", "magic"}, want: `unknown; choose one of adlda`},
		{name: "parties disagree", args: []string{"--corpus", "testdata/three.txt", "--topics", "3", "--out", "x", "--split", "sizes=1,1", "--parties", "3"}, want: "gives 2 parties, but --parties is 3"},
		{name: "bad params", args: []string{"--corpus", "testdata/three.txt", "--topics", "3", "--out", "x", "--params", "[1]"}, want: "--params"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, err := runCmd(t, append([]string{"simulate"}, tt.args...)...)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(stderr, tt.want) {
				t.Errorf("simulate %q: %v, stderr %q; want a usage error mentioning %q", tt.args, err, stderr, tt.want)
			}
		})
	}
}

func TestCertsCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if _, stderr, err := runCmd(t, "certs", "--out", dir, "--parties", "p1,p2,p3"); err != nil {
		t.Fatalf("certs: %v\n%s", err, stderr)
	}
	for _, f := range []string{"ca.pem", "coordinator.pem", "coordinator-key.pem", "p1.pem", "p1-key.pem", "p2.pem", "p2-key.pem", "p3.pem", "p3-key.pem"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("certs did not write %s: %v", f, err)
		}
	}
	_, stderr, err := runCmd(t, "certs", "--out", dir, "--parties", "p1,p1")
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(stderr, "duplicate") {
		t.Errorf("certs with a duplicate party: %v, %q; want a usage error", err, stderr)
	}
}
