package topic

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
)

// WriteJSON writes m as the JSON export
//
//	{"vocab": [...],
//	 "alpha": [...], "beta": β,
//	 "topic_word": [
//	 [p(w₀|0), p(w₁|0), ...],
//	 ...
//	 ]}
//
// with one topic per line, columns in vocabulary order. Probabilities are
// written in the shortest form that parses back to the same float64
// (strconv 'g', -1), so ReadJSON returns Φ bit for bit. "alpha" is omitted
// when the model has none. The output is streamed row by row.
func WriteJSON(w io.Writer, m *Model) error {
	if err := m.invalid(); err != nil {
		return fmt.Errorf("topic: write JSON export: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var vb bytes.Buffer
	enc := json.NewEncoder(&vb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m.Vocab); err != nil {
		return fmt.Errorf("topic: write JSON export: %w", err)
	}
	bw.WriteString(`{"vocab": `)
	bw.Write(bytes.TrimRight(vb.Bytes(), "\n"))
	bw.WriteString(",\n")
	num := make([]byte, 0, 32)
	if len(m.Alpha) > 0 {
		bw.WriteString(`"alpha": `)
		bw.Write(appendFloats(num, m.Alpha))
		bw.WriteString(", ")
	}
	bw.WriteString(`"beta": `)
	bw.Write(strconv.AppendFloat(num[:0], m.Beta, 'g', -1, 64))
	bw.WriteString(",\n\"topic_word\": [\n")
	for k := range m.K {
		num = appendFloats(num[:0], m.Row(k))
		if k < m.K-1 {
			num = append(num, ',')
		}
		num = append(num, '\n')
		bw.Write(num)
	}
	bw.WriteString("]}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("topic: write JSON export: %w", err)
	}
	return nil
}

// appendFloats appends xs to b as a JSON array of exact float64 literals.
func appendFloats(b []byte, xs []float64) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
	}
	return append(b, ']')
}

// ReadJSON reads a model from the JSON export format of WriteJSON, also as
// written by other tools: "vocab" and "topic_word" are required, "alpha"
// and "beta" optional, other keys ignored. Rows of topic_word must be
// non-negative and finite with a positive sum; a row whose sum is more than
// RowSumTolerance from 1 (counts, or probabilities printed with few digits)
// is divided by its sum. Rows already within the tolerance are kept as
// they are, so a fedtopic export reads back bit for bit. The decoder reads
// one row at a time and memory grows only as data arrives.
func ReadJSON(r io.Reader) (*Model, error) {
	m, err := readJSON(r)
	if err != nil {
		return nil, fmt.Errorf("topic: read JSON export: %w", err)
	}
	return m, nil
}

// LoadJSON reads the JSON export at path (see ReadJSON).
func LoadJSON(path string) (*Model, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topic: load JSON export: %w", err)
	}
	defer f.Close()
	m, err := readJSON(bufio.NewReaderSize(f, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("topic: load JSON export %s: %w", path, err)
	}
	return m, nil
}

func readJSON(r io.Reader) (*Model, error) {
	dec := json.NewDecoder(r)
	at := func(err error) error { return fmt.Errorf("byte %d: %w", dec.InputOffset(), err) }
	if err := expectDelim(dec, '{'); err != nil {
		return nil, at(err)
	}
	m := &Model{}
	var haveVocab, haveRows bool
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, at(err)
		}
		key, _ := tok.(string)
		switch key {
		case "vocab":
			if err := dec.Decode(&m.Vocab); err != nil {
				return nil, at(fmt.Errorf("vocab: %w", err))
			}
			haveVocab = true
		case "alpha":
			if err := dec.Decode(&m.Alpha); err != nil {
				return nil, at(fmt.Errorf("alpha: %w", err))
			}
		case "beta":
			if err := dec.Decode(&m.Beta); err != nil {
				return nil, at(fmt.Errorf("beta: %w", err))
			}
		case "topic_word":
			if err := expectDelim(dec, '['); err != nil {
				return nil, at(fmt.Errorf("topic_word: %w", err))
			}
			var row []float64
			for dec.More() {
				if err := dec.Decode(&row); err != nil {
					return nil, at(fmt.Errorf("topic_word row %d: %w", m.K, err))
				}
				if m.K > 0 && len(row) != m.V {
					return nil, at(fmt.Errorf("topic_word row %d has %d entries, row 0 has %d", m.K, len(row), m.V))
				}
				if err := normalizeRow(row); err != nil {
					return nil, at(fmt.Errorf("topic_word row %d: %w", m.K, err))
				}
				m.V = len(row)
				m.Phi = append(m.Phi, row...)
				m.K++
			}
			if err := expectDelim(dec, ']'); err != nil {
				return nil, at(fmt.Errorf("topic_word: %w", err))
			}
			haveRows = true
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, at(fmt.Errorf("%q: %w", key, err))
			}
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, at(err)
	}
	switch {
	case !haveVocab:
		return nil, errors.New(`no "vocab" key`)
	case !haveRows || m.K == 0:
		return nil, errors.New(`no "topic_word" rows`)
	case len(m.Vocab) != m.V:
		return nil, fmt.Errorf("vocab has %d words but topic_word rows have %d entries", len(m.Vocab), m.V)
	}
	if err := m.invalid(); err != nil {
		return nil, err
	}
	return m, nil
}

