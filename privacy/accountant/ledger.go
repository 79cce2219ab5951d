package accountant

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"

	"github.com/fedtopic/fedtopic/privacy"
)

// ErrBudgetExhausted is wrapped by every refusal of a release that would
// take a ledger's total above its budget.
var ErrBudgetExhausted = errors.New("privacy budget exhausted")

// Budget is a party's privacy budget for one privacy unit.
type Budget struct {
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// Unit is the privacy unit every charged event must have; empty
	// accepts the unit of the first event charged.
	Unit string `json:"unit,omitempty"`
}

// Validate reports every problem with b.
func (b Budget) Validate() error {
	var errs []error
	if math.IsNaN(b.Epsilon) || math.IsInf(b.Epsilon, 0) || b.Epsilon < 0 {
		errs = append(errs, fmt.Errorf("accountant: budget epsilon %v: must be finite and ≥ 0: %w", b.Epsilon, privacy.ErrInvalidParameter))
	}
	if err := privacy.CheckDelta(b.Delta); err != nil {
		errs = append(errs, fmt.Errorf("accountant: budget: %w", err))
	}
	return errors.Join(errs...)
}

// BudgetError is a refusal: the release, what it would cost and what is
// left. It wraps ErrBudgetExhausted.
type BudgetError struct {
	Release                          string
	RequestedEpsilon, RequestedDelta float64
	RemainingEpsilon, RemainingDelta float64
	Budget                           Budget
}

// Error names the release, the (ε, δ) it needs and what remains.
func (e *BudgetError) Error() string {
	return fmt.Sprintf("accountant: release %q needs ε = %.6g, δ = %.3g but only ε = %.6g, δ = %.3g remain of the budget (ε = %g, δ = %g): %v",
		e.Release, e.RequestedEpsilon, e.RequestedDelta, e.RemainingEpsilon, e.RemainingDelta, e.Budget.Epsilon, e.Budget.Delta, ErrBudgetExhausted)
}

// Unwrap returns ErrBudgetExhausted.
func (e *BudgetError) Unwrap() error { return ErrBudgetExhausted }

// Record is one charged release in a ledger.
type Record struct {
	Seq     int             `json:"seq"`
	Release string          `json:"release"`
	Events  []privacy.Event `json:"events"`
	// Epsilon and Delta are the ledger's total after this release, as the
	// accountant composed all releases so far (never above the budget).
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
}

// header is the first line of a ledger file.
type header struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	Budget  Budget `json:"budget"`
}

const ledgerFormat = "fedtopic privacy ledger"

// appendFile is what the ledger needs of its file; tests substitute one
// that fails part-way to simulate a crash.
type appendFile interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
}

// Ledger is a party's durable record of its privacy spending against its
// budget (docs/privacy.md, "Budgets and the per-party ledger").
//
// Check tells, recording nothing, whether a planned release fits; Charge
// (or Spend) records a release and makes the record durable with fsync
// before it returns, so the release may leave only after its cost is on
// disk. A release whose cost would take the total above the budget is
// refused with a *BudgetError naming the requested and remaining (ε, δ)
// and wrapping ErrBudgetExhausted. Charging the same release name again
// with the same events is a no-op (a retry resends the same bytes and pays
// nothing more); with different events it is an error.
//
// Composition: the ledger keeps every charged Event and its total is
// Compose(all events, budget δ) — pure ε adds up, Gaussian releases compose
// as GDP (or RDP), releases with their own δ add up — so a run of T
// Gaussian rounds is charged √T-style, not T times a per-round ε. The total
// never decreases as releases are added, and floating-point slack of at
// most 1e-9 relative is absorbed by clamping the total down to the budget,
// never by letting it exceed the budget.
//
// File: JSON lines, each prefixed by its CRC-32C, a header line with the
// budget first. A crash while a record is being written leaves a torn last
// line: it was never acknowledged, so its release never left, and
// OpenLedger drops it (truncating the file back to its last complete
// record). Any other damage is reported with the file and line. A process
// holds an exclusive lock on the file while the ledger is open (on Unix).
// Safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	path    string
	f       appendFile
	unlock  func()
	budget  Budget
	records []Record
	events  []privacy.Event // all charged events, merged
	spent   Cost
	closed  bool
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// OpenLedger opens the ledger at path, creating it with budget if it does
// not exist, or restoring it exactly if it does (its recorded budget must
// equal budget).
func OpenLedger(path string, budget Budget) (*Ledger, error) {
	return openLedger(path, budget, nil)
}

