package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Format is the layout of an input corpus.
type Format string

// The input formats. FormatAuto picks one from the path: a directory is
// FormatDir, a name ending in .jsonl, .ndjson or .json is FormatJSONL, and
// anything else is FormatLines.
const (
	FormatAuto  Format = ""      // choose from the path
	FormatLines Format = "lines" // one document per line
	FormatJSONL Format = "jsonl" // one JSON object per line: "text", optional "id" and "label"
	FormatDir   Format = "dir"   // a directory of .txt files, one document per file
)

// Errors that readers wrap in an *InputError; test for them with errors.Is.
var (
	// ErrInvalidUTF8 reports bytes that are not valid UTF-8.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrBinary reports a NUL byte, the mark of a binary (non-text) file.
	ErrBinary = errors.New("binary data (NUL byte): not a text file")
	// ErrSyntax reports a JSONL line that is not a JSON object with a string "text".
	ErrSyntax = errors.New("bad JSONL record")
	// ErrNoDocuments reports an input that yields no document at all.
	ErrNoDocuments = errors.New("no documents")
)

// InputError locates a problem in an input file. Line is 1-based; it is 0
// when the problem concerns the file as a whole.
type InputError struct {
	File string
	Line int
	Err  error
}

// Error returns "corpus: FILE:LINE: problem" (or "corpus: FILE: problem").
func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("corpus: %s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("corpus: %s: %v", e.File, e.Err)
}

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

// ReadOptions configures the readers. The zero value detects the format from
// the path and fails on invalid UTF-8.
type ReadOptions struct {
	// Format overrides format detection; "" (FormatAuto) detects it.
	Format Format `json:"format,omitempty"`
	// SkipInvalid skips documents that contain invalid UTF-8 and counts
	// them in ReadStats.SkippedInvalid, instead of failing.
	SkipInvalid bool `json:"skip_invalid,omitempty"`
}

// Validate reports whether the options are usable.
func (o ReadOptions) Validate() error {
	switch o.Format {
	case FormatAuto, FormatLines, FormatJSONL, FormatDir:
		return nil
	}
	return fmt.Errorf("corpus: unknown format %q (want %q, %q or %q)", o.Format, FormatLines, FormatJSONL, FormatDir)
}

// ReadStats counts what a reader has seen.
type ReadStats struct {
	Documents      int   `json:"documents"`       // documents returned
	SkippedEmpty   int   `json:"skipped_empty"`   // empty or blank lines / files
	SkippedInvalid int   `json:"skipped_invalid"` // documents with invalid UTF-8 (SkipInvalid)
	Bytes          int64 `json:"bytes"`           // input bytes consumed
}

// Add returns the element-wise sum of s and o.
func (s ReadStats) Add(o ReadStats) ReadStats {
	return ReadStats{
		Documents:      s.Documents + o.Documents,
		SkippedEmpty:   s.SkippedEmpty + o.SkippedEmpty,
		SkippedInvalid: s.SkippedInvalid + o.SkippedInvalid,
		Bytes:          s.Bytes + o.Bytes,
	}
}

// DetectFormat returns the format FormatAuto chooses for path: FormatDir for
// a directory, FormatJSONL for names ending in .jsonl, .ndjson or .json
// (any case), FormatLines otherwise.
func DetectFormat(path string) (Format, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("corpus: %w", err)
	}
	if fi.IsDir() {
		return FormatDir, nil
	}
	return formatFromName(path), nil
}

func formatFromName(name string) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".jsonl", ".ndjson", ".json":
		return FormatJSONL
	}
	return FormatLines
}

// Reader streams the documents of one input: a file in the lines or JSONL
// format, or a directory of .txt files. Lines may be of any length. A Reader
// is not safe for concurrent use.
type Reader struct {
	opts   ReadOptions
	name   string // input path as given, used in IDs and errors
	format Format

	// line formats
	br    *bufio.Reader
	close io.Closer
	line  int
	buf   []byte

	// directory format
	files []string // sorted .txt names inside name
	next  int

	stats ReadStats
	err   error // sticky: io.EOF or the first failure
}

// readerBufSize is the bufio buffer; lines longer than this are accumulated.
const readerBufSize = 64 << 10

// Open opens the corpus at path with the given options. Close the Reader
// when done.
func Open(path string, opts ReadOptions) (*Reader, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	format := opts.Format
	if format == FormatAuto {
		if fi.IsDir() {
			format = FormatDir
		} else {
			format = formatFromName(path)
		}
	}
	if fi.IsDir() != (format == FormatDir) {
		if fi.IsDir() {
			return nil, &InputError{File: path, Err: fmt.Errorf("is a directory, but format %q was requested", format)}
		}
		return nil, &InputError{File: path, Err: errors.New("is not a directory, but format \"dir\" was requested")}
	}
	if format == FormatDir {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("corpus: %w", err)
		}
		var files []string
		for _, e := range entries {
			if e.Type().IsRegular() && strings.EqualFold(filepath.Ext(e.Name()), ".txt") {
				files = append(files, e.Name())
			}
		}
		if len(files) == 0 {
			return nil, &InputError{File: path, Err: fmt.Errorf("%w: directory has no .txt files", ErrNoDocuments)}
		}
		slices.Sort(files)
		return &Reader{opts: opts, name: path, format: FormatDir, files: files}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	r := newStreamReader(f, path, format, opts)
	r.close = f
	return r, nil
}

