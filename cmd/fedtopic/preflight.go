package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/ftm"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim/vocabround"
)

// costPart is one kind of release a run makes, with what it costs each
// party at the ledger's unit (one document) and, where the method counts a
// smaller unit, at that unit too.
type costPart struct {
	release string          // what is released, in words: "vocabulary round"
	events  []privacy.Event // at the ledger's unit
	// methodUnit and methodEpsilon give the cost at the method's own unit
	// (FTM: ε per word occurrence), group the number of those units a
	// document holds at most; all zero when the method counts documents.
	methodUnit    string
	methodEpsilon float64
	group         int
	// knobs name the settings that lower this part's cost, as the user
	// sets them: "--epsilon" or "params.epsilon".
	knobs []string
}

// privacyPlan is what a run will cost each party, computed from its
// configuration alone before any noise is drawn or anything is charged.
// The ledger is charged the same events, so the plan and the spend agree.
type privacyPlan struct {
	parts []costPart
	total accountant.Cost
	costs []accountant.Cost // of each part alone
}

// budgetNames name the budget's settings as the user sets them.
type budgetNames struct {
	epsilon, delta string // "--budget-epsilon" or "budget.epsilon"
}

var (
	flagBudget   = budgetNames{epsilon: "--budget-epsilon", delta: "--budget-delta"}
	configBudget = budgetNames{epsilon: "budget.epsilon", delta: "budget.delta"}
)

// vocabRoundCost is the private vocabulary round's part of a plan.
func vocabRoundCost(p vocabround.Params, knobs ...string) (costPart, error) {
	sel, err := privacy.NewPartitionSelection(p.Selection)
	if err != nil {
		return costPart{}, err
	}
	return costPart{release: "vocabulary round", events: []privacy.Event{sel.Event()}, knobs: knobs}, nil
}

// ftmCost is FTM's part of a plan: one thresholded Laplace release per word
// occurrence, at the document level by group privacy over the clipped
// document length.
func ftmCost(cfg ftm.Config, knobs ...string) (costPart, error) {
	ev, err := cfg.Events()
	if err != nil || len(ev) == 0 {
		return costPart{}, err
	}
	eps := cfg.Epsilon
	if eps == 0 {
		eps = ftm.DefaultEpsilon
	}
	p := costPart{release: "FTM's privatized counts", events: ev, knobs: knobs}
	if cfg.Unit == ftm.UnitDocument {
		p.methodUnit, p.methodEpsilon, p.group = ftm.UnitWord, eps, cfg.MaxDocTokens
	}
	return p, nil
}

// linearGroup reports whether a group's ε is the unit's ε times the group
// size, as for pure ε-DP; Gaussian releases grow more slowly.
func linearGroup(groupEps, unitEps float64, group int) bool {
	return math.Abs(groupEps-unitEps*float64(group)) <= 1e-9*groupEps
}

// newPrivacyPlan composes parts as a party's ledger will, with δ the
// budget's δ (at which Gaussian releases are converted).
func newPrivacyPlan(delta float64, parts ...costPart) (privacyPlan, error) {
	p := privacyPlan{parts: parts}
	var all []privacy.Event
	for _, part := range parts {
		c, err := accountant.Compose(part.events, delta)
		if err != nil {
			return p, fmt.Errorf("privacy plan: %s: %w", part.release, err)
		}
		p.costs = append(p.costs, c)
		all = append(all, part.events...)
	}
	var err error
	if p.total, err = accountant.Compose(all, delta); err != nil {
		return p, fmt.Errorf("privacy plan: %w", err)
	}
	return p, nil
}

// private reports whether the plan makes any noised release.
func (p privacyPlan) private() bool { return p.total.Releases > 0 }

// unit returns the ledger's unit, "document" when nothing is released.
func (p privacyPlan) unit() string {
	if p.total.Unit == "" {
		return "document"
	}
	return p.total.Unit
}

// breakdown says what each part costs: "11 per word occurrence × 30 words
// + 4 for the vocabulary round".
func (p privacyPlan) breakdown() string {
	var s []string
	for i, part := range p.parts {
		c := p.costs[i]
		switch {
		case part.group > 0 && linearGroup(c.Epsilon, part.methodEpsilon, part.group):
			s = append(s, fmt.Sprintf("%s per %s × %d words for %s", fmtEps(part.methodEpsilon), part.methodUnit, part.group, part.release))
		case part.group > 0:
			// Gaussian releases do not add up linearly over a group.
			s = append(s, fmt.Sprintf("%s for %s (%s per %s; a document of at most %d)", fmtEps(c.Epsilon), part.release, fmtEps(part.methodEpsilon), part.methodUnit, part.group))
		default:
			s = append(s, fmt.Sprintf("%s for the %s", fmtEps(c.Epsilon), part.release))
		}
	}
	return strings.Join(s, " + ")
}

// String is the plan in one line: "ε = 334 per document (…), δ = 1e-06".
func (p privacyPlan) String() string {
	if !p.private() {
		return "no noised release: ε = 0"
	}
	s := fmt.Sprintf("ε = %s per %s", fmtEps(p.total.Epsilon), p.unit())
	if len(p.parts) > 1 || p.parts[0].group > 0 {
		s += " (" + p.breakdown() + ")"
	}
	if p.total.Delta > 0 {
		s += fmt.Sprintf(", δ = %.3g", p.total.Delta)
	}
	return s
}

// check refuses a plan that does not fit budget, before anything is
// released, naming the numbers and the settings to change.
func (p privacyPlan) check(b accountant.Budget, names budgetNames) error {
	const slack = 1e-9 // the ledger's own tolerance for float rounding
	var errs []error
	if p.total.Epsilon > b.Epsilon*(1+slack) {
		var knobs []string
		for _, part := range p.parts {
			knobs = append(knobs, part.knobs...)
		}
		msg := fmt.Sprintf("the run needs %s of each party, but the budget is ε = %s: raise %s to at least %s",
			p, fmtEps(b.Epsilon), names.epsilon, fmtEps(math.Ceil(p.total.Epsilon*1e6)/1e6))
		if len(knobs) > 0 {
			msg += ", or lower " + strings.Join(knobs, " / ")
		}
		errs = append(errs, errors.New(msg))
	}
	if p.total.Delta > b.Delta*(1+slack) {
		errs = append(errs, fmt.Errorf("the run needs δ = %.3g of each party, but the budget is δ = %.3g: raise %s to at least %.3g",
			p.total.Delta, b.Delta, names.delta, p.total.Delta))
	}
	return errors.Join(errs...)
}

// statementCosts records the plan in a run's privacy statement.
func (p privacyPlan) statementCosts() []fed.ReleaseCost {
	var out []fed.ReleaseCost
	for i, part := range p.parts {
		c := p.costs[i]
		out = append(out, fed.ReleaseCost{Release: part.release, Epsilon: c.Epsilon, Delta: c.Delta, Unit: c.Unit,
			MethodEpsilon: part.methodEpsilon, MethodUnit: part.methodUnit, GroupSize: part.group})
	}
	return out
}
