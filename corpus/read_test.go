package corpus_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/google/go-cmp/cmp"
)

// writeFile writes content to name inside dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// readAll opens path and returns its documents and stats.
func readAll(t *testing.T, path string, opts corpus.ReadOptions) ([]corpus.Document, corpus.ReadStats, error) {
	t.Helper()
	r, err := corpus.Open(path, opts)
	if err != nil {
		return nil, corpus.ReadStats{}, err
	}
	defer r.Close()
	var docs []corpus.Document
	for d, err := range r.All() {
		if err != nil {
			return docs, r.Stats(), err
		}
		docs = append(docs, d)
	}
	return docs, r.Stats(), nil
}

func TestReadFiles(t *testing.T) {
	tests := []struct {
		name    string
		file    string // file name (sets the detected format)
		content string
		opts    corpus.ReadOptions
		want    []corpus.Document // Source is filled in by the test
		stats   corpus.ReadStats  // Bytes is not compared
	}{
		{
			name:    "lines",
			file:    "a.txt",
			content: "first doc\n\n  \t\nsecond doc\r\nthird",
			want: []corpus.Document{
				{ID: "a.txt:1", Text: "first doc", Line: 1},
				{ID: "a.txt:4", Text: "second doc", Line: 4},
				{ID: "a.txt:5", Text: "third", Line: 5},
			},
			stats: corpus.ReadStats{Documents: 3, SkippedEmpty: 2},
		},
		{
			name:    "lines with byte-order mark",
			file:    "bom.txt",
			content: "\xEF\xBB\xBFhello\n",
			want:    []corpus.Document{{ID: "bom.txt:1", Text: "hello", Line: 1}},
			stats:   corpus.ReadStats{Documents: 1},
		},
		{
			name: "jsonl",
			file: "b.jsonl",
			content: `{"id": "x1", "label": "sports", "text": "a game"}` + "\n" +
				`{"text": "no id", "extra": [1, 2]}` + "\n" +
				"\n" +
				`{"id": 17, "label": 3, "text": "numeric id"}` + "\n" +
				`{"id": "e", "text": "   "}` + "\n" +
				`{"id": null, "label": null, "text": "nulls"}`,
			want: []corpus.Document{
				{ID: "x1", Label: "sports", Text: "a game", Line: 1},
				{ID: "b.jsonl:2", Text: "no id", Line: 2},
				{ID: "17", Label: "3", Text: "numeric id", Line: 4},
				{ID: "b.jsonl:6", Text: "nulls", Line: 6},
			},
			stats: corpus.ReadStats{Documents: 4, SkippedEmpty: 2},
		},
		{
			name:    "json extension is jsonl",
			file:    "c.JSON",
			content: `{"text": "one"}`,
			want:    []corpus.Document{{ID: "c.JSON:1", Text: "one", Line: 1}},
			stats:   corpus.ReadStats{Documents: 1},
		},
		{
			name:    "format override",
			file:    "d.jsonl",
			content: `{"text": "raw"}`,
			opts:    corpus.ReadOptions{Format: corpus.FormatLines},
			want:    []corpus.Document{{ID: "d.jsonl:1", Text: `{"text": "raw"}`, Line: 1}},
			stats:   corpus.ReadStats{Documents: 1},
		},
		{
			name:    "skip invalid UTF-8",
			file:    "e.txt",
			content: "good\nbad \xff byte\nalso good\n",
			opts:    corpus.ReadOptions{SkipInvalid: true},
			want: []corpus.Document{
				{ID: "e.txt:1", Text: "good", Line: 1},
				{ID: "e.txt:3", Text: "also good", Line: 3},
			},
			stats: corpus.ReadStats{Documents: 2, SkippedInvalid: 1},
		},
		{
			name:    "skip invalid UTF-8 in jsonl",
			file:    "f.jsonl",
			content: "{\"text\": \"bad \xc3\x28\"}\n{\"text\": \"ok\"}\n",
			opts:    corpus.ReadOptions{SkipInvalid: true},
			want:    []corpus.Document{{ID: "f.jsonl:2", Text: "ok", Line: 2}},
			stats:   corpus.ReadStats{Documents: 1, SkippedInvalid: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := writeFile(t, dir, tt.file, tt.content)
			got, st, err := readAll(t, p, tt.opts)
			if err != nil {
				t.Fatalf("read %s: %v", tt.file, err)
			}
			for i := range tt.want {
				tt.want[i].Source = p
				tt.want[i].ID = strings.Replace(tt.want[i].ID, tt.file+":", p+":", 1)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("documents differ (-want +got):\n%s", diff)
			}
			st.Bytes = 0
			if st != tt.stats {
				t.Errorf("Stats() = %+v; want %+v", st, tt.stats)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		content string
		is      error  // errors.Is target, or nil
		msg     string // substring of the message, after the file path
	}{
		{name: "not JSON", file: "a.jsonl", content: `{"text": "ok"}` + "\n" + `{"text": "broken` + "\n", is: corpus.ErrSyntax, msg: ":2: bad JSONL record: not valid JSON"},
		{name: "not an object", file: "a.jsonl", content: `["text"]`, is: corpus.ErrSyntax, msg: ":1: bad JSONL record: not a JSON object"},
		{name: "plain text in jsonl", file: "a.jsonl", content: "hello world", is: corpus.ErrSyntax, msg: ":1: bad JSONL record: not a JSON object"},
		{name: "missing text", file: "a.jsonl", content: "\n\n" + `{"id": "x", "body": "hi"}`, is: corpus.ErrSyntax, msg: `:3: bad JSONL record: no "text" field`},
		{name: "null text", file: "a.jsonl", content: `{"text": null}`, is: corpus.ErrSyntax, msg: `:1: bad JSONL record: no "text" field`},
		{name: "text not a string", file: "a.jsonl", content: `{"text": 5}`, is: corpus.ErrSyntax, msg: `:1: bad JSONL record: "text" must be a string, not number`},
		{name: "id an array", file: "a.jsonl", content: `{"text": "t", "id": [1]}`, is: corpus.ErrSyntax, msg: `:1: bad JSONL record: "id" must be a string or a number`},
		{name: "trailing data", file: "a.jsonl", content: `{"text": "t"} {"text": "u"}`, is: corpus.ErrSyntax, msg: ":1: bad JSONL record: not valid JSON"},
		{name: "invalid UTF-8 in lines", file: "a.txt", content: "ok\nok\nab\xffcd\n", is: corpus.ErrInvalidUTF8, msg: ":3: invalid UTF-8 at byte 3 of the line"},
		{name: "invalid UTF-8 in jsonl", file: "a.jsonl", content: "{\"text\": \"\xe2\x82\"}", is: corpus.ErrInvalidUTF8, msg: ":1: invalid UTF-8 at byte 11 of the line"},
		{name: "binary lines", file: "a.txt", content: "text\nmore\x00\x01\x02", is: corpus.ErrBinary, msg: ":2: binary data"},
		{name: "binary jsonl", file: "a.jsonl", content: "\x00\x00\x00", is: corpus.ErrBinary, msg: ":1: binary data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), tt.file, tt.content)
			_, _, err := readAll(t, p, corpus.ReadOptions{})
			if err == nil {
				t.Fatalf("read %q: got no error; want %v", tt.content, tt.is)
			}
			if !errors.Is(err, tt.is) {
				t.Errorf("read %q: error %v; want one wrapping %v", tt.content, err, tt.is)
			}
			var ie *corpus.InputError
			if !errors.As(err, &ie) || ie.File != p {
				t.Errorf("read %q: error %v is not an *InputError naming %s", tt.content, err, p)
			}
			if want := "corpus: " + p + tt.msg; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("read %q: error %q; want prefix %q", tt.content, err, want)
			}
		})
	}
}

func TestReaderErrorIsSticky(t *testing.T) {
	r, err := corpus.NewReader(strings.NewReader("{\"text\": 1}\n{\"text\": \"ok\"}\n"), "s.jsonl", corpus.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err2 != err1 {
		t.Errorf("Next() errors = %v, then %v; want the same error twice", err1, err2)
	}
}

func TestReadDir(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "b.txt", "second\n\nparagraph two\n")
	writeFile(t, dir, "a.txt", "first")
	writeFile(t, dir, "c.TXT", "  \n")
	writeFile(t, dir, "notes.md", "ignored")
	if err := os.Mkdir(filepath.Join(dir, "sub.txt"), 0o755); err != nil {
		t.Fatal(err)
	}
	docs, st, err := readAll(t, dir, corpus.ReadOptions{})
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	want := []corpus.Document{
		{ID: "a.txt", Text: "first", Source: filepath.Join(dir, "a.txt")},
		{ID: "b.txt", Text: "second\n\nparagraph two\n", Source: filepath.Join(dir, "b.txt")},
	}
	if diff := cmp.Diff(want, docs); diff != "" {
		t.Errorf("documents differ (-want +got):\n%s", diff)
	}
	if st.Documents != 2 || st.SkippedEmpty != 1 {
		t.Errorf("Stats() = %+v; want 2 documents, 1 empty", st)
	}
}

func TestReadDirErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		opts  corpus.ReadOptions
		is    error
		msg   string // substring of the message
	}{
		{name: "no txt files", files: map[string]string{"a.md": "x"}, is: corpus.ErrNoDocuments, msg: "no .txt files"},
		{name: "invalid UTF-8 names line", files: map[string]string{"a.txt": "ok", "b.txt": "line one\nline two\nbad \xfe here"}, is: corpus.ErrInvalidUTF8, msg: "b.txt:3: invalid UTF-8 at byte 5 of the line"},
		{name: "binary file", files: map[string]string{"x.txt": "PK\x03\x04\x00\x00"}, is: corpus.ErrBinary, msg: "x.txt:1: binary data"},
		{name: "lines format on a directory", files: map[string]string{"a.txt": "x"}, opts: corpus.ReadOptions{Format: corpus.FormatLines}, msg: `is a directory, but format "lines" was requested`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, c := range tt.files {
				writeFile(t, dir, n, c)
			}
			_, _, err := readAll(t, dir, tt.opts)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("read dir: error %v; want %v containing %q", err, tt.is, tt.msg)
			}
		})
	}
}

