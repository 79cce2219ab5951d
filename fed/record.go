package fed

import (
	"time"

	"github.com/fedtopic/fedtopic/privacy"
)

// PartyStatus is where a party stands with the coordinator.
type PartyStatus int

// Party states. A party is live when Joined or Rejoined: the coordinator
// waits for its reply until the round's deadline.
const (
	Absent    PartyStatus = iota // never seen by this coordinator process
	Joined                       // called in, not yet missed a deadline
	Dropped                      // missed a round's deadline; not waited for
	Rejoined                     // called in again after being dropped
	Exhausted                    // refused a round (privacy budget); not waited for
)

// String returns the status name.
func (s PartyStatus) String() string {
	switch s {
	case Absent:
		return "absent"
	case Joined:
		return "joined"
	case Dropped:
		return "dropped"
	case Rejoined:
		return "rejoined"
	case Exhausted:
		return "exhausted"
	}
	return "unknown"
}

// live reports whether the coordinator waits for the party's replies.
func (s PartyStatus) live() bool { return s == Joined || s == Rejoined }

// PartyInfo is one party's state as the coordinator sees it.
type PartyInfo struct {
	ID     string      `json:"id"`
	Status PartyStatus `json:"status"`
}

// Traffic counts the bytes a transport carried between the coordinator and
// one party, as encoded on the wire.
type Traffic struct {
	Party string `json:"party"`
	Up    int64  `json:"up"`   // party → coordinator
	Down  int64  `json:"down"` // coordinator → party
}

// Rejection records an update the coordinator refused, and why. The reason
// never holds payload values.
type Rejection struct {
	Party  string `json:"party"`
	Reason string `json:"reason"`
}

// PartySpend is the privacy a party declared it spent on its update in a
// round. The party's own ledger is authoritative; this is the coordinator's
// informational view.
type PartySpend struct {
	Party  string          `json:"party"`
	Events []privacy.Event `json:"events"`
}

// RoundRecord describes one attempt at a round: who replied, who was
// dropped, what was rejected, bytes per party, privacy declared and how long
// it took. The coordinator hands one to CoordinatorOptions.OnRound after
// every committed round (after its checkpoint is durable) and after every
// attempt that missed its quorum.
type RoundRecord struct {
	Round     int  `json:"round"`
	Attempt   int  `json:"attempt"`
	Committed bool `json:"committed"`
	// Resumed marks the record of the last committed round, replayed by a
	// coordinator that resumed from its checkpoint; a consumer that already
	// has this round ignores it.
	Resumed          bool            `json:"resumed,omitempty"`
	Replied          []string        `json:"replied"`
	Dropped          []string        `json:"dropped,omitempty"`
	Rejoined         []string        `json:"rejoined,omitempty"`
	Refused          []string        `json:"refused,omitempty"`
	Rejected         []Rejection     `json:"rejected,omitempty"`
	Traffic          []Traffic       `json:"traffic"`
	Spent            []PartySpend    `json:"spent,omitempty"`
	CoordinatorSpent []privacy.Event `json:"coordinator_spent,omitempty"`
	Start            time.Time       `json:"start"`
	Duration         time.Duration   `json:"duration_ns"`
	Done             bool            `json:"done,omitempty"`
	Err              string          `json:"error,omitempty"`
	// Secure describes secure aggregation, when the round ran under it.
	Secure *SecureRecord `json:"secure_aggregation,omitempty"`
	// Step is the aggregator's output for a committed round (nil otherwise).
	Step *Step `json:"-"`
}

// Result is what a finished run produced.
type Result struct {
	Rounds  int       // committed rounds
	Final   Step      // the aggregator's last step (Done set)
	Traffic []Traffic // bytes per party over the whole run, this process
}
