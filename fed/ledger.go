package fed

import (
	"context"

	"github.com/fedtopic/fedtopic/privacy"
)

// Ledger is a party's durable record of its privacy spending against its
// budget; *accountant.Ledger implements it. The party consults it before
// every release: Check before any noise is drawn (when the learner can plan
// its spend), Charge after the update is computed and before it leaves.
// Charging a release name again with the same events must be a no-op.
type Ledger interface {
	// Check reports, recording nothing, whether events fit in the remaining
	// budget; if not, the error wraps ErrBudgetExhausted and names the
	// requested and remaining budget.
	Check(events []privacy.Event) error
	// Charge records events as spent by the release named release and makes
	// the record durable (fsync) before it returns. A spend that would
	// exceed the budget is refused, recording nothing, with an error
	// wrapping ErrBudgetExhausted.
	Charge(ctx context.Context, release string, events []privacy.Event) error
}
