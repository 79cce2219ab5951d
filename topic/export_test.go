package topic

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestWriteJSON(t *testing.T) {
	m := tinyModel()
	m.Vocab[3] = `d"<&>`
	var b bytes.Buffer
	if err := WriteJSON(&b, m); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	want := `{"vocab": ["apple","banana","cherry","d\"<&>"],
"alpha": [0.1,0.2], "beta": 0.01,
"topic_word": [
[0.5,0.25,0.25,0],
[0,0.125,0.375,0.5]
]}
`
	if got := b.String(); got != want {
		t.Errorf("WriteJSON(tiny model) =\n%s\nwant\n%s", got, want)
	}
	var plain struct {
		Vocab     []string    `json:"vocab"`
		TopicWord [][]float64 `json:"topic_word"`
	}
	if err := json.Unmarshal(b.Bytes(), &plain); err != nil {
		t.Fatalf("WriteJSON output is not valid JSON: %v", err)
	}
	if len(plain.TopicWord) != 2 || plain.TopicWord[1][3] != 0.5 || plain.Vocab[3] != m.Vocab[3] {
		t.Errorf("WriteJSON decoded by encoding/json = %+v; want the model's rows and vocabulary", plain)
	}
}

func TestJSONRoundTripExact(t *testing.T) {
	m := randomModel(t, 11, 6, 200, 0.1)
	m.Prov = Provenance{}
	var b bytes.Buffer
	if err := WriteJSON(&b, m); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	path := filepath.Join(t.TempDir(), "m.json")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadJSON(path)
	if err != nil {
		t.Fatalf("LoadJSON: %v", err)
	}
	if diff := cmp.Diff(m, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("LoadJSON(WriteJSON(m)) (-want +got):\n%s", diff)
	}
}

func TestReadJSONOtherTools(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *Model
	}{
		{
			name: "counts are normalized, keys in any order, extras ignored",
			in:   `{"topic_word": [[3, 1], [0, 2]], "doc_topic": [[1, 0]], "vocab": ["x", "y"]}`,
			want: &Model{K: 2, V: 2, Phi: []float64{0.75, 0.25, 0, 1}, Vocab: []string{"x", "y"}},
		},
		{
			name: "alpha and beta",
			in:   `{"vocab": ["x"], "alpha": [0.5], "beta": 0.1, "topic_word": [[1]]}`,
			want: &Model{K: 1, V: 1, Phi: []float64{1}, Vocab: []string{"x"}, Alpha: []float64{0.5}, Beta: 0.1},
		},
		{
			name: "rounded probabilities within tolerance are kept",
			in:   `{"vocab": ["x", "y", "z"], "topic_word": [[0.3333333, 0.3333333, 0.3333333]]}`,
			want: &Model{K: 1, V: 3, Phi: []float64{0.3333333, 0.3333333, 0.3333333}, Vocab: []string{"x", "y", "z"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadJSON(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ReadJSON: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ReadJSON (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{name: "empty", in: "", want: "unexpected end of input"},
		{name: "not an object", in: "[1]", want: `got [, want "{"`},
		{name: "no vocab", in: `{"topic_word": [[1]]}`, want: `no "vocab" key`},
		{name: "no rows", in: `{"vocab": ["a"], "topic_word": []}`, want: `no "topic_word" rows`},
		{name: "ragged", in: `{"vocab": ["a", "b"], "topic_word": [[1, 0], [1]]}`, want: "row 1 has 1 entries, row 0 has 2"},
		{name: "negative", in: `{"vocab": ["a", "b"], "topic_word": [[1, -1]]}`, want: "row 0: entry 1 = -1"},
		{name: "zero row", in: `{"vocab": ["a", "b"], "topic_word": [[0, 0]]}`, want: "row 0: sum 0"},
		{name: "string entry", in: `{"vocab": ["a"], "topic_word": [["1"]]}`, want: "topic_word row 0"},
		{name: "vocab mismatch", in: `{"vocab": ["a"], "topic_word": [[0.5, 0.5]]}`, want: "vocab has 1 words but topic_word rows have 2 entries"},
		{name: "duplicate word", in: `{"vocab": ["a", "a"], "topic_word": [[0.5, 0.5]]}`, want: "appears twice"},
		{name: "truncated", in: `{"vocab": ["a"], "topic_word": [[1]`, want: "byte"},
		{name: "alpha length", in: `{"vocab": ["a"], "alpha": [1, 2], "topic_word": [[1]]}`, want: "Alpha has 2 entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadJSON(%q) error = %v; want one containing %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestWriteTopWordsCSV(t *testing.T) {
	m := tinyModel()
	m.Vocab[2] = "cherry, red"
	var b bytes.Buffer
	if err := WriteTopWordsCSV(&b, m, 2); err != nil {
		t.Fatalf("WriteTopWordsCSV: %v", err)
	}
	want := "topic,rank,word,probability\n" +
		"0,1,apple,0.5\n0,2,banana,0.25\n" +
		"1,1,date,0.5\n1,2,\"cherry, red\",0.375\n"
	if got := b.String(); got != want {
		t.Errorf("WriteTopWordsCSV(tiny, 2) =\n%s\nwant\n%s", got, want)
	}
}

func TestWriteTheta(t *testing.T) {
	theta := []float64{0.25, 0.75, 1.0 / 3, 2.0 / 3}
	tests := []struct {
		name  string
		ids   []string
		write func(b *bytes.Buffer, ids []string) error
		want  string
	}{
		{name: "CSV with ids", ids: []string{"a", "b,c"},
			write: func(b *bytes.Buffer, ids []string) error { return WriteThetaCSV(b, theta, 2, ids) },
			want:  "doc,topic_0,topic_1\na,0.25,0.75\n\"b,c\",0.3333333333333333,0.6666666666666666\n"},
		{name: "CSV without ids",
			write: func(b *bytes.Buffer, ids []string) error { return WriteThetaCSV(b, theta, 2, ids) },
			want:  "doc,topic_0,topic_1\n0,0.25,0.75\n1,0.3333333333333333,0.6666666666666666\n"},
		{name: "JSON lines", ids: []string{"a", `b"`},
			write: func(b *bytes.Buffer, ids []string) error { return WriteThetaJSONL(b, theta, 2, ids) },
			want:  "{\"id\": \"a\", \"theta\": [0.25,0.75]}\n{\"id\": \"b\\\"\", \"theta\": [0.3333333333333333,0.6666666666666666]}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := tt.write(&b, tt.ids); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func FuzzReadJSON(f *testing.F) {
	f.Add(`{"vocab": ["a", "b"], "topic_word": [[0.5, 0.5]]}`)
	f.Add(`{"topic_word": [[3, 1], [0, 2]], "vocab": ["x", "y"], "beta": 1}`)
	f.Add(`{"vocab": ["a"], "alpha": [1], "topic_word": [[1]]}`)
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ReadJSON(strings.NewReader(in))
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("ReadJSON accepted an invalid model: %v", err)
		}
		for _, x := range m.Phi {
			if math.IsNaN(x) {
				t.Fatal("ReadJSON accepted NaN")
			}
		}
	})
}
