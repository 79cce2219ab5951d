package fedlda

import (
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
)

// Secure aggregation (package fed/secagg). A party's tuples change the
// collector's counts by a K × V vector of integers — −1 at (k_old, w) and
// +1 at (k_new, w) for every tuple sent, dummies ignored — and the
// collector needs only the sum of the parties' vectors, so FedLDA opts in:
// under secure aggregation the collector learns that sum and nothing of
// any one party's tuples. The users' guarantee is the same local one (each
// tuple's word is perturbed before it leaves the user), so the noise and
// the charge do not change. The collector then adds the summed change to
// its counts and clips at 0 once, where Aggregate clips every −1 in turn:
// the two agree whenever no −1 meets an empty cell, which is always the
// case without perturbation (a user removes only a token it reported
// before) and is rare with it.

// SumClip is the largest count change one party may contribute to one
// topic-word cell under secure aggregation: 2^21, so the sum of up to
// 1,000 parties fits a signed 32-bit ring. A party whose users send more
// tuples than that for one cell refuses to mask its vector (an overflow
// error) rather than let the sum wrap.
const SumClip = 1 << 21

// sumSpec is FedLDA's update as a vector of sums: the K × V count changes,
// topic-major, as integers.
func sumSpec(k, v int) fed.SumSpec { return fed.SumSpec{Len: k * v, Clip: SumClip} }

// SumSpec implements fed.SumLearner.
func (l *Learner) SumSpec() fed.SumSpec { return sumSpec(l.k, l.v) }

// LearnSum implements fed.SumLearner: the round's tuples, perturbed as in
// Learn, summed into the count changes they make.
func (l *Learner) LearnSum(round int, broadcast []byte) ([]int64, []privacy.Event, error) {
	st, err := l.Learn(round, broadcast)
	if err != nil {
		return nil, nil, err
	}
	body := st.Payload[headerSize+8:]
	delta := make([]int64, l.k*l.v)
	for i := 0; i+tupleSize <= len(body); i += tupleSize {
		t := getTuple(body[i:])
		if t.dummy() {
			continue
		}
		if t.kOld != noTopic {
			delta[int(t.kOld)*l.v+int(t.w)]--
		}
		delta[int(t.kNew)*l.v+int(t.w)]++
	}
	return delta, st.Spent, nil
}

// SumSpec implements fed.SumAggregator.
func (a *Aggregator) SumSpec() fed.SumSpec { return sumSpec(a.k, a.v) }

// AggregateSum implements fed.SumAggregator: the counts plus the summed
// changes of the included parties, clipped to [0, MaxUint32]; each
// included party is recorded as having spent one iteration's events.
func (a *Aggregator) AggregateSum(round int, sum []int64, included []int) (fed.Step, error) {
	if len(sum) != len(a.n) {
		return fed.Step{}, fmt.Errorf("fedlda: round %d: sum of %d values, want K × V = %d", round, len(sum), len(a.n))
	}
	if a.cfg.Collector == CollectorDrop {
		return fed.Step{}, fmt.Errorf("fedlda: round %d: collector %q needs every tuple, and under secure aggregation the collector sees only summed counts: use collector %q", round, CollectorDrop, CollectorClip)
	}
	ev, err := a.cfg.Events()
	if err != nil {
		return fed.Step{}, err
	}
	for _, p := range included {
		if p < 0 || p >= len(a.parties) {
			return fed.Step{}, fmt.Errorf("fedlda: round %d: sum includes unknown party %d", round, p)
		}
		a.spent[p] = append(a.spent[p], ev...)
	}
	for i, x := range sum {
		a.n[i] = uint32(min(max(int64(a.n[i])+x, 0), math.MaxUint32))
	}
	a.rounds = round
	return fed.Step{Payload: encodeCounts(a.k, a.v, a.n), Done: round >= a.cfg.Rounds}, nil
}
