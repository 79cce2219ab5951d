package vocab

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
)

// Load reads a vocabulary file: UTF-8 text, one word per line, the word on
// line i+1 having id i. See Read for the rules.
func Load(path string) (*Vocabulary, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("vocab: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads a vocabulary in the file format from r; name is used in error
// messages. Lines end in \n or \r\n, and a UTF-8 byte-order mark is ignored.
// An empty line (other than the end of the file), a word with leading or
// trailing white space (corpus.IsSpace), invalid UTF-8, a NUL byte, a duplicate word or an
// empty file is an error naming the line.
func Read(r io.Reader, name string) (*Vocabulary, error) {
	br := bufio.NewReader(r)
	v := &Vocabulary{ids: make(map[string]int32)}
	bad := func(line int, format string, args ...any) error {
		return fmt.Errorf("vocab: %s:%d: "+format, append([]any{name, line}, args...)...)
	}
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("vocab: %s: %w", name, err)
		}
		if len(b) == 0 && err == io.EOF {
			break
		}
		b = bytes.TrimSuffix(b, []byte{'\n'})
		b = bytes.TrimSuffix(b, []byte{'\r'})
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte(bom))
		}
		switch {
		case bytes.IndexByte(b, 0) >= 0:
			return nil, bad(line, "binary data (NUL byte): not a vocabulary file")
		case !utf8.Valid(b):
			return nil, bad(line, "invalid UTF-8")
		case len(b) == 0:
			return nil, bad(line, "empty line (every line must hold one word)")
		case bytes.ContainsRune(b, '\r'):
			return nil, bad(line, "carriage return inside a word")
		}
		w := string(b)
		if err := checkEnds(w); err != nil {
			return nil, bad(line, "%w", err)
		}
		if j, dup := v.ids[w]; dup {
			return nil, bad(line, "word %q repeats line %d", w, j+1)
		}
		if len(v.words) == maxWords {
			return nil, bad(line, "more than %d words", maxWords)
		}
		v.ids[w] = int32(len(v.words))
		v.words = append(v.words, w)
		if err == io.EOF {
			break
		}
	}
	if len(v.words) == 0 {
		return nil, fmt.Errorf("vocab: %s: no words", name)
	}
	return v, nil
}

// bom is the UTF-8 byte-order mark, U+FEFF.
const bom = "\uFEFF"

// maxWords is the most words a vocabulary can hold (ids are int32).
const maxWords = 1<<31 - 1

// Write writes v in the file format: one word per line, in id order. If the
// first word begins with U+FEFF, a byte-order mark is written before it, since
// Read drops one at the start of the file.
func (v *Vocabulary) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	if len(v.words) > 0 && strings.HasPrefix(v.words[0], bom) {
		bw.WriteString(bom)
	}
	for _, word := range v.words {
		bw.WriteString(word)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("vocab: write: %w", err)
	}
	return nil
}

// Save writes v to path atomically: to a temporary file in the same
// directory, synced, then renamed over path, so path never holds a partial
// vocabulary.
func (v *Vocabulary) Save(path string) error {
	if err := atomicfile.Write(path, 0o644, v.Write); err != nil {
		return fmt.Errorf("vocab: save: %w", err)
	}
	return nil
}

// String returns a short description: the size and the first words.
func (v *Vocabulary) String() string {
	const show = 5
	if len(v.words) <= show {
		return fmt.Sprintf("vocab(%d: %s)", len(v.words), strings.Join(v.words, " "))
	}
	return fmt.Sprintf("vocab(%d: %s ...)", len(v.words), strings.Join(v.words[:show], " "))
}
