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
	"slices"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
)

// RecordFile is the name of the run record inside a run directory.
const RecordFile = "run.jsonl"

// roundLine is one round line of a run record: the coordinator's
// fed.RoundRecord and what the simulator measured after the round.
type roundLine struct {
	fed.RoundRecord
	// Metrics are the global model's held-out metrics after the round
	// ("perplexity", "log_likelihood", ...).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// PartyMetrics are each party's local model's metrics after the round.
	PartyMetrics []partyMetrics `json:"party_metrics,omitempty"`
	// Privacy is each party's total spend after the round, as its
	// accountant computed it.
	Privacy []partyPrivacy `json:"privacy,omitempty"`
}

// partyMetrics are one party's metrics.
type partyMetrics struct {
	Party   string             `json:"party"`
	Metrics map[string]float64 `json:"metrics"`
}

// partyPrivacy is one party's privacy spend.
type partyPrivacy struct {
	Party   string  `json:"party"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// DocumentEpsilon is the spend at the document level (group privacy
	// over the document length or its clip), when the unit is smaller.
	DocumentEpsilon float64 `json:"document_epsilon,omitempty"`
}

// summaryLine is the last line of a run record: {"summary": {...}}.
type summaryLine struct {
	Summary *summary `json:"summary"`
}

// summary describes a finished run.
type summary struct {
	Run       string            `json:"run,omitempty"`
	Algorithm string            `json:"algorithm,omitempty"`
	Model     string            `json:"model,omitempty"` // "lda", "slda", ...
	Topics    int               `json:"topics,omitempty"`
	Vocab     int               `json:"vocab,omitempty"`
	Seed      uint64            `json:"seed"`
	Rounds    int               `json:"rounds,omitempty"`
	Corpus    string            `json:"corpus,omitempty"`
	Split     string            `json:"split,omitempty"`
	Params    map[string]string `json:"params,omitempty"`
	Parties   []partySummary    `json:"parties,omitempty"`
	Privacy   *statement        `json:"privacy,omitempty"`
	// Metrics are the final global model's held-out metrics, PartyMetrics
	// each party's final local model's.
	Metrics      map[string]float64 `json:"metrics,omitempty"`
	PartyMetrics []partyMetrics     `json:"party_metrics,omitempty"`
	Baselines    []baseline         `json:"baselines,omitempty"`
	TopicMerges  []merge            `json:"topic_merges,omitempty"`
	Models       *modelFiles        `json:"models,omitempty"`
	Duration     time.Duration      `json:"duration_ns,omitempty"`
}

// partySummary is one party of a finished run.
type partySummary struct {
	ID       string  `json:"id"`
	Docs     int     `json:"docs,omitempty"`
	Tokens   int     `json:"tokens,omitempty"`
	Epsilon  float64 `json:"epsilon"`
	Delta    float64 `json:"delta"`
	Releases int     `json:"releases,omitempty"`
	// DocumentEpsilon is the document-level spend (see partyPrivacy).
	DocumentEpsilon float64 `json:"document_epsilon,omitempty"`
	BudgetEpsilon   float64 `json:"budget_epsilon,omitempty"`
	BudgetDelta     float64 `json:"budget_delta,omitempty"`
}

// statement is the run's privacy statement (RELIABILITY.md L-7).
type statement struct {
	Unit         string   `json:"unit,omitempty"`         // "word occurrence", "document", ...
	Neighbouring string   `json:"neighbouring,omitempty"` // "add or remove one word occurrence", ...
	Accountant   string   `json:"accountant,omitempty"`   // "pure ε composition", "μ-GDP", "RDP", ...
	Released     []string `json:"released,omitempty"`     // what left the parties
	Notes        []string `json:"notes,omitempty"`        // assumptions, caveats
}

// baseline is a reference model's quality: a party's own model trained on
// its data alone, or a model trained on the pooled data.
type baseline struct {
	Name    string             `json:"name"`
	Kind    string             `json:"kind,omitempty"` // "single-party" or "pooled"
	Party   string             `json:"party,omitempty"`
	Metrics map[string]float64 `json:"metrics"`
}

// merge lists the party topics a global topic was merged from (FTM).
type merge struct {
	Global  int          `json:"global"`
	Members []mergeTopic `json:"members"`
}

// mergeTopic is one party topic in a merge.
type mergeTopic struct {
	Party      string  `json:"party"`
	Topic      int     `json:"topic"`
	Similarity float64 `json:"similarity,omitempty"`
}

// modelFiles names the model files of a run, relative to its directory.
type modelFiles struct {
	Global  string       `json:"global,omitempty"`
	Parties []partyModel `json:"parties,omitempty"`
}

// partyModel names one party's final local model file.
type partyModel struct {
	Party string `json:"party"`
	Path  string `json:"path"`
}

// record is a decoded run record.
type record struct {
	rounds  []roundLine // committed rounds, in order, one per round number
	failed  []roundLine // attempts that missed their quorum
	summary *summary    // nil if the run did not finish
}

// readRecord reads the run record at path.
func readRecord(path string) (*record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	rec, err := decodeRecord(f, path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return rec, nil
}

// decodeRecord reads a run record from r; name says where it came from in
// errors, which name the line.
func decodeRecord(r io.Reader, name string) (*record, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	rec := &record{}
	seen := map[int]int{} // round number → index in rec.rounds
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if rec.summary != nil {
				return nil, fmt.Errorf("%s line %d: a line after the summary line", name, line)
			}
			if err := rec.addLine(b, seen); err != nil {
				return nil, fmt.Errorf("%s line %d: %w", name, line, err)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
	}
	if len(rec.rounds) == 0 && len(rec.failed) == 0 && rec.summary == nil {
		return nil, fmt.Errorf("%s: no rounds and no summary: not a run record", name)
	}
	slices.SortStableFunc(rec.rounds, func(a, b roundLine) int { return a.Round - b.Round })
	return rec, nil
}

// addLine decodes one non-blank line.
func (rec *record) addLine(b []byte, seen map[int]int) error {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	if _, ok := probe["summary"]; ok {
		var s summaryLine
		if err := strictUnmarshal(b, &s); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		if s.Summary == nil {
			return errors.New(`summary: "summary" is null`)
		}
		if err := s.Summary.check(); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		rec.summary = s.Summary
		return nil
	}
	if _, ok := probe["round"]; !ok {
		return errors.New(`neither a round line (no "round") nor a summary line (no "summary")`)
	}
	var rl roundLine
	if err := json.Unmarshal(b, &rl); err != nil {
		return fmt.Errorf("round line: %w", err)
	}
	if err := rl.check(); err != nil {
		return fmt.Errorf("round %d: %w", rl.Round, err)
	}
	switch {
	case !rl.Committed:
		rec.failed = append(rec.failed, rl)
	case rl.Resumed:
		// A resumed coordinator replays the last committed round; keep the
		// first copy.
		if _, ok := seen[rl.Round]; !ok {
			seen[rl.Round] = len(rec.rounds)
			rec.rounds = append(rec.rounds, rl)
		}
	default:
		if _, ok := seen[rl.Round]; ok {
			return fmt.Errorf("round %d committed twice", rl.Round)
		}
		seen[rl.Round] = len(rec.rounds)
		rec.rounds = append(rec.rounds, rl)
	}
	return nil
}

// strictUnmarshal decodes b into v, refusing unknown fields, so a summary
// written in another shape is reported rather than silently shown empty.
func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// check reports values a round line must not have.
func (rl *roundLine) check() error {
	var errs []error
	if rl.Round < 0 {
		errs = append(errs, fmt.Errorf("round number %d, want ≥ 0", rl.Round))
	}
	if rl.Duration < 0 {
		errs = append(errs, fmt.Errorf("duration %v, want ≥ 0", rl.Duration))
	}
	for _, tr := range rl.Traffic {
		if tr.Party == "" || tr.Up < 0 || tr.Down < 0 {
			errs = append(errs, fmt.Errorf("traffic %+v: want a party and byte counts ≥ 0", tr))
		}
	}
	for _, p := range rl.Privacy {
		errs = append(errs, checkSpend(p.Party, p.Epsilon, p.Delta))
	}
	for _, s := range rl.Spent {
		for _, e := range s.Events {
			if err := e.Validate(); err != nil {
				errs = append(errs, fmt.Errorf("party %s: %w", s.Party, err))
			}
		}
	}
	return errors.Join(errs...)
}

// check reports values a summary must not have.
func (s *summary) check() error {
	var errs []error
	if s.Topics < 0 || s.Vocab < 0 || s.Rounds < 0 {
		errs = append(errs, fmt.Errorf("topics %d, vocab %d, rounds %d: want ≥ 0", s.Topics, s.Vocab, s.Rounds))
	}
	for _, p := range s.Parties {
		if p.ID == "" {
			errs = append(errs, errors.New("a party without an id"))
		}
		errs = append(errs, checkSpend(p.ID, p.Epsilon, p.Delta))
	}
	for _, m := range s.TopicMerges {
		if m.Global < 0 {
			errs = append(errs, fmt.Errorf("topic merge of global topic %d, want ≥ 0", m.Global))
		}
	}
	if s.Models != nil {
		for _, p := range append([]partyModel{{Path: s.Models.Global}}, s.Models.Parties...) {
			if p.Path != "" && !filepath.IsLocal(filepath.FromSlash(p.Path)) {
				errs = append(errs, fmt.Errorf("model path %q: want a path inside the run directory", p.Path))
			}
		}
	}
	return errors.Join(errs...)
}

// checkSpend reports an impossible privacy spend. ε = +∞ (no privacy) is
// allowed; JSON cannot carry it, so it arrives only as a huge number.
func checkSpend(party string, eps, delta float64) error {
	if !(eps >= 0) || !(delta >= 0 && delta <= 1) {
		return fmt.Errorf("party %s: ε = %v, δ = %v: want ε ≥ 0 and 0 ≤ δ ≤ 1", party, eps, delta)
	}
	return nil
}

// sortedKeys returns the keys of m in increasing order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// totalEvents sums the release counts of events.
func totalEvents(events []privacy.Event) int {
	n := 0
	for _, e := range events {
		n += e.Count
	}
	return n
}
