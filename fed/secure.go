package fed

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/fed/secagg"
	"github.com/fedtopic/fedtopic/privacy"
)

// SecureAggregation configures secure aggregation (package fed/secagg):
// the coordinator learns only the sum of the surviving parties' updates.
// The coordinator and every party must be configured alike; the
// coordinator refuses a party whose setting differs when it joins.
type SecureAggregation struct {
	// Threshold is t: the fewest parties whose updates are summed, and the
	// round's quorum. n/2 < t ≤ n.
	Threshold int `json:"threshold" yaml:"threshold"`
}

// threshold returns t, or 0 when s is nil (secure aggregation off).
func (s *SecureAggregation) threshold() int {
	if s == nil {
		return 0
	}
	return s.Threshold
}

// validate checks s for a federation of n parties.
func (s *SecureAggregation) validate(n int) error {
	if s == nil {
		return nil
	}
	if 2*s.Threshold <= n || s.Threshold > n {
		return fmt.Errorf("secure_aggregation: threshold %d with %d parties: need n/2 < t ≤ n", s.Threshold, n)
	}
	return nil
}

// MaxSecAggParties is the largest federation secure aggregation serves.
const MaxSecAggParties = secagg.MaxParties

// SecAggBits is the largest ring Z_(2^k) secure aggregation masks values
// in: a SumSpec's clip must let the sum of every party's values fit it.
// Each round masks in the smallest ring that holds that sum (at least
// secagg.MinBits), and a masked value travels in k bits, packed.
const SecAggBits = 32

// SumSpec describes an update that is a vector of sums, as both halves of
// an algorithm declare it for secure aggregation. Values travel on a
// fixed-point grid: a real value x is the integer round(x·2^FracBits).
type SumSpec struct {
	// Len is the number of values of every update.
	Len int
	// FracBits is the number of fraction bits of the grid (0: integers).
	FracBits int
	// Clip is the largest magnitude, in real units and noise included, a
	// party may contribute in any coordinate. A party refuses to mask a
	// value past it, so the sum cannot wrap around the ring.
	Clip float64
	// Sigma, if positive, turns on distributed noise: each party adds a
	// discrete Gaussian of parameter Sigma/√t (grid steps) before masking,
	// so that the sum of at least t survivors carries noise of standard
	// deviation at least Sigma, and is charged for that worst case.
	Sigma float64
	// Sensitivity is the L2 sensitivity of one party's vector, in grid
	// steps, per privacy unit; used for the charge when Sigma is set.
	Sensitivity float64
	// Unit is the privacy unit of the charge.
	Unit string
}

// SumLearner is implemented by Learners whose update is a vector of sums.
// With secure aggregation on, the engine calls LearnSum instead of Learn:
// it returns the party's vector on the grid of SumSpec (every value within
// ±Clip·2^FracBits) and the privacy events of the release, not counting
// distributed noise, which the engine adds and charges itself.
type SumLearner interface {
	Learner
	SumSpec() SumSpec
	LearnSum(round int, broadcast []byte) (values []int64, spent []privacy.Event, err error)
}

// RoundSumLearner is implemented by SumLearners whose distributed noise
// differs from round to round (a noise schedule). Before LearnSum the
// engine asks it for the spec of the round it is about to learn, so that a
// party that missed rounds (dropped out under a threshold below the number
// of parties) adds that round's share of the noise and no other.
type RoundSumLearner interface {
	SumLearner
	SumSpecFor(round int) SumSpec
}

// SumAggregator is implemented by Aggregators whose aggregate is a sum of
// the updates. With secure aggregation on, the engine calls AggregateSum
// with the sum of the updates of the parties in included (ascending party
// indexes) on the grid of SumSpec, and never sees an individual update.
type SumAggregator interface {
	Aggregator
	SumSpec() SumSpec
	AggregateSum(round int, sum []int64, included []int) (Step, error)
}

