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
const RecordFile = fed.RecordFile

// record is a decoded run record.
type record struct {
	rounds  []fed.RoundLine  // committed rounds, in order, one per round number
	failed  []fed.RoundLine  // attempts that missed their quorum
	summary *fed.SummaryLine // nil if the run did not finish
	notes   []string         // oddities the reader should know of
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
	slices.SortStableFunc(rec.rounds, func(a, b fed.RoundLine) int { return a.Round - b.Round })
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
	case probe.Type == fed.TypeSummary:
		var s fed.SummaryLine
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		if err := checkSummary(&s); err != nil {
			return fmt.Errorf("summary: %w", err)
		}
		rec.summary = &s
		return nil
	case probe.Type != fed.TypeRound && (probe.Type != "" || probe.Round == nil):
		return fmt.Errorf("line of type %q: want %q or %q", probe.Type, fed.TypeRound, fed.TypeSummary)
	}
	var rl fed.RoundLine
	if err := json.Unmarshal(b, &rl); err != nil {
		return fmt.Errorf("round line: %w", err)
	}
	if err := checkRound(&rl); err != nil {
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

// checkRound reports values a round line must not have.
func checkRound(rl *fed.RoundLine) error {
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

// checkSummary reports values a summary must not have.
func checkSummary(s *fed.SummaryLine) error {
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
		for _, p := range append([]fed.PartyModel{{Path: s.Models.Global}}, s.Models.Parties...) {
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
