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

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
)

// RecordFile is the name of the run record inside a run directory.
const RecordFile = "run.jsonl"

// Line types of a run record (the "type" field).
const (
	lineRound   = "round"
	lineSummary = "summary"
)

// roundLine is one round line of a run record: one attempt at a round as
// the coordinator saw it, what the accountant composed for each party so
// far, and the held-out metrics measured after it.
type roundLine struct {
	Type      string           `json:"type"`
	Round     int              `json:"round"`
	Attempt   int              `json:"attempt"`
	Committed bool             `json:"committed"`
	Replied   []string         `json:"replied"`
	Dropped   []string         `json:"dropped,omitempty"`
	Rejoined  []string         `json:"rejoined,omitempty"`
	Refused   []string         `json:"refused,omitempty"`
	Rejected  []fed.Rejection  `json:"rejected,omitempty"`
	Bytes     []fed.Traffic    `json:"bytes"`           // per party, this attempt
	Spent     []fed.PartySpend `json:"spent,omitempty"` // privacy events each party declared
	Epsilon   []partyEpsilon   `json:"epsilon"`         // per party, composed over the run so far
	DurationS float64          `json:"duration_s"`
	// Metrics are the global model's held-out metrics after the round
	// ("perplexity", "log_likelihood", ...).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// PartyMetrics are each party's local model's metrics after the round.
	PartyMetrics []partyMetrics `json:"party_metrics,omitempty"`
	Error        string         `json:"error,omitempty"`
}

// partyEpsilon is the privacy a party spent over the run so far, as the
// accountant composed it from the events the party declared.
type partyEpsilon struct {
	Party      string  `json:"party"`
	Epsilon    float64 `json:"epsilon"`
	Delta      float64 `json:"delta"`
	Unit       string  `json:"unit,omitempty"`
	Accountant string  `json:"accountant,omitempty"`
	Releases   int     `json:"releases"`
	// DocumentEpsilon is the spend at the document level (group privacy
	// over the document length or its clip), when the unit is smaller.
	DocumentEpsilon float64 `json:"document_epsilon,omitempty"`
	Error           string  `json:"error,omitempty"` // why the events could not be composed
}

// partyMetrics are one party's metrics.
type partyMetrics struct {
	Party   string             `json:"party"`
	Metrics map[string]float64 `json:"metrics"`
}

// summary is the last line of a run record: the finished (or failed) run.
// The fields after Error are optional additions a writer may make.
type summary struct {
	Type      string             `json:"type"`
	Run       string             `json:"run,omitempty"`
	Algorithm string             `json:"algorithm,omitempty"`
	Parties   []string           `json:"parties,omitempty"`
	Seed      uint64             `json:"seed"`
	Rounds    int                `json:"rounds"`          // committed
	Bytes     []fed.Traffic      `json:"bytes,omitempty"` // per party, whole run
	Epsilon   []partyEpsilon     `json:"epsilon,omitempty"`
	DurationS float64            `json:"duration_s,omitempty"`
	Metrics   map[string]float64 `json:"metrics,omitempty"` // final global model
	Error     string             `json:"error,omitempty"`   // why the run stopped early

	Model        string            `json:"model,omitempty"` // "lda", "slda", ...
	Topics       int               `json:"topics,omitempty"`
	Vocab        int               `json:"vocab,omitempty"`
	Corpus       string            `json:"corpus,omitempty"`
	Split        string            `json:"split,omitempty"`
	Params       map[string]string `json:"params,omitempty"`
	PartyData    []partyData       `json:"party_data,omitempty"`
	Privacy      *statement        `json:"privacy,omitempty"`
	PartyMetrics []partyMetrics    `json:"party_metrics,omitempty"` // final local models
	Baselines    []baseline        `json:"baselines,omitempty"`
	TopicMerges  []merge           `json:"topic_merges,omitempty"`
	Models       *modelFiles       `json:"models,omitempty"`
}

// partyData describes one party's data and budget.
type partyData struct {
	Party         string  `json:"party"`
	Docs          int     `json:"docs,omitempty"`
	Tokens        int     `json:"tokens,omitempty"`
	BudgetEpsilon float64 `json:"budget_epsilon,omitempty"`
	BudgetDelta   float64 `json:"budget_delta,omitempty"`
}

// statement is the run's privacy statement (RELIABILITY.md L-7), where the
// writer knows more than the events say.
type statement struct {
	Unit         string   `json:"unit,omitempty"`         // "word occurrence", "document", ...
	Neighbouring string   `json:"neighbouring,omitempty"` // "add or remove one word occurrence", ...
	Accountant   string   `json:"accountant,omitempty"`
	Released     []string `json:"released,omitempty"` // what left the parties
	Notes        []string `json:"notes,omitempty"`    // assumptions, caveats
}

// baseline is a reference model's quality: a party's own model trained on
// its data alone, or a model trained on the pooled data.
type baseline struct {
	Name    string             `json:"name,omitempty"`
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
	notes   []string    // oddities the reader should know of
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

// addLine decodes one non-blank line: a round line or the summary line,
// told apart by "type" (or, without one, by a "round" field).
func (rec *record) addLine(b []byte, seen map[int]int) error {
	var probe struct {
		Type  string           `json:"type"`
		Round *json.RawMessage `json:"round"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return fmt.Errorf("not a JSON object of a run record: %w", err)
	}
	switch {
	case probe.Type == lineSummary:
		var s summary
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		if err := s.check(); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		rec.summary = &s
		return nil
	case probe.Type != lineRound && (probe.Type != "" || probe.Round == nil):
		return fmt.Errorf("line of type %q: want %q or %q", probe.Type, lineRound, lineSummary)
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
	default:
		if i, ok := seen[rl.Round]; ok {
			// A coordinator that crashed after writing a round and before
			// its checkpoint replays it; the replay is what the model saw.
			rec.rounds[i] = rl
			rec.notes = append(rec.notes, fmt.Sprintf("Round %d was recorded twice (a restarted coordinator replayed it); the later record is shown.", rl.Round))
			return nil
		}
		seen[rl.Round] = len(rec.rounds)
		rec.rounds = append(rec.rounds, rl)
	}
	return nil
}

// check reports values a round line must not have.
func (rl *roundLine) check() error {
	var errs []error
	if rl.Round < 0 {
		errs = append(errs, fmt.Errorf("round number %d, want ≥ 0", rl.Round))
	}
	if !(rl.DurationS >= 0) {
		errs = append(errs, fmt.Errorf("duration %v s, want ≥ 0", rl.DurationS))
	}
	for _, tr := range rl.Bytes {
		if tr.Party == "" || tr.Up < 0 || tr.Down < 0 {
			errs = append(errs, fmt.Errorf("traffic %+v: want a party and byte counts ≥ 0", tr))
		}
	}
	for _, p := range rl.Epsilon {
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
	for _, p := range s.Epsilon {
		errs = append(errs, checkSpend(p.Party, p.Epsilon, p.Delta))
	}
	if !(s.DurationS >= 0) {
		errs = append(errs, fmt.Errorf("duration %v s, want ≥ 0", s.DurationS))
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
