package corpus_test

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"unicode/utf8"

	"github.com/fedtopic/fedtopic/corpus"
)

// FuzzJSONL feeds arbitrary bytes to the JSONL reader: it must never panic,
// must end in io.EOF or an *InputError naming the stream and a line, and
// every document it returns must be non-blank valid UTF-8 with an ID.
func FuzzJSONL(f *testing.F) {
	for _, s := range []string{
		`{"text": "a b", "id": "1", "label": "x"}` + "\n" + `{"text": "c"}`,
		`{"text": 1}`, `{"id": [1], "text": "x"}`, "not json\n", "\xff\xfe", "\x00", "{}\n\n{\"text\":\"\"}",
		`{"text": "\ud800 lone surrogate"}`, `{"text": "ok"} trailing`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, skip bool) {
		r, err := corpus.NewReader(bytes.NewReader(data), "fuzz.jsonl", corpus.ReadOptions{SkipInvalid: skip})
		if err != nil {
			t.Fatal(err)
		}
		for {
			d, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var ie *corpus.InputError
				if !errors.As(err, &ie) || ie.File != "fuzz.jsonl" || ie.Line < 1 {
					t.Fatalf("Next() error %v is not an *InputError with a line", err)
				}
				return
			}
			if d.ID == "" || !utf8.ValidString(d.Text) || d.Line < 1 {
				t.Fatalf("Next() = %+v; want an ID, valid UTF-8 text and a line", d)
			}
		}
	})
}
