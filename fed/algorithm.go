package fed

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// Learner is the party half of an algorithm. Learn consumes the round's
// broadcast and returns the party's update and the privacy events the update
// releases. A Learner does no I/O, reads no clock and starts no goroutine it
// does not join before returning; all its randomness comes from streams it
// was built with.
//
// Rounds are numbered from 1. Learn is called at most once per round: the
// engine caches the returned payload and resends those exact bytes if the
// round is retried, so a Learner never has to make the same release twice.
// A Learner that implements encoding.BinaryMarshaler and
// encoding.BinaryUnmarshaler can be restored after its process restarts.
type Learner interface {
	Learn(round int, broadcast []byte) (Step, error)
}

// Aggregator is the coordinator half of an algorithm. Init returns the first
// round's broadcast; Aggregate combines one round's updates, sorted by party
// index, into the next round's broadcast (or the final model, with Done set).
// Like a Learner it does no I/O and has no clock. An Aggregator that
// implements encoding.BinaryMarshaler and encoding.BinaryUnmarshaler can be
// checkpointed, which a coordinator with a state directory requires.
type Aggregator interface {
	Init() (Step, error)
	Aggregate(round int, updates []Update) (Step, error)
}

// Step is what one half of an algorithm hands to the engine.
//
// For a Learner, Payload is the update sent to the coordinator and Spent the
// privacy events it releases; the engine charges Spent to the party's ledger
// before the payload leaves. Done is not used on the party side.
//
// For an Aggregator, Payload is the broadcast for the next round, sent to
// every party unless PerParty holds a non-nil entry for that party (FTM
// composes a different local model per party). Spent lists releases made by
// the coordinator itself (central noise), and Done ends the run: Payload is
// then the final model's encoding.
type Step struct {
	Payload  []byte
	PerParty [][]byte // indexed by party; nil or short means Payload for everyone
	Spent    []privacy.Event
	Done     bool
}

// broadcastFor returns the bytes party i receives.
func (s *Step) broadcastFor(i int) []byte {
	if i < len(s.PerParty) && s.PerParty[i] != nil {
		return s.PerParty[i]
	}
	return s.Payload
}

// Update is one party's reply in a round, as the aggregator receives it:
// already validated by the algorithm's Validator.
type Update struct {
	Party   int    // index into the federation's party list
	ID      string // the party's identity
	Payload []byte
	Spent   []privacy.Event // what the party declared it spent (informational)
}

// Validator checks an algorithm's messages before the engine uses them. The
// coordinator calls CheckUpdate on every incoming update before it reaches
// the aggregator; a rejected update is logged (without its values) and left
// out, and the round goes on with the other parties.
type Validator interface {
	// CheckUpdate reports why payload is not a valid update for round:
	// wrong size or shape, NaN or ±Inf, values out of range.
	CheckUpdate(round int, payload []byte) error
	// MaxUpdateSize is the largest valid update payload in bytes.
	MaxUpdateSize() int
	// MaxBroadcastSize is the largest broadcast payload in bytes.
	MaxBroadcastSize() int
}

// Planner is implemented by Learners that can state before drawing any noise
// what a round will release. The party checks the plan against its ledger
// and refuses the round up front when it would not fit the budget.
type Planner interface {
	Plan(round int) ([]privacy.Event, error)
}

// Finisher is implemented by Learners that update their local model from the
// final broadcast when the run ends.
type Finisher interface {
	Finish(final []byte) error
}

// Modeler is implemented by Aggregators and Learners that can present their
// current state as a topic model (the global model, or a party's local one).
type Modeler interface {
	Model() (*topic.Model, error)
}

// TopicRef names one topic of one party's local model.
type TopicRef struct {
	Party      string  `json:"party"`
	Topic      int     `json:"topic"`
	Similarity float64 `json:"similarity,omitempty"` // to the global topic it was merged into, if known
}

// TopicMerge records which party topics one global topic was merged from.
type TopicMerge struct {
	Global  int        `json:"global"`
	Members []TopicRef `json:"members"`
}

// Merger is implemented by Aggregators that build global topics by merging
// the parties' topics (FTM): Merges describes the last aggregation, one
// entry per global topic in the global model's order. The merges are
// derived from what the parties released, so recording them releases
// nothing new.
type Merger interface {
	Merges() []TopicMerge
}

// Setup is what both halves of an algorithm are built from: the shape of the
// federation and the algorithm's own parameters.
type Setup struct {
	Run     string          `json:"run"`     // run (federation) id
	Parties []string        `json:"parties"` // party ids in index order
	Vocab   []string        `json:"vocab"`   // the shared vocabulary; word id = index
	Seed    uint64          `json:"seed"`    // seed of this half's random streams
	Params  json.RawMessage `json:"params"`  // algorithm parameters, decoded by the algorithm
}

// Validate reports every problem with s.
func (s *Setup) Validate() error {
	var errs []error
	if s.Run == "" {
		errs = append(errs, fmt.Errorf("fed: setup: empty run id"))
	}
	if len(s.Parties) == 0 {
		errs = append(errs, fmt.Errorf("fed: setup: no parties"))
	}
	if err := checkPartyIDs(s.Parties); err != nil {
		errs = append(errs, fmt.Errorf("fed: setup: %w", err))
	}
	return errors.Join(errs...)
}

// Algorithm describes one federated algorithm to the engine and to the
// command line: its name and how to build its halves and its validator from
// a Setup. Method packages export one as `var Algorithm`.
type Algorithm struct {
	Name string
	// NewAggregator builds the coordinator half.
	NewAggregator func(s Setup) (Aggregator, error)
	// NewLearner builds the half of party s.Parties[party] over its local
	// documents. Learners derive their random streams from the party's id,
	// not its index: unless NeedsParties is set, a deployed party builds
	// its learner from a Setup that lists only itself, and must draw what
	// it would in a simulation.
	NewLearner func(s Setup, party int, docs *corpus.Corpus) (Learner, error)
	// NewValidator builds the update checks, which both sides use (the
	// coordinator to validate, both to size transport limits).
	NewValidator func(s Setup) (Validator, error)
	// NeedsParties is set when a party's half depends on the whole
	// federation — every party's id and position in Setup.Parties, as in
	// FTM, where parties may have different numbers of topics and the final
	// model has all of theirs. A deployed party then lists the federation
	// in its configuration and checks its size against the coordinator's
	// when it joins (PartyConfig.Parties).
	NeedsParties bool
}

// checkPartyIDs reports empty or repeated party ids.
func checkPartyIDs(ids []string) error {
	var errs []error
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		if err := checkConfigID("id", id); err != nil {
			errs = append(errs, fmt.Errorf("party %d: %w", i, err))
		}
		if seen[id] {
			errs = append(errs, fmt.Errorf("party %d: duplicate id %q", i, id))
		}
		seen[id] = true
	}
	return errors.Join(errs...)
}

// indexOf returns the index of id in ids, or -1.
func indexOf(ids []string, id string) int { return slices.Index(ids, id) }
