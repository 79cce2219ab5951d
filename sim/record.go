package sim

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// Recorder writes a run record: a JSON line per round attempt, then a
// summary. Both fedtopic simulate and fedtopic coordinator write it, so
// reports read one format. It is not safe for concurrent use; the
// coordinator calls it from Run's goroutine.
type Recorder struct {
	w       *bufio.Writer
	parties []string
	delta   float64
	events  [][]privacy.Event // per party, all declared so far
	charged []map[int]bool    // per party, rounds whose release is counted: a resend in a retried round is the same release
	bytes   []fed.Traffic
	last    int // last committed round written
	priors  int // records of earlier runs counted
	start   time.Time
}

// NewRecorder returns a recorder writing to w for parties; delta is the δ
// at which Gaussian releases are converted to (ε, δ).
func NewRecorder(w io.Writer, parties []string, delta float64) *Recorder {
	r := &Recorder{w: bufio.NewWriter(w), parties: slices.Clone(parties), delta: delta,
		events: make([][]privacy.Event, len(parties)), charged: make([]map[int]bool, len(parties)),
		bytes: make([]fed.Traffic, len(parties)), start: time.Now()}
	for i, p := range parties {
		r.bytes[i].Party = p
		r.charged[i] = map[int]bool{}
	}
	return r
}

// Resume restores the recorder from the round lines of an earlier run
// record of the same run (a coordinator restarting), so composed ε and
// byte totals continue and rounds already written are not written again.
// A summary line or a torn last line ends the restore.
func (r *Recorder) Resume(old io.Reader) error {
	dec := json.NewDecoder(old)
	for n := 1; ; n++ {
		var l fed.RoundLine
		err := dec.Decode(&l)
		if errors.Is(err, io.EOF) || (err != nil && errors.Is(err, io.ErrUnexpectedEOF)) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("sim: run record line %d: %w", n, err)
		}
		if l.Type != fed.TypeRound {
			return nil
		}
		r.absorb(l.Round, l.Spent, l.Bytes)
		if l.Committed {
			r.last = max(r.last, l.Round)
		}
	}
}

// absorb adds one attempt's declared events and bytes to the totals. A
// party's release for a round counts once: in a retried round it resends
// the same bytes, which its ledger does not charge again.
func (r *Recorder) absorb(round int, spent []fed.PartySpend, bytes []fed.Traffic) {
	for _, s := range spent {
		if i := slices.Index(r.parties, s.Party); i >= 0 && !r.charged[i][round] {
			r.charged[i][round] = true
			r.events[i] = append(r.events[i], s.Events...)
		}
	}
	for _, b := range bytes {
		if i := slices.Index(r.parties, b.Party); i >= 0 {
			r.bytes[i].Up += b.Up
			r.bytes[i].Down += b.Down
		}
	}
}

// Prior counts the privacy spend and bytes of a round of an earlier engine
// run (the vocabulary round) toward this run's totals without writing a
// line for it.
func (r *Recorder) Prior(rec fed.RoundRecord) {
	r.priors++
	r.absorb(-r.priors, rec.Spent, rec.Traffic) // negative keys: rounds of earlier runs never collide with this run's
}

// Round writes the line of one attempt with optional metrics. A replayed
// record of a round already written (fed.RoundRecord.Resumed) is skipped.
func (r *Recorder) Round(rec fed.RoundRecord, metrics map[string]float64) error {
	if rec.Resumed && rec.Round <= r.last {
		return nil
	}
	r.absorb(rec.Round, rec.Spent, rec.Traffic)
	if rec.Committed {
		r.last = max(r.last, rec.Round)
	}
	return r.write(fed.RoundLine{
		Type: fed.TypeRound, Round: rec.Round, Attempt: rec.Attempt, Committed: rec.Committed,
		Replied: rec.Replied, Dropped: rec.Dropped, Rejoined: rec.Rejoined, Refused: rec.Refused,
		Rejected: rec.Rejected, Bytes: rec.Traffic, Spent: rec.Spent, Epsilon: r.Epsilon(),
		DurationS: rec.Duration.Seconds(), Metrics: metrics, Error: rec.Err, SecureAggregation: rec.Secure,
	})
}

// Epsilon returns every party's composed spend so far.
func (r *Recorder) Epsilon() []fed.PartyEpsilon {
	out := make([]fed.PartyEpsilon, len(r.parties))
	for i, p := range r.parties {
		out[i] = fed.PartyEpsilon{Party: p}
		c, err := accountant.Compose(r.events[i], r.delta)
		if err != nil {
			out[i].Error = err.Error()
			continue
		}
		out[i].Epsilon, out[i].Delta, out[i].Unit, out[i].Accountant, out[i].Releases = c.Epsilon, c.Delta, c.Unit, c.Accountant, c.Releases
	}
	return out
}

// Summary completes s with the parties, their composed ε and byte totals,
// writes it as the last line and returns it.
func (r *Recorder) Summary(s fed.SummaryLine) (fed.SummaryLine, error) {
	s.Type = fed.TypeSummary
	s.Parties = r.parties
	s.Epsilon = r.Epsilon()
	s.Bytes = slices.Clone(r.bytes)
	if s.DurationS == 0 {
		s.DurationS = time.Since(r.start).Seconds()
	}
	return s, r.write(s)
}

func (r *Recorder) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("sim: run record: %w", err)
	}
	r.w.Write(b)
	r.w.WriteByte('\n')
	return r.w.Flush()
}
