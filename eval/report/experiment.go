package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// experimentFile matches the result files of the experiments E1–E8 of
// docs/experiments.md (e1.jsonl, E2.jsonl, e3-bytes.jsonl,
// e4_classify.jsonl) and of the privacy attacks (attacks.jsonl,
// docs/attacks.md) and the method comparison (compare.jsonl,
// docs/compare.md).
var experimentFile = regexp.MustCompile(`^(?:[eE]([1-8])|(attacks)|(compare))([-_.][^/]*)?\.jsonl$`)

// experiment is one experiment result file: JSON lines of flat objects.
type experiment struct {
	id   string // "E1" … "E8"
	name string // file name
	spec plotSpec
	cols []string // keys in order of first appearance
	rows []map[string]cell
}

// plotSpec says how an experiment is plotted. A result file may set it in
// a line of its own, {"plot": {"x": "round", "y": "log_likelihood",
// "series": ["method"]}}; otherwise it is inferred from the columns.
type plotSpec struct {
	Title  string   `json:"title,omitempty"`
	X      string   `json:"x,omitempty"`
	Y      string   `json:"y,omitempty"`
	Series []string `json:"series,omitempty"`
	XLabel string   `json:"x_label,omitempty"`
	YLabel string   `json:"y_label,omitempty"`
	LogX   bool     `json:"log_x,omitempty"`
}

// cell is one value of an experiment row.
type cell struct {
	text  string  // as shown
	num   float64 // the value, if isNum
	isNum bool
}

// maxExperimentRows bounds the rows of one experiment file read, to keep a
// report small.
const maxExperimentRows = 5000

// readExperiments reads the experiment result files directly in dir, in
// name order.
func readExperiments(dir string) ([]experiment, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	var out []experiment
	for _, e := range entries {
		m := experimentFile.FindStringSubmatch(e.Name())
		if e.IsDir() || m == nil {
			continue
		}
		path := filepath.Join(dir, e.Name())
		x, err := readExperiment(path)
		if err != nil {
			return nil, err
		}
		x.id = "Attacks"
		switch {
		case m[1] != "":
			x.id = "E" + m[1]
		case m[3] != "":
			x.id = compareID
		}
		out = append(out, x)
	}
	return out, nil
}

// readExperiment reads one experiment result file.
func readExperiment(path string) (experiment, error) {
	f, err := os.Open(path)
	if err != nil {
		return experiment{}, fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	x, err := decodeExperiment(f)
	if err != nil {
		return experiment{}, fmt.Errorf("report: %s %w", path, err)
	}
	x.name = filepath.Base(path)
	return x, nil
}

// decodeExperiment reads JSON lines of flat objects; errors name the line.
func decodeExperiment(r io.Reader) (experiment, error) {
	var x experiment
	br := bufio.NewReaderSize(r, 1<<16)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return x, fmt.Errorf("line %d: %w", line, err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if len(x.rows) >= maxExperimentRows {
				return x, fmt.Errorf("line %d: more than %d result lines", line, maxExperimentRows)
			}
			if err := x.addLine(b); err != nil {
				return x, fmt.Errorf("line %d: %w", line, err)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(x.rows) == 0 {
		return x, errors.New("holds no result lines")
	}
	return x, nil
}

// addLine decodes one line: a plot spec or a result row.
func (x *experiment) addLine(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errors.New("not a JSON object")
	}
	row := map[string]cell{}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string) // object keys are strings
		if key == "plot" && len(keys) == 0 {
			if err := dec.Decode(&x.spec); err != nil {
				return fmt.Errorf("plot: %w", err)
			}
			continue
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%q: %w", key, err)
		}
		if _, dup := row[key]; dup {
			return fmt.Errorf("key %q appears twice", key)
		}
		row[key] = toCell(v)
		keys = append(keys, key)
	}
	if len(keys) == 0 {
		return nil // the plot line, or {}
	}
	for _, k := range keys {
		if !slices.Contains(x.cols, k) {
			x.cols = append(x.cols, k)
		}
	}
	x.rows = append(x.rows, row)
	return nil
}

