package fedtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
)

// Ledger is a small pure-ε ledger for engine tests: every event costs
// Epsilon × Count, charges add up, and a charge that would take the total
// above the budget is refused. With a path, every charge is appended to the
// file as a JSON line and fsynced before Charge returns, and OpenLedger
// restores the total from it. Safe for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	budget  float64
	path    string
	entries []LedgerEntry
}

// LedgerEntry is one recorded charge.
type LedgerEntry struct {
	Release string          `json:"release"`
	Events  []privacy.Event `json:"events"`
}

// OpenLedger returns a ledger with the given ε budget, backed by path ("" =
// in memory), restoring the charges already recorded there.
func OpenLedger(budget float64, path string) (*Ledger, error) {
	l := &Ledger{budget: budget, path: path}
	if path == "" {
		return l, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fedtest: ledger: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		var e LedgerEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, fmt.Errorf("fedtest: ledger %s:%d: %w", path, line, err)
		}
		l.entries = append(l.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fedtest: ledger %s: %w", path, err)
	}
	return l, nil
}

func cost(events []privacy.Event) float64 {
	var s float64
	for _, e := range events {
		s += e.Epsilon * float64(e.Count)
	}
	return s
}

func (l *Ledger) spentLocked() float64 {
	var s float64
	for _, e := range l.entries {
		s += cost(e.Events)
	}
	return s
}

// Check implements fed.Ledger.
func (l *Ledger) Check(events []privacy.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.checkLocked(events)
}

func (l *Ledger) checkLocked(events []privacy.Event) error {
	spent, want := l.spentLocked(), cost(events)
	if spent+want > l.budget {
		return fmt.Errorf("fedtest: requested ε = %g, remaining ε = %g of %g: %w", want, l.budget-spent, l.budget, fed.ErrBudgetExhausted)
	}
	return nil
}

// Charge implements fed.Ledger.
func (l *Ledger) Charge(ctx context.Context, release string, events []privacy.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.checkLocked(events); err != nil {
		return err
	}
	e := LedgerEntry{Release: release, Events: events}
	if l.path != "" {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("fedtest: ledger: %w", err)
		}
		_, werr := f.Write(append(b, '\n'))
		serr := f.Sync()
		if err := errors.Join(werr, serr, f.Close()); err != nil {
			return fmt.Errorf("fedtest: ledger: %w", err)
		}
	}
	l.entries = append(l.entries, e)
	return nil
}

// Entries returns the recorded charges in order.
func (l *Ledger) Entries() []LedgerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LedgerEntry(nil), l.entries...)
}

// Spent returns the total ε charged.
func (l *Ledger) Spent() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.spentLocked()
}
