package report

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

var update = flag.Bool("update", false, "rewrite golden files")

// outline reduces a report to its structure: one line per element with
// its id and class, the text of headings, table cells, terms and
// paragraphs, and for every plot its data-points count and the text it
// draws (axis labels and tick labels). Drawing details — paths,
// coordinates, styles — are left out, so the golden file shows what a
// reader sees, not how gonum draws it.
func outline(t *testing.T, page []byte) string {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(page))
	var b strings.Builder
	depth := 0
	var stack []string
	inPlot, inStyle, inSwatch := 0, false, 0
	ids := map[string]bool{}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if depth != 0 {
				t.Errorf("outline: %d elements left open at the end of the page", depth)
			}
			return b.String()
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			name := tok.Data
			attr := func(k string) string {
				for _, a := range tok.Attr {
					if a.Key == k {
						return a.Val
					}
				}
				return ""
			}
			void := tt == html.SelfClosingTagToken || isVoid(name)
			if id := attr("id"); id != "" {
				if ids[id] {
					t.Errorf("outline: id %q appears twice", id)
				}
				ids[id] = true
			}
			if h := attr("href"); strings.HasPrefix(h, "#") {
				defer func() {
					if !ids[h[1:]] {
						t.Errorf("outline: link to %s, which no element has", h)
					}
				}()
			}
			switch {
			case inSwatch > 0:
			case name == "svg" && strings.Contains(attr("class"), "swatch"):
				fmt.Fprintf(&b, "%s<svg.swatch>\n", strings.Repeat("  ", depth))
				inSwatch++
			case inPlot > 0:
			case name == "svg":
				fmt.Fprintf(&b, "%s<svg.plot data-points=%s aria-label=%q>\n", strings.Repeat("  ", depth), attr("data-points"), attr("aria-label"))
				inPlot++
			case name == "meta" || name == "style" || name == "title":
				fmt.Fprintf(&b, "%s<%s%s>\n", strings.Repeat("  ", depth), name, metaAttrs(tok))
			default:
				line := "<" + name
				if id := attr("id"); id != "" {
					line += " #" + id
				}
				if c := attr("class"); c != "" {
					line += " ." + c
				}
				if h := attr("href"); h != "" {
					line += " href=" + h
				}
				fmt.Fprintf(&b, "%s%s>\n", strings.Repeat("  ", depth), line)
			}
			if name == "style" {
				inStyle = true
			}
			if !void {
				if name == "svg" && inPlot > 0 && len(stack) > 0 && stack[len(stack)-1] == "svg" {
					inPlot++
				}
				stack = append(stack, name)
				depth++
			}
		case html.EndTagToken:
			tok := z.Token()
			if len(stack) == 0 || stack[len(stack)-1] != tok.Data {
				t.Fatalf("outline: </%s> closes <%s>", tok.Data, strings.Join(stack, "><"))
			}
			stack = stack[:len(stack)-1]
			depth--
			switch tok.Data {
			case "svg":
				if inSwatch > 0 {
					inSwatch--
				} else if inPlot > 0 {
					inPlot--
				}
			case "style":
				inStyle = false
			}
		case html.TextToken:
			text := strings.Join(strings.Fields(string(z.Text())), " ")
			if text == "" || inStyle || inSwatch > 0 {
				continue
			}
			if inPlot > 0 && (len(stack) == 0 || stack[len(stack)-1] != "text") {
				continue
			}
			fmt.Fprintf(&b, "%s%q\n", strings.Repeat("  ", depth), text)
		}
	}
}

// isVoid reports HTML elements without an end tag.
func isVoid(name string) bool {
	switch name {
	case "meta", "link", "br", "hr", "img", "input":
		return true
	}
	return false
}

// metaAttrs lists a head element's attributes in order.
func metaAttrs(tok html.Token) string {
	var parts []string
	for _, a := range tok.Attr {
		parts = append(parts, fmt.Sprintf(" %s=%q", a.Key, a.Val))
	}
	return strings.Join(parts, "")
}

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("report outline differs from %s at line %d:\ngot  %s\nwant %s\n(run go test -update and review the diff if the change is intended)", path, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("report outline has %d lines, %s has %d (run go test -update and review the diff if the change is intended)", len(gl), path, len(wl))
	}
}