// toCell converts a decoded JSON value to a table cell.
func toCell(v any) cell {
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return cell{text: string(v)}
		}
		return cell{text: formatNumber(f), num: f, isNum: true}
	case string:
		return cell{text: v}
	case bool:
		return cell{text: strconv.FormatBool(v)}
	case nil:
		return cell{text: "—"}
	default:
		b, _ := json.Marshal(v) // a value json decoded always re-encodes
		return cell{text: string(b)}
	}
}

// Columns recognised when a result file has no plot line, in order of
// preference.
var (
	xColumns = []string{"round", "rounds", "iteration", "iterations", "bytes", "cumulative_bytes", "epsilon", "eps", "tau", "sigma", "k", "topics", "clients", "alpha", "lambda", "delta", "sample_ratio"}
	yColumns = []string{"log_likelihood", "held_out_log_likelihood", "perplexity", "accuracy", "macro_f1", "f1", "auc", "npmi", "umass", "coherence", "embedding_coherence", "diversity"}
	idColumn = regexp.MustCompile(`(^|_)(id|seed|dir|file|path)$`)
)

// resolvedSpec returns the plot spec of x: the file's, with the columns it
// leaves out inferred. ok is false when no plot can be made: no numeric x
// and y columns, or no row with both.
func (x *experiment) resolvedSpec() (plotSpec, bool) {
	s := x.spec
	numeric := func(col string) bool {
		n := 0
		for _, row := range x.rows {
			if c, ok := row[col]; ok {
				if !c.isNum {
					return false
				}
				n++
			}
		}
		return n > 0
	}
	pick := func(cands []string) string {
		for _, c := range cands {
			if slices.Contains(x.cols, c) && numeric(c) {
				return c
			}
		}
		return ""
	}
	if s.X == "" {
		s.X = pick(xColumns)
	}
	if s.Y == "" {
		s.Y = pick(yColumns)
	}
	if s.X == "" || s.Y == "" || s.X == s.Y || !numeric(s.X) || !numeric(s.Y) {
		return s, false
	}
	if s.Series == nil {
		for _, c := range x.cols {
			if c != s.X && c != s.Y && !numeric(c) && !idColumn.MatchString(c) {
				s.Series = append(s.Series, c)
			}
		}
	}
	if s.XLabel == "" {
		s.XLabel = columnLabel(s.X)
	}
	if s.YLabel == "" {
		s.YLabel = columnLabel(s.Y)
	}
	return s, true
}

// seriesOf returns the series name of a row under spec s: the values of
// its series columns, numbers with their column's name ("parties 3").
func (s plotSpec) seriesOf(row map[string]cell) string {
	var parts []string
	for _, c := range s.Series {
		if v, ok := row[c]; ok {
			if v.isNum {
				parts = append(parts, strings.ReplaceAll(c, "_", " ")+" "+v.text)
			} else {
				parts = append(parts, v.text)
			}
		}
	}
	if len(parts) == 0 {
		return s.YLabel
	}
	return strings.Join(parts, ", ")
}

// columnLabel turns a column name into an axis label with its unit.
func columnLabel(col string) string {
	if l, ok := metricLabels[col]; ok {
		return l
	}
	switch col {
	case "round", "rounds":
		return "Communication round"
	case "iteration", "iterations":
		return "Iteration"
	case "bytes", "cumulative_bytes":
		return "Bytes sent and received (all parties)"
	case "epsilon", "eps":
		return "ε per party"
	case "tau":
		return "Threshold τ"
	case "sigma":
		return "Noise σ"
	case "k", "topics":
		return "Topics K"
	case "clients":
		return "Clients"
	case "alpha":
		return "Dirichlet α"
	case "lambda":
		return "λ"
	case "delta":
		return "δ"
	}
	return strings.ReplaceAll(col, "_", " ")
}