func openLedger(path string, budget Budget, wrap func(appendFile) appendFile) (*Ledger, error) {
	if err := budget.Validate(); err != nil {
		return nil, err
	}
	l := &Ledger{path: path, budget: budget}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("accountant: ledger: %w", err)
	}
	unlock, err := lockFile(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("accountant: ledger %s: %w", path, err)
	}
	fail := func(err error) (*Ledger, error) {
		unlock()
		f.Close()
		return nil, err
	}
	data, err := io.ReadAll(f) // under the lock: no other process is writing
	if err != nil {
		return fail(fmt.Errorf("accountant: ledger %s: %w", path, err))
	}
	good, err := l.restore(data) // bytes of complete, valid lines
	if err != nil {
		return fail(err)
	}
	if good < len(data) { // a torn last record: never acknowledged, drop it
		if err := f.Truncate(int64(good)); err != nil {
			return fail(fmt.Errorf("accountant: ledger %s: %w", path, err))
		}
		if err := f.Sync(); err != nil {
			return fail(fmt.Errorf("accountant: ledger %s: %w", path, err))
		}
	}
	if _, err := f.Seek(int64(good), io.SeekStart); err != nil {
		return fail(fmt.Errorf("accountant: ledger %s: %w", path, err))
	}
	l.f, l.unlock = f, unlock
	if wrap != nil {
		l.f = wrap(f)
	}
	if good == 0 { // new (or torn before its header was complete)
		if err := l.writeLine(header{Format: ledgerFormat, Version: 1, Budget: budget}); err != nil {
			return fail(err)
		}
		if err := syncDir(filepath.Dir(path)); err != nil {
			return fail(fmt.Errorf("accountant: ledger %s: %w", path, err))
		}
	}
	return l, nil
}

// restore replays data and returns the length of its valid prefix.
func (l *Ledger) restore(data []byte) (int, error) {
	off, line := 0, 0
	for off < len(data) {
		line++
		nl := bytes.IndexByte(data[off:], '\n')
		last := nl < 0 || off+nl+1 == len(data)
		if nl < 0 { // no newline: torn while being written
			return off, nil
		}
		payload, err := checkLine(data[off : off+nl])
		if err != nil {
			if last && line > 1 {
				return off, nil // torn last record
			}
			return 0, fmt.Errorf("accountant: ledger %s:%d: %w", l.path, line, err)
		}
		if line == 1 {
			var h header
			if err := strictUnmarshal(payload, &h); err != nil || h.Format != ledgerFormat {
				return 0, fmt.Errorf("accountant: ledger %s:1: not a fedtopic privacy ledger header", l.path)
			}
			if h.Version != 1 {
				return 0, fmt.Errorf("accountant: ledger %s:1: version %d is not supported (this fedtopic reads version 1)", l.path, h.Version)
			}
			if h.Budget != l.budget {
				return 0, fmt.Errorf("accountant: ledger %s:1: recorded budget (ε = %g, δ = %g, unit %q) differs from the configured one (ε = %g, δ = %g, unit %q); start a new ledger to change a budget",
					l.path, h.Budget.Epsilon, h.Budget.Delta, h.Budget.Unit, l.budget.Epsilon, l.budget.Delta, l.budget.Unit)
			}
		} else {
			var r Record
			if err := strictUnmarshal(payload, &r); err != nil {
				return 0, fmt.Errorf("accountant: ledger %s:%d: %w", l.path, line, err)
			}
			if r.Seq != len(l.records)+1 {
				return 0, fmt.Errorf("accountant: ledger %s:%d: record %d out of sequence (want %d)", l.path, line, r.Seq, len(l.records)+1)
			}
			total, events, err := l.compose(r.Events)
			if err != nil {
				return 0, fmt.Errorf("accountant: ledger %s:%d: %w", l.path, line, err)
			}
			// The stored total is authoritative if larger (a later
			// accountant may be tighter; a charge never shrinks), and the
			// float slack Spend absorbed is absorbed again here.
			total.Epsilon = math.Max(clampSlack(total.Epsilon, l.budget.Epsilon), r.Epsilon)
			total.Delta = math.Max(clampSlack(total.Delta, l.budget.Delta), r.Delta)
			l.records = append(l.records, r)
			l.events, l.spent = events, total
			if l.budget.Unit == "" && len(r.Events) > 0 {
				l.budget.Unit = r.Events[0].Unit
			}
		}
		off += nl + 1
	}
	return off, nil
}

// checkLine verifies "crc32c-hex json" and returns the JSON.
func checkLine(line []byte) ([]byte, error) {
	sp := bytes.IndexByte(line, ' ')
	if sp != 8 {
		return nil, errors.New("malformed record (no checksum)")
	}
	want, err := strconv.ParseUint(string(line[:8]), 16, 32)
	if err != nil {
		return nil, errors.New("malformed record checksum")
	}
	payload := line[9:]
	if got := crc32.Checksum(payload, castagnoli); got != uint32(want) {
		return nil, fmt.Errorf("checksum mismatch (%08x, recorded %08x): the record is damaged", got, want)
	}
	return payload, nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// writeLine appends v as a checksummed line and fsyncs.
func (l *Ledger) writeLine(v any) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("accountant: ledger %s: %w", l.path, err)
	}
	line := make([]byte, 0, len(payload)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(payload, castagnoli))
	line = append(line, payload...)
	line = append(line, '\n')
	if _, err := l.f.Write(line); err != nil {
		return fmt.Errorf("accountant: ledger %s: write: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("accountant: ledger %s: sync: %w", l.path, err)
	}
	return nil
}