// writeReport renders the report of dirs.
func writeReport(t *testing.T, dirs []string, opts Options) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(context.Background(), &b, dirs, opts); err != nil {
		t.Fatalf("Write(%v): %v", dirs, err)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name     string
		fixtures map[string]fixture // run name → fixture, written in name order
		opts     Options
	}{
		{
			name: "one FTM run",
			fixtures: map[string]fixture{
				"ftm": {Parties: 3, Rounds: 4, Topics: 4, Epsilon: 8, Seed: 1, Failed: 1, PartyModels: true, Baselines: true, Merges: true, Experiment: true},
			},
			opts: Options{Title: "Three hospitals", TopWords: 5},
		},
		{
			name: "privacy sweep",
			fixtures: map[string]fixture{
				"a-eps4":  {Parties: 2, Rounds: 3, Topics: 3, Epsilon: 4, Seed: 2},
				"b-eps16": {Parties: 2, Rounds: 3, Topics: 3, Epsilon: 16, Seed: 3},
				"c-adlda": {Algorithm: "adlda", Parties: 2, Rounds: 3, Topics: 3, Seed: 4},
			},
			opts: Options{TopWords: 3},
		},
		{
			name: "stopped run",
			fixtures: map[string]fixture{
				"stopped": {Parties: 2, Rounds: 2, Topics: 2, Epsilon: 1, Seed: 5, NoSummary: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			var dirs []string
			for _, name := range sortedKeys(tt.fixtures) {
				dir := filepath.Join(root, name)
				writeFixture(t, dir, tt.fixtures[name])
				dirs = append(dirs, dir)
			}
			page := writeReport(t, dirs, tt.opts)
			if bytes.Contains(page, []byte(root)) {
				t.Errorf("the report contains the directory path %s; it must name runs only by their short names", root)
			}
			golden(t, strings.ReplaceAll(tt.name, " ", "-")+".golden", outline(t, page))
		})
	}
}

// TestWriteDeterministic checks that two reports of the same runs are the
// same bytes, and that a parent directory stands for its runs.
func TestWriteDeterministic(t *testing.T) {
	root := t.TempDir()
	writeFixture(t, filepath.Join(root, "sweep", "eps2"), fixture{Parties: 3, Rounds: 5, Topics: 4, Epsilon: 2, Seed: 1, Baselines: true})
	writeFixture(t, filepath.Join(root, "sweep", "eps8"), fixture{Parties: 3, Rounds: 5, Topics: 4, Epsilon: 8, Seed: 2, Baselines: true})
	one := writeReport(t, []string{filepath.Join(root, "sweep", "eps2"), filepath.Join(root, "sweep", "eps8")}, Options{})
	two := writeReport(t, []string{filepath.Join(root, "sweep", "eps2"), filepath.Join(root, "sweep", "eps8")}, Options{})
	if !bytes.Equal(one, two) {
		t.Errorf("two reports of the same runs differ")
	}
	parent := writeReport(t, []string{filepath.Join(root, "sweep")}, Options{})
	if !bytes.Equal(one, parent) {
		t.Errorf("the report of the sweep's parent directory differs from the report of its two runs")
	}
	if !bytes.Contains(one, []byte(`id="privacy-utility"`)) {
		t.Errorf("two runs with ε 2 and 8: no privacy–utility section")
	}
}