// NewReader returns a Reader of the lines or JSONL format over src; name is
// used in document IDs and error messages, and selects the format when
// opts.Format is FormatAuto. The caller closes src.
func NewReader(src io.Reader, name string, opts ReadOptions) (*Reader, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	format := opts.Format
	if format == FormatAuto {
		format = formatFromName(name)
	}
	if format == FormatDir {
		return nil, fmt.Errorf("corpus: %s: NewReader reads a stream; use Open for a directory", name)
	}
	return newStreamReader(src, name, format, opts), nil
}

func newStreamReader(src io.Reader, name string, format Format, opts ReadOptions) *Reader {
	return &Reader{opts: opts, name: name, format: format, br: bufio.NewReaderSize(src, readerBufSize)}
}

// Format returns the format the Reader reads.
func (r *Reader) Format() Format { return r.format }

// Stats returns the counts so far.
func (r *Reader) Stats() ReadStats { return r.stats }

// Close releases the file the Reader opened, if any.
func (r *Reader) Close() error {
	if r.close == nil {
		return nil
	}
	err := r.close.Close()
	r.close = nil
	return err
}

// Next returns the next document, or io.EOF after the last one. Any other
// error is final: it is an *InputError naming the file and line where the
// input is at fault, and later calls return it again.
func (r *Reader) Next() (Document, error) {
	if r.err != nil {
		return Document{}, r.err
	}
	var d Document
	var err error
	if r.format == FormatDir {
		d, err = r.nextFile()
	} else {
		d, err = r.nextLine()
	}
	if err != nil {
		r.err = err
		r.buf = nil
		return Document{}, err
	}
	r.stats.Documents++
	return d, nil
}

// All returns an iterator over the remaining documents. It stops after the
// first error, which it yields with a zero Document; io.EOF is not yielded.
func (r *Reader) All() iter.Seq2[Document, error] {
	return func(yield func(Document, error) bool) {
		for {
			d, err := r.Next()
			if err == io.EOF {
				return
			}
			if !yield(d, err) || err != nil {
				return
			}
		}
	}
}