// compose returns the total if events were added, and the merged events.
func (l *Ledger) compose(events []privacy.Event) (Cost, []privacy.Event, error) {
	unit := l.budget.Unit
	for i, e := range events {
		if unit == "" {
			unit = e.Unit
		}
		if e.Unit != unit {
			return Cost{}, nil, fmt.Errorf("event %d has privacy unit %q; this ledger counts %q (convert with accountant.Group): %w", i, e.Unit, unit, privacy.ErrInvalidParameter)
		}
	}
	all := merge(append(append([]privacy.Event(nil), l.events...), events...))
	c, err := Compose(all, l.budget.Delta)
	return c, all, err
}

// evaluate returns the total after events and whether it fits the budget,
// clamping float slack of at most 1e-9 relative down to the budget.
func (l *Ledger) evaluate(release string, events []privacy.Event) (Cost, []privacy.Event, error) {
	if l.closed {
		return Cost{}, nil, fmt.Errorf("accountant: ledger %s is closed", l.path)
	}
	if len(events) == 0 {
		return l.spent, l.events, nil
	}
	total, all, err := l.compose(events)
	if err != nil {
		return Cost{}, nil, fmt.Errorf("accountant: ledger %s: release %q: %w", l.path, release, err)
	}
	total.Epsilon = math.Max(total.Epsilon, l.spent.Epsilon)
	total.Delta = math.Max(total.Delta, l.spent.Delta)
	fits := func(got, budget float64) (float64, bool) {
		c := clampSlack(got, budget)
		return c, c <= budget
	}
	e, okE := fits(total.Epsilon, l.budget.Epsilon)
	d, okD := fits(total.Delta, l.budget.Delta)
	if !okE || !okD {
		return Cost{}, nil, &BudgetError{
			Release:          release,
			RequestedEpsilon: total.Epsilon - l.spent.Epsilon,
			RequestedDelta:   total.Delta - l.spent.Delta,
			RemainingEpsilon: l.budget.Epsilon - l.spent.Epsilon,
			RemainingDelta:   l.budget.Delta - l.spent.Delta,
			Budget:           l.budget,
		}
	}
	total.Epsilon, total.Delta = e, d
	return total, all, nil
}

// clampSlack returns budget for a total above it by at most 1e-9
// relative (floating-point slack), and the total otherwise.
func clampSlack(total, budget float64) float64 {
	if total > budget && total <= budget*(1+1e-9) {
		return budget
	}
	return total
}

// Check reports whether events fit in the remaining budget, recording
// nothing; call it before drawing any noise. The error is a *BudgetError
// wrapping ErrBudgetExhausted when they do not fit.
func (l *Ledger) Check(events []privacy.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _, err := l.evaluate("planned release", events)
	return err
}

// Spend records events as the release named release, durably (fsync)
// before it returns, and returns the record. A release that does not fit is
// refused, recording nothing.
func (l *Ledger) Spend(release string, events []privacy.Event) (Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.records {
		if r.Release == release {
			if reflect.DeepEqual(r.Events, events) || (len(r.Events) == 0 && len(events) == 0) {
				return r, nil // a retry of a release already paid for
			}
			return Record{}, fmt.Errorf("accountant: ledger %s: release %q was already charged with different events", l.path, release)
		}
	}
	total, all, err := l.evaluate(release, events)
	if err != nil {
		return Record{}, err
	}
	r := Record{Seq: len(l.records) + 1, Release: release, Events: append([]privacy.Event(nil), events...), Epsilon: total.Epsilon, Delta: total.Delta}
	if err := l.writeLine(r); err != nil {
		// The record may or may not be on disk; the ledger can no longer
		// tell, so it refuses further use. Reopening settles it (a
		// complete record counts, a torn one is dropped).
		l.closed = true
		return Record{}, err
	}
	l.records = append(l.records, r)
	l.events, l.spent = all, total
	if l.budget.Unit == "" && len(events) > 0 {
		l.budget.Unit = events[0].Unit
	}
	return r, nil
}

// Charge is Spend for the federation engine (it implements fed.Ledger).
func (l *Ledger) Charge(ctx context.Context, release string, events []privacy.Event) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("accountant: ledger: %w", err)
	}
	_, err := l.Spend(release, events)
	return err
}

// Spent returns the composed total charged so far.
func (l *Ledger) Spent() Cost {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.spent
}

// Remaining returns the budget left: budget minus Spent.
func (l *Ledger) Remaining() (eps, delta float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.budget.Epsilon - l.spent.Epsilon, l.budget.Delta - l.spent.Delta
}

// Budget returns the ledger's budget.
func (l *Ledger) Budget() Budget {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.budget
}

// Records returns the charged releases in order.
func (l *Ledger) Records() []Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Record(nil), l.records...)
}

// Close releases the file.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	l.closed = true
	l.unlock()
	err := l.f.Close()
	l.f = nil
	return err
}

// syncDir makes a new file's directory entry durable; file systems that
// cannot sync a directory are not an error.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) && !errors.Is(err, errors.ErrUnsupported) {
		return err
	}
	return nil
}