// SecureRecord describes secure aggregation in a round's record.
type SecureRecord struct {
	Threshold int `json:"threshold"`
	// Stages counts the protocol's stages this attempt completed (4 when
	// the sum was unmasked).
	Stages int `json:"stages"`
	// Included lists the parties whose updates are in the sum.
	Included []string `json:"included,omitempty"`
	// Sigma is the total σ of distributed noise on the grid (0: none);
	// each party was charged for exactly Threshold survivors.
	Sigma float64 `json:"sigma,omitempty"`
}

// NoiseStatement is what a run record says about distributed noise.
const NoiseStatement = "distributed discrete-Gaussian noise: each party adds σ/√t before masking and is charged the Gaussian release of total σ at the worst case it accepted, exactly t survivors"

// secAggParams returns the parameters of secure aggregation in attempt
// attempt of round r: a session derived from the run, the round and the
// attempt, so no two instances share one, and the smallest ring up to
// SecAggBits in which the sum of the parties' clipped values cannot wrap.
func secAggParams(run string, round, attempt, parties, threshold int, spec SumSpec) (secagg.Params, error) {
	h := sha256.New()
	h.Write([]byte("fedtopic secure aggregation session\x00"))
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(run))))
	h.Write([]byte(run))
	h.Write(binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, uint64(round)), uint64(attempt)))
	p := secagg.Params{Session: h.Sum(nil), Parties: parties, Threshold: threshold,
		Bits: min(secagg.RingBits(parties, spec.Clip, spec.FracBits), SecAggBits), FracBits: spec.FracBits, Clip: spec.Clip, Len: spec.Len}
	if err := p.Validate(); err != nil {
		return p, err
	}
	return p, nil
}

// checkSumSpec reports an unusable SumSpec.
func checkSumSpec(s SumSpec) error {
	var errs []error
	if s.Len < 1 || s.Len > secagg.MaxLen {
		errs = append(errs, fmt.Errorf("vector length %d outside [1, %d]", s.Len, secagg.MaxLen))
	}
	if s.Sigma < 0 || math.IsNaN(s.Sigma) || math.IsInf(s.Sigma, 0) {
		errs = append(errs, fmt.Errorf("noise sigma %v", s.Sigma))
	}
	if s.Sigma > 0 && !(s.Sensitivity > 0) {
		errs = append(errs, errors.New("distributed noise without a positive sensitivity"))
	}
	return errors.Join(errs...)
}

// noiseEvent is the charge of a party's share of distributed noise: the
// discrete Gaussian release of the sum at its worst case, exactly t
// survivors, total σ.
func noiseEvent(s SumSpec) privacy.Event {
	return privacy.Event{Mechanism: privacy.MechanismDiscreteGaussian, Sigma: s.Sigma, Sensitivity: s.Sensitivity, Unit: s.Unit, Count: 1}
}

// SecAggMaxMessage is the largest message secure aggregation sends either
// way for a federation of n parties and updates of length l; transports
// must allow at least this much besides the algorithm's own payload bounds.
func SecAggMaxMessage(n, l int) int {
	return secagg.MaxMessageSize(n, l, SecAggBits)
}

// encodeGrid and decodeGrid store a party's grid vector in its cache.
func encodeGrid(v []int64) []byte {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(x))
	}
	return b
}

func decodeGrid(b []byte) ([]int64, error) {
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("%w: cached vector of %d bytes", ErrCheckpoint, len(b))
	}
	v := make([]int64, len(b)/8)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return v, nil
}

// SummarizeSecure returns what a run's summary says about secure
// aggregation with setting sa over aggregator agg: nil when sa is nil.
func SummarizeSecure(sa *SecureAggregation, agg Aggregator) *SecureSummary {
	if sa == nil {
		return nil
	}
	s := &SecureSummary{Threshold: sa.Threshold}
	if sum, ok := agg.(SumAggregator); ok && sum.SumSpec().Sigma > 0 {
		s.Sigma, s.Noise = sum.SumSpec().Sigma, NoiseStatement
	}
	return s
}