func TestReadDirSkipInvalid(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.txt", "bad \xff")
	writeFile(t, dir, "b.txt", "good")
	docs, st, err := readAll(t, dir, corpus.ReadOptions{SkipInvalid: true})
	if err != nil || len(docs) != 1 || docs[0].ID != "b.txt" || st.SkippedInvalid != 1 {
		t.Errorf("read dir with SkipInvalid = %v, %+v, %v; want [b.txt], 1 invalid skipped, nil", docs, st, err)
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "a.txt", "x")
	tests := []struct {
		name string
		path string
		opts corpus.ReadOptions
		msg  string
	}{
		{name: "missing file", path: filepath.Join(dir, "nope.txt"), msg: "no such file"},
		{name: "dir format on a file", path: file, opts: corpus.ReadOptions{Format: corpus.FormatDir}, msg: "is not a directory"},
		{name: "unknown format", path: file, opts: corpus.ReadOptions{Format: "csv"}, msg: `unknown format "csv"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := corpus.Open(tt.path, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("Open(%s) = %v, %v; want error containing %q", tt.path, r, err, tt.msg)
			}
		})
	}
}

func TestDetectFormat(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		path string
		want corpus.Format
	}{
		{path: dir, want: corpus.FormatDir},
		{path: writeFile(t, dir, "a.jsonl", ""), want: corpus.FormatJSONL},
		{path: writeFile(t, dir, "a.ndjson", ""), want: corpus.FormatJSONL},
		{path: writeFile(t, dir, "a.Json", ""), want: corpus.FormatJSONL},
		{path: writeFile(t, dir, "a.txt", ""), want: corpus.FormatLines},
		{path: writeFile(t, dir, "corpus", ""), want: corpus.FormatLines},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			got, err := corpus.DetectFormat(tt.path)
			if err != nil || got != tt.want {
				t.Errorf("DetectFormat(%s) = %q, %v; want %q, nil", tt.path, got, err, tt.want)
			}
		})
	}
}

func TestReadAll(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.txt", "one\ntwo\n")
	b := writeFile(t, dir, "b.jsonl", `{"text": "three", "label": "L"}`+"\n\n")
	empty := writeFile(t, dir, "empty.txt", "\n \n")
	docs, st, err := corpus.ReadAll(context.Background(), []string{a, b}, corpus.ReadOptions{})
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	var texts []string
	for _, d := range docs {
		texts = append(texts, d.Text)
	}
	if !slicesEqual(texts, []string{"one", "two", "three"}) || st.Documents != 3 || st.SkippedEmpty != 1 {
		t.Errorf("ReadAll = %q, %+v; want [one two three], 3 documents, 1 empty", texts, st)
	}
	if want := int64(len("one\ntwo\n") + len(`{"text": "three", "label": "L"}`+"\n\n")); st.Bytes != want {
		t.Errorf("ReadAll Bytes = %d; want %d", st.Bytes, want)
	}

	_, st, err = corpus.ReadAll(context.Background(), []string{empty}, corpus.ReadOptions{})
	if !errors.Is(err, corpus.ErrNoDocuments) || !strings.Contains(err.Error(), "2 empty") {
		t.Errorf("ReadAll(empty) error = %v; want ErrNoDocuments mentioning 2 empty lines", err)
	}
	if _, _, err := corpus.ReadAll(context.Background(), nil, corpus.ReadOptions{}); !errors.Is(err, corpus.ErrNoDocuments) {
		t.Errorf("ReadAll(no paths) error = %v; want ErrNoDocuments", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := corpus.ReadAll(ctx, []string{a}, corpus.ReadOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadAll(canceled) error = %v; want context.Canceled", err)
	}
}

func slicesEqual(a, b []string) bool { return cmp.Equal(a, b) }

// repeatReader yields n bytes of a repeated pattern, then the tail.
type repeatReader struct {
	pattern []byte
	n       int
	tail    []byte
	off     int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		if len(r.tail) == 0 {
			return 0, io.EOF
		}
		k := copy(p, r.tail)
		r.tail = r.tail[k:]
		return k, nil
	}
	k := 0
	for k < len(p) && r.n > 0 {
		c := copy(p[k:min(len(p), k+r.n)], r.pattern[r.off:])
		r.off = (r.off + c) % len(r.pattern)
		k += c
		r.n -= c
	}
	return k, nil
}

// TestLongLines reads lines far longer than any buffer: a 100 MB line in the
// lines format and a 20 MB JSONL record, each followed by a short line, so
// the reader must both accumulate and resynchronize.
func TestLongLines(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		prefix string
		n      int
		suffix string
	}{
		{name: "100 MB line", file: "big.txt", n: 100 << 20, suffix: "\nshort\n"},
		{name: "20 MB JSONL record", file: "big.jsonl", prefix: `{"id": "big", "text": "`, n: 20 << 20, suffix: "\"}\n{\"text\": \"short\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := io.MultiReader(strings.NewReader(tt.prefix), &repeatReader{pattern: []byte("word é "), n: tt.n, tail: []byte(tt.suffix)})
			r, err := corpus.NewReader(src, tt.file, corpus.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			d, err := r.Next()
			if err != nil {
				t.Fatalf("Next() on the long line: %v", err)
			}
			// The pattern is 8 bytes; a cut pattern ends in a partial
			// UTF-8 sequence only if n mod 8 splits "é", which it does not.
			if len(d.Text) != tt.n || !strings.HasPrefix(d.Text, "word é word") {
				t.Errorf("long document has %d bytes starting %q; want %d bytes of the pattern", len(d.Text), d.Text[:min(20, len(d.Text))], tt.n)
			}
			d, err = r.Next()
			if err != nil || d.Text != "short" || d.Line != 2 {
				t.Errorf("Next() after the long line = %q (line %d), %v; want \"short\" (line 2), nil", d.Text, d.Line, err)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("Next() at the end: %v; want io.EOF", err)
			}
			want := int64(len(tt.prefix) + tt.n + len(tt.suffix))
			if got := r.Stats().Bytes; got != want {
				t.Errorf("Stats().Bytes = %d; want %d", got, want)
			}
		})
	}
}

func TestNewReaderRejectsDir(t *testing.T) {
	_, err := corpus.NewReader(bytes.NewReader(nil), "x", corpus.ReadOptions{Format: corpus.FormatDir})
	if err == nil {
		t.Error("NewReader with FormatDir: no error; want one")
	}
}