func TestWriteErrors(t *testing.T) {
	root := t.TempDir()
	good := filepath.Join(root, "good")
	writeFixture(t, good, fixture{Parties: 2, Rounds: 2, Topics: 2, Seed: 1})
	file := filepath.Join(root, "file.txt")
	empty := filepath.Join(root, "empty")
	badLine := filepath.Join(root, "bad-line")
	badSummary := filepath.Join(root, "bad-summary")
	badModel := filepath.Join(root, "bad-model")
	badExp := filepath.Join(root, "bad-exp")
	for _, d := range []string{empty, badLine, badSummary, badModel, badExp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path, s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(file, "not a directory")
	write(filepath.Join(badLine, RecordFile), "{\"type\": \"round\", \"round\": 1, \"committed\": true}\n{\"round\": 2, oops}\n")
	write(filepath.Join(badSummary, RecordFile), "{\"type\": \"round\", \"round\": 1, \"committed\": true}\n{\"type\": \"summary\", \"rounds\": \"many\"}\n")
	write(filepath.Join(badModel, RecordFile), "{\"type\": \"round\", \"round\": 1, \"committed\": true}\n")
	write(filepath.Join(badModel, GlobalModelFile), "not a model")
	write(filepath.Join(badExp, "e2.jsonl"), "{\"epsilon\": 8, \"perplexity\": 500}\n[1, 2]\n")
	tests := []struct {
		name string
		dirs []string
		opts Options
		want string
	}{
		{name: "no directories", want: "no run directories"},
		{name: "missing", dirs: []string{filepath.Join(root, "nope")}, want: "no such file"},
		{name: "a file", dirs: []string{file}, want: "is not a directory"},
		{name: "nothing to report", dirs: []string{empty}, want: "has no run.jsonl"},
		{name: "bad JSON line", dirs: []string{good, badLine}, want: "run.jsonl line 2"},
		{name: "summary of the wrong shape", dirs: []string{badSummary}, want: `line 2: summary: json: cannot unmarshal string`},
		{name: "corrupt model", dirs: []string{badModel}, want: "model"},
		{name: "bad experiment line", dirs: []string{badExp}, want: "e2.jsonl line 2: not a JSON object"},
		{name: "bad options", dirs: []string{good}, opts: Options{TopWords: -1, Title: "a\nb"}, want: "top_words = -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Write(context.Background(), &b, tt.dirs, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Write(%v) = %v; want an error containing %q", tt.dirs, err, tt.want)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string // substrings of the error; none = valid
	}{
		{name: "zero value", opts: Options{}},
		{name: "set", opts: Options{Title: "Banks", TopWords: 50}},
		{name: "every problem", opts: Options{Title: "a\nb", TopWords: 51}, want: []string{"top_words = 51", "single line"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if (err != nil) != (len(tt.want) > 0) {
				t.Fatalf("Validate() = %v; want error %v", err, tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v; want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	writeFixture(t, run, fixture{Parties: 2, Rounds: 2, Topics: 2, Seed: 1})
	out := filepath.Join(root, "report.html")
	if err := WriteFile(context.Background(), out, []string{run}, Options{}); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := writeReport(t, []string{run}, Options{}); !bytes.Equal(got, want) {
		t.Errorf("WriteFile wrote %d bytes that differ from Write's %d", len(got), len(want))
	}
	// A failed report leaves the existing file as it was.
	if err := WriteFile(context.Background(), out, []string{filepath.Join(root, "nope")}, Options{}); err == nil {
		t.Fatalf("WriteFile of a missing run directory succeeded")
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, got) {
		t.Errorf("a failed WriteFile changed the existing report")
	}
}

// TestReportSize checks the figure of issue 6 on its size half: the report
// of a 10-round, 5-party run with party models, baselines and an
// experiment weighs under 2 MB (BenchmarkWrite measures the time).
func TestReportSize(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	writeFixture(t, dir, fixture{Parties: 5, Rounds: 10, Topics: 50, Epsilon: 8, Seed: 1, Failed: 1, PartyModels: true, Baselines: true, Merges: true, Experiment: true})
	page := writeReport(t, []string{dir}, Options{})
	const limit = 2 << 20
	if len(page) >= limit {
		t.Errorf("report of a 10-round, 5-party run: %d bytes, want under %d", len(page), limit)
	}
	t.Logf("report of a 10-round, 5-party run with K = 50: %d bytes", len(page))
}

// BenchmarkWrite measures the time to write the report of a 10-round,
// 5-party run (issue 6: under 2 s), from reading the files to the last
// byte.
func BenchmarkWrite(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	writeFixture(b, dir, fixture{Parties: 5, Rounds: 10, Topics: 50, Epsilon: 8, Seed: 1, Failed: 1, PartyModels: true, Baselines: true, Merges: true, Experiment: true})
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Write(context.Background(), &buf, []string{dir}, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/report")
}
