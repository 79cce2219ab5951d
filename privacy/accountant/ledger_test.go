package accountant

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"

	"github.com/fedtopic/fedtopic/privacy"
)

func lapEvent(eps float64) privacy.Event {
	return privacy.Event{Mechanism: privacy.MechanismLaplace, Epsilon: eps, Sensitivity: 1, Unit: "document", Count: 1}
}

func gaussEvent(sigma float64) privacy.Event {
	return privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: sigma, Sensitivity: 1, Unit: "document", Count: 1}
}

func TestLedgerRefusesAndNamesBudget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.ledger")
	l, err := OpenLedger(path, Budget{Epsilon: 1, Delta: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Spend("r1", []privacy.Event{lapEvent(0.7)}); err != nil {
		t.Fatalf("Spend(r1, ε = 0.7) = %v; want nil", err)
	}
	err = l.Check([]privacy.Event{lapEvent(0.5)})
	var be *BudgetError
	if !errors.Is(err, ErrBudgetExhausted) || !errors.As(err, &be) {
		t.Fatalf("Check(ε = 0.5) with 0.3 left = %v; want a *BudgetError wrapping ErrBudgetExhausted", err)
	}
	if be.RequestedEpsilon != 0.5 || math.Abs(be.RemainingEpsilon-0.3) > 1e-15 {
		t.Errorf("BudgetError = %+v; want requested ε 0.5, remaining 0.3", be)
	}
	for _, want := range []string{"ε = 0.5", "ε = 0.3", "δ = 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	before, _ := os.ReadFile(path)
	if _, err := l.Spend("r2", []privacy.Event{lapEvent(0.5)}); !errors.Is(err, ErrBudgetExhausted) {
		t.Errorf("Spend over budget = %v; want ErrBudgetExhausted", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Errorf("a refused Spend changed the ledger file")
	}
	// Float slack: 0.1 + 0.2 for a remainder of exactly 0.3 is accepted
	// and the total clamped to the budget, never above it.
	if _, err := l.Spend("r3", []privacy.Event{lapEvent(0.1), lapEvent(0.2)}); err != nil {
		t.Errorf("Spend(0.1 + 0.2) with 0.3 left = %v; want nil", err)
	}
	if s := l.Spent(); s.Epsilon > 1 {
		t.Errorf("Spent().Epsilon = %v; want ≤ the budget 1", s.Epsilon)
	}
	if err := l.Check([]privacy.Event{lapEvent(1e-6)}); !errors.Is(err, ErrBudgetExhausted) {
		t.Errorf("Check after exhausting the budget = %v; want ErrBudgetExhausted", err)
	}
}

func TestLedgerComposesGaussianRoundsTightly(t *testing.T) {
	l, err := OpenLedger(filepath.Join(t.TempDir(), "p.ledger"), Budget{Epsilon: 2.6, Delta: 1e-5})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for r := range 10 {
		if err := l.Charge(context.Background(), fmt.Sprintf("round-%d", r), []privacy.Event{gaussEvent(5)}); err != nil {
			t.Fatalf("round %d: Charge = %v; want nil (10 rounds of σ = 5 cost ε = 2.594 as GDP)", r, err)
		}
	}
	if got := l.Spent().Epsilon; math.Abs(got-2.5944) > 1e-4 {
		t.Errorf("Spent().Epsilon after 10 rounds = %v; want 2.5944", got)
	}
	if err := l.Check([]privacy.Event{gaussEvent(5)}); !errors.Is(err, ErrBudgetExhausted) {
		t.Errorf("an 11th round: Check = %v; want ErrBudgetExhausted", err)
	}
}

func TestLedgerRestoreRetryAndDamage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.ledger")
	b := Budget{Epsilon: 5, Delta: 1e-5}
	l, err := OpenLedger(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLedger(path, b); err == nil {
		t.Errorf("a second OpenLedger of an open ledger = nil error; want the file lock to refuse")
	}
	for i, ev := range []privacy.Event{lapEvent(1), gaussEvent(4), lapEvent(0.25)} {
		if _, err := l.Spend(fmt.Sprintf("r%d", i), []privacy.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	want := l.Spent()
	if _, err := l.Spend("r1", []privacy.Event{gaussEvent(4)}); err != nil || !reflect.DeepEqual(l.Spent(), want) {
		t.Errorf("retrying r1 = %v, spent %+v; want nil and nothing more charged", err, l.Spent())
	}
	if _, err := l.Spend("r1", []privacy.Event{lapEvent(2)}); err == nil {
		t.Errorf("reusing r1 for a different release = nil error; want an error")
	}
	l.Close()
	data, _ := os.ReadFile(path)

	l2, err := OpenLedger(path, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := l2.Spent(); !reflect.DeepEqual(got, want) {
		t.Errorf("restored Spent() = %+v; want %+v", got, want)
	}
	if got := len(l2.Records()); got != 3 {
		t.Errorf("restored %d records; want 3", got)
	}
	l2.Close()
	if again, _ := os.ReadFile(path); !bytes.Equal(again, data) {
		t.Errorf("reopening changed the ledger file")
	}
	if _, err := OpenLedger(path, Budget{Epsilon: 6, Delta: 1e-5}); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Errorf("OpenLedger with another budget = %v; want a budget mismatch error", err)
	}

	// A flipped byte in a middle record is damage, reported with its line.
	bad := bytes.Clone(data)
	lines := bytes.SplitAfter(bad, []byte("\n"))
	i := len(lines[0]) + 20
	bad[i] ^= 0x01
	os.WriteFile(path, bad, 0o600)
	if _, err := OpenLedger(path, b); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("OpenLedger of a damaged record = %v; want an error naming line 2", err)
	}
	// A torn last record is dropped.
	os.WriteFile(path, data[:len(data)-7], 0o600)
	l3, err := OpenLedger(path, b)
	if err != nil {
		t.Fatalf("OpenLedger with a torn last record = %v; want it dropped", err)
	}
	if n := len(l3.Records()); n != 2 {
		t.Errorf("after a torn last record: %d records; want 2", n)
	}
	l3.Close()
	// Events of another unit are refused.
	l4, _ := OpenLedger(filepath.Join(dir, "q.ledger"), Budget{Epsilon: 5, Delta: 1e-5, Unit: "document"})
	defer l4.Close()
	ev := lapEvent(1)
	ev.Unit = "word occurrence"
	if err := l4.Check([]privacy.Event{ev}); !errors.Is(err, privacy.ErrInvalidParameter) {
		t.Errorf("Check with another unit = %v; want ErrInvalidParameter", err)
	}
}

func TestLedgerConcurrent(t *testing.T) {
	l, err := OpenLedger(filepath.Join(t.TempDir(), "p.ledger"), Budget{Epsilon: 10, Delta: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				if _, err := l.Spend(fmt.Sprintf("g%d-%d", g, i), []privacy.Event{lapEvent(0.25)}); err == nil {
					mu.Lock()
					accepted++
					mu.Unlock()
				} else if !errors.Is(err, ErrBudgetExhausted) {
					t.Errorf("Spend = %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if accepted != 40 || l.Spent().Epsilon != 10 {
		t.Errorf("80 concurrent spends of 0.25 against 10: accepted %d, spent %v; want 40 and 10", accepted, l.Spent().Epsilon)
	}
}

// crashFile lets a test kill the ledger part-way through a write: after
// allow more bytes, writes are cut short and everything fails.
type crashFile struct {
	f       appendFile
	allow   int // bytes still allowed; < 0 = unlimited
	noSync  bool
	crashed bool
}

var errCrash = errors.New("simulated crash")

func (c *crashFile) Write(p []byte) (int, error) {
	if c.crashed {
		return 0, errCrash
	}
	if c.allow >= 0 && len(p) > c.allow {
		n, _ := c.f.Write(p[:c.allow])
		c.crashed = true
		return n, errCrash
	}
	if c.allow >= 0 {
		c.allow -= len(p)
	}
	return c.f.Write(p)
}

func (c *crashFile) Sync() error {
	if c.crashed || c.noSync {
		c.crashed = true
		return errCrash
	}
	return c.f.Sync()
}

func (c *crashFile) Close() error { return c.f.Close() }

// TestLedgerCrashRestartProperty checks restart invariance: random sequences of
// release, crash (at a random byte of a record, or between write and fsync,
// or between charge and send), restart and retry. Invariants: the recorded
// ε is ≥ the ε of what was actually released and ≤ the budget, and a
// restart restores the ledger byte for byte — the acknowledged state, plus
// the in-flight record only if it reached the file whole.
func TestLedgerCrashRestartProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dir, err := os.MkdirTemp("", "ledger-prop")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "p.ledger")
		budget := Budget{Epsilon: 4, Delta: 1e-5}
		var cf *crashFile
		open := func() *Ledger {
			l, err := openLedger(path, budget, func(f appendFile) appendFile {
				cf = &crashFile{f: f, allow: -1}
				return cf
			})
			if err != nil {
				t.Fatalf("reopen: %v", err)
			}
			return l
		}
		l := open()
		acked, _ := os.ReadFile(path)
		var released []privacy.Event // what actually left
		pending := map[string][]privacy.Event{}
		var pendingIDs []string
		next := 0
		restart := func(inflight []byte) {
			l.Close()
			onDisk, _ := os.ReadFile(path)
			l = open()
			restored, _ := os.ReadFile(path)
			switch {
			case bytes.Equal(restored, acked):
			case inflight != nil && bytes.Equal(restored, append(bytes.Clone(acked), inflight...)):
			default:
				t.Fatalf("restored ledger (%d bytes) is neither the acknowledged state (%d bytes) nor it plus the in-flight record; on disk before restart: %d bytes", len(restored), len(acked), len(onDisk))
			}
			acked = restored
		}
		steps := rapid.IntRange(1, 25).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 3).Draw(t, "action") {
			case 0, 1: // release (new, or a retry of one not yet sent)
				var id string
				var evs []privacy.Event
				if len(pendingIDs) > 0 && rapid.Bool().Draw(t, "retry") {
					id = pendingIDs[rapid.IntRange(0, len(pendingIDs)-1).Draw(t, "which")]
					evs = pending[id]
				} else {
					id = fmt.Sprintf("r%d", next)
					next++
					if rapid.Bool().Draw(t, "gaussian") {
						evs = []privacy.Event{gaussEvent(rapid.Float64Range(2, 10).Draw(t, "sigma"))}
					} else {
						evs = []privacy.Event{lapEvent(rapid.Float64Range(0.05, 1.5).Draw(t, "eps"))}
					}
				}
				if err := l.Check(evs); err != nil {
					if !errors.Is(err, ErrBudgetExhausted) {
						t.Fatalf("Check: %v", err)
					}
					continue
				}
				crash := rapid.IntRange(0, 3).Draw(t, "crash")
				var line []byte
				if crash == 1 { // die part-way through the record
					cf.allow = rapid.IntRange(0, 200).Draw(t, "bytes")
				}
				if crash == 2 { // die between write and fsync
					cf.noSync = true
				}
				before, _ := os.ReadFile(path)
				_, err := l.Spend(id, evs)
				after, _ := os.ReadFile(path)
				if len(after) > len(before) {
					line = after[len(before):]
					if !bytes.HasSuffix(line, []byte("\n")) {
						line = nil // torn: must be dropped
					}
				}
				if err != nil {
					if errors.Is(err, ErrBudgetExhausted) {
						t.Fatalf("Spend refused after Check passed: %v", err)
					}
					pending[id] = evs
					if !containsID(pendingIDs, id) {
						pendingIDs = append(pendingIDs, id)
					}
					restart(line)
					continue
				}
				acked, _ = os.ReadFile(path)
				if crash == 3 { // charged, then died before sending
					pending[id] = evs
					if !containsID(pendingIDs, id) {
						pendingIDs = append(pendingIDs, id)
					}
					restart(nil)
					continue
				}
				released = append(released, evs...)
				delete(pending, id)
				pendingIDs = removeID(pendingIDs, id)
			case 2: // clean restart
				restart(nil)
			case 3: // crash with nothing in flight
				restart(nil)
			}
			spent := l.Spent()
			if spent.Epsilon > budget.Epsilon || spent.Delta > budget.Delta {
				t.Fatalf("spent %+v exceeds the budget %+v", spent, budget)
			}
			if len(released) > 0 {
				want, err := Compose(released, budget.Delta)
				if err != nil {
					t.Fatal(err)
				}
				if spent.Epsilon < want.Epsilon-1e-9 {
					t.Fatalf("recorded ε = %v is below the ε actually released, %v", spent.Epsilon, want.Epsilon)
				}
			}
		}
		l.Close()
	})
}

func containsID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

func removeID(ids []string, id string) []string {
	out := ids[:0]
	for _, x := range ids {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

func TestLedgerSlackSurvivesRestart(t *testing.T) {
	// 0.33 + 0.56 + 0.11 is 1.0000000000000002 in float64: within the slack,
	// so it is charged and the total clamped to the budget of 1 — before
	// and after a restart.
	path := filepath.Join(t.TempDir(), "p.ledger")
	b := Budget{Epsilon: 1}
	l, err := OpenLedger(path, b)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range []float64{0.33, 0.56, 0.11} {
		if _, err := l.Spend(fmt.Sprint(i), []privacy.Event{lapEvent(e)}); err != nil {
			t.Fatalf("Spend(%v) = %v", e, err)
		}
	}
	if got := l.Spent().Epsilon; got != 1 {
		t.Errorf("Spent().Epsilon = %v; want exactly the budget 1", got)
	}
	l.Close()
	l2, err := OpenLedger(path, b)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if got := l2.Spent().Epsilon; got != 1 {
		t.Errorf("restored Spent().Epsilon = %v; want exactly the budget 1", got)
	}
}