// readLine returns the next line without its terminator (\n or \r\n), of
// any length. The slice is valid until the next call.
func (r *Reader) readLine() ([]byte, error) {
	chunk, err := r.br.ReadSlice('\n')
	if err == nil || (err == io.EOF && len(chunk) > 0) {
		// Fast path: the whole line fit in the buffer.
		r.stats.Bytes += int64(len(chunk))
		return trimEOL(chunk), nil
	}
	if err != bufio.ErrBufferFull {
		return nil, err
	}
	r.buf = append(r.buf[:0], chunk...)
	for {
		chunk, err = r.br.ReadSlice('\n')
		r.buf = append(r.buf, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		r.stats.Bytes += int64(len(r.buf))
		return trimEOL(r.buf), nil
	}
}

func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// utf8BOM is stripped from the start of every input.
const utf8BOM = "\xEF\xBB\xBF"

func (r *Reader) nextLine() (Document, error) {
	for {
		// Drop a huge accumulation buffer so one long line does not pin
		// its memory for the rest of the input.
		if cap(r.buf) > 4<<20 {
			r.buf = nil
		}
		b, err := r.readLine()
		if err == io.EOF {
			return Document{}, io.EOF
		}
		if err != nil {
			return Document{}, fmt.Errorf("corpus: %s: %w", r.name, err)
		}
		r.line++
		if r.line == 1 {
			b = bytes.TrimPrefix(b, []byte(utf8BOM))
		}
		if bytes.IndexByte(b, 0) >= 0 {
			return Document{}, &InputError{File: r.name, Line: r.line, Err: ErrBinary}
		}
		if !utf8.Valid(b) {
			if r.opts.SkipInvalid {
				r.stats.SkippedInvalid++
				continue
			}
			return Document{}, &InputError{File: r.name, Line: r.line, Err: invalidAt(b)}
		}
		if isBlank(b) {
			r.stats.SkippedEmpty++
			continue
		}
		if r.format == FormatLines {
			return Document{
				ID:     r.name + ":" + strconv.Itoa(r.line),
				Text:   string(b),
				Source: r.name,
				Line:   r.line,
			}, nil
		}
		d, err := parseJSONL(b)
		if err != nil {
			return Document{}, &InputError{File: r.name, Line: r.line, Err: err}
		}
		if isBlank([]byte(d.Text)) {
			r.stats.SkippedEmpty++
			continue
		}
		if d.ID == "" {
			d.ID = r.name + ":" + strconv.Itoa(r.line)
		}
		d.Source, d.Line = r.name, r.line
		return d, nil
	}
}

func (r *Reader) nextFile() (Document, error) {
	for r.next < len(r.files) {
		name := r.files[r.next]
		r.next++
		path := filepath.Join(r.name, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return Document{}, fmt.Errorf("corpus: %w", err)
		}
		r.stats.Bytes += int64(len(b))
		b = bytes.TrimPrefix(b, []byte(utf8BOM))
		if i := bytes.IndexByte(b, 0); i >= 0 {
			return Document{}, &InputError{File: path, Line: lineOf(b, i), Err: ErrBinary}
		}
		if !utf8.Valid(b) {
			if r.opts.SkipInvalid {
				r.stats.SkippedInvalid++
				continue
			}
			i := invalidOffset(b)
			start := bytes.LastIndexByte(b[:i], '\n') + 1
			return Document{}, &InputError{File: path, Line: lineOf(b, i), Err: fmt.Errorf("%w at byte %d of the line", ErrInvalidUTF8, i-start+1)}
		}
		if isBlank(b) {
			r.stats.SkippedEmpty++
			continue
		}
		return Document{ID: name, Text: string(b), Source: path}, nil
	}
	return Document{}, io.EOF
}

// lineOf returns the 1-based line of byte offset i in b.
func lineOf(b []byte, i int) int { return bytes.Count(b[:i], []byte{'\n'}) + 1 }

// invalidOffset returns the offset of the first invalid UTF-8 sequence in b.
func invalidOffset(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		c, size := utf8.DecodeRune(b[i:])
		if c == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

func invalidAt(line []byte) error {
	return fmt.Errorf("%w at byte %d of the line", ErrInvalidUTF8, invalidOffset(line)+1)
}

// isBlank reports whether b has only white space and ignorable characters
// (isBlankText).
func isBlank(b []byte) bool {
	for _, c := range string(b) {
		if !IsSpace(c) && !IsIgnorable(c) {
			return false
		}
	}
	return true
}

// jsonlRecord is one JSONL line. ID and Label may be strings or numbers.
type jsonlRecord struct {
	Text  *string         `json:"text"`
	ID    json.RawMessage `json:"id"`
	Label json.RawMessage `json:"label"`
}

func parseJSONL(b []byte) (Document, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Document{}, fmt.Errorf("%w: not a JSON object", ErrSyntax)
	}
	var rec jsonlRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "text" {
			return Document{}, fmt.Errorf("%w: \"text\" must be a string, not %s", ErrSyntax, te.Value)
		}
		return Document{}, fmt.Errorf("%w: not valid JSON: %v", ErrSyntax, err)
	}
	if rec.Text == nil {
		return Document{}, fmt.Errorf("%w: no \"text\" field", ErrSyntax)
	}
	id, err := scalarString(rec.ID)
	if err != nil {
		return Document{}, fmt.Errorf("%w: \"id\" %v", ErrSyntax, err)
	}
	label, err := scalarString(rec.Label)
	if err != nil {
		return Document{}, fmt.Errorf("%w: \"label\" %v", ErrSyntax, err)
	}
	return Document{ID: id, Label: label, Text: *rec.Text}, nil
}

// scalarString decodes a JSON string or number (its literal text); null or
// absent gives "".
func scalarString(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return string(raw), nil
	}
	return "", errors.New("must be a string or a number")
}

// ReadAll reads every document of the inputs at paths, in order, and returns
// them with the summed statistics. It fails with ErrNoDocuments when the
// inputs hold no document, and stops early when ctx is canceled.
func ReadAll(ctx context.Context, paths []string, opts ReadOptions) ([]Document, ReadStats, error) {
	var (
		docs  []Document
		total ReadStats
	)
	if len(paths) == 0 {
		return nil, total, fmt.Errorf("corpus: %w: no input given", ErrNoDocuments)
	}
	for _, p := range paths {
		r, err := Open(p, opts)
		if err != nil {
			return nil, total, err
		}
		for d, err := range r.All() {
			if err != nil {
				r.Close()
				return nil, total.Add(r.Stats()), err
			}
			if len(docs)%1024 == 0 {
				if err := ctx.Err(); err != nil {
					r.Close()
					return nil, total.Add(r.Stats()), fmt.Errorf("corpus: %w", err)
				}
			}
			docs = append(docs, d)
		}
		total = total.Add(r.Stats())
		if err := r.Close(); err != nil {
			return nil, total, fmt.Errorf("corpus: %w", err)
		}
	}
	if len(docs) == 0 {
		return nil, total, fmt.Errorf("corpus: %s: %w (%d empty, %d invalid skipped)",
			strings.Join(paths, ", "), ErrNoDocuments, total.SkippedEmpty, total.SkippedInvalid)
	}
	return docs, total, nil
}