// expectDelim reads the next token and checks that it is the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("unexpected end of input, want %q", d)
		}
		return err
	}
	if got, ok := tok.(json.Delim); !ok || got != d {
		return fmt.Errorf("got %v, want %q", tok, d)
	}
	return nil
}

// normalizeRow checks that row holds finite non-negative values with a
// positive sum and divides it by its sum if that is not 1 within
// RowSumTolerance.
func normalizeRow(row []float64) error {
	s := 0.0
	for w, x := range row {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("entry %d = %v, want finite and non-negative", w, x)
		}
		s += x
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return fmt.Errorf("sum %v, want positive and finite", s)
	}
	if math.Abs(s-1) > RowSumTolerance {
		for w := range row {
			row[w] /= s
		}
	}
	return nil
}

// WriteTopWordsCSV writes the n most probable words of every topic as CSV
// with the header "topic,rank,word,probability": topic is the 0-based topic
// index, rank starts at 1, probability is p(w|k) in exact shortest form.
func WriteTopWordsCSV(w io.Writer, m *Model, n int) error {
	if err := m.invalid(); err != nil {
		return fmt.Errorf("topic: write top words: %w", err)
	}
	cw := csv.NewWriter(w)
	cw.Write([]string{"topic", "rank", "word", "probability"})
	for k := range m.K {
		for i, wp := range m.TopWords(k, n) {
			cw.Write([]string{strconv.Itoa(k), strconv.Itoa(i + 1), wp.Word, strconv.FormatFloat(wp.Prob, 'g', -1, 64)})
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("topic: write top words: %w", err)
	}
	return nil
}

// WriteThetaCSV writes document-topic proportions θ (row-major, one row of
// k entries per document, as Infer returns them) as CSV with the header
// "doc,topic_0,...,topic_{k-1}". ids names the documents; if it is nil the
// 0-based document index is used. It panics if the shapes disagree.
func WriteThetaCSV(w io.Writer, theta []float64, k int, ids []string) error {
	d := thetaDocs(theta, k, ids)
	cw := csv.NewWriter(w)
	rec := make([]string, k+1)
	rec[0] = "doc"
	for t := range k {
		rec[t+1] = "topic_" + strconv.Itoa(t)
	}
	cw.Write(rec)
	for i := range d {
		rec[0] = docName(ids, i)
		for t, x := range theta[i*k : (i+1)*k] {
			rec[t+1] = strconv.FormatFloat(x, 'g', -1, 64)
		}
		cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("topic: write theta CSV: %w", err)
	}
	return nil
}

// WriteThetaJSONL writes θ as JSON lines, one document per line:
// {"id": "...", "theta": [θ_d0, ..., θ_d(k-1)]}. ids as in WriteThetaCSV.
func WriteThetaJSONL(w io.Writer, theta []float64, k int, ids []string) error {
	d := thetaDocs(theta, k, ids)
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for i := range d {
		id, err := json.Marshal(docName(ids, i))
		if err != nil {
			return fmt.Errorf("topic: write theta JSON lines: %w", err)
		}
		line = append(line[:0], `{"id": `...)
		line = append(line, id...)
		line = append(line, `, "theta": `...)
		line = appendFloats(line, theta[i*k:(i+1)*k])
		line = append(line, "}\n"...)
		bw.Write(line)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("topic: write theta JSON lines: %w", err)
	}
	return nil
}

// thetaDocs returns the number of documents in theta, panicking on a shape
// mismatch (a programmer error).
func thetaDocs(theta []float64, k int, ids []string) int {
	if k < 1 || len(theta)%k != 0 {
		panic(fmt.Sprintf("topic: theta of length %d is not a multiple of k = %d", len(theta), k))
	}
	d := len(theta) / k
	if ids != nil && len(ids) != d {
		panic(fmt.Sprintf("topic: %d ids for %d documents", len(ids), d))
	}
	return d
}

func docName(ids []string, i int) string {
	if ids == nil {
		return strconv.Itoa(i)
	}
	return ids[i]
}
