package fednmf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// Aggregator is FedNMF's server half. It initializes W (and the critic θ),
// samples the clients of each round, sends them the model and the others a
// skip message, and turns the sampled clients' deltas into the
// pseudo-gradient
//
//	Δ = Σ_i (N_i / Σ_j N_j)·Δ_i                   (without DP)
//	Δ = (Σ_i clip(Δ_i) + N(0, (z·S)²I)) / (C·n)   (DP-FedAvg)
//
// which the server optimizer applies. The optimizer's state is part of its
// checkpoint.
type Aggregator struct {
	cfg     Config
	parties []string
	vocab   []string
	seed    uint64
	sh      shape
	x       []float64 // W (V×K) then θ
	opt     *serverOpt
	round   int    // the open round
	sel     []bool // clients sampled in the open round
	noise   *privacy.Source
	mech    *privacy.ContinuousGaussian
}

// NewAggregator returns the coordinator half for s.
func NewAggregator(s fed.Setup) (*Aggregator, error) {
	cfg, err := ParseConfig(s.Params)
	if err != nil {
		return nil, err
	}
	if len(s.Parties) == 0 {
		return nil, errors.New("fednmf: no clients")
	}
	if len(s.Vocab) == 0 {
		return nil, errors.New("fednmf: empty vocabulary")
	}
	return newAggregator(cfg.WithDefaults(), s)
}

// newAggregator builds the server half for a config with defaults set.
func newAggregator(cfg Config, s fed.Setup) (*Aggregator, error) {
	var err error
	sh := shapeOf(cfg, len(s.Vocab))
	a := &Aggregator{cfg: cfg, parties: s.Parties, vocab: s.Vocab, seed: s.Seed, sh: sh,
		x: make([]float64, sh.n()), opt: newServerOpt(cfg, sh.n(), sh.v*sh.k)}
	// W⁽⁰⁾ uniform with columns of expected unit L2 norm, the norm of a
	// tf-idf document; θ⁽⁰⁾ as PyTorch initializes linear layers.
	r := rng.Derive(s.Seed, "fednmf", "init")
	scale := math.Sqrt(3 / float64(sh.v))
	for i := range sh.v * sh.k {
		a.x[i] = r.Float64() * scale
	}
	if sh.p > 0 {
		critic{sh.v, sh.k}.init(r, a.x[sh.v*sh.k:])
	}
	if cfg.DP() {
		if a.mech, err = privacy.NewContinuousGaussian(privacy.GaussianConfig{Sigma: cfg.NoiseMultiplier * cfg.Clip, Sensitivity: cfg.Clip, Unit: UnitClient}); err != nil {
			return nil, fmt.Errorf("fednmf: %w", err)
		}
		if cfg.SecureNoise {
			a.noise = privacy.NewSecureSource()
		} else {
			a.noise = privacy.NewSeededSource(s.Seed)
		}
	}
	return a, nil
}

// sample draws the clients of round r: m = max(⌊C·n⌋, 1) without
// replacement, or each with probability C under DP (Poisson sampling).
func (a *Aggregator) sample(r int) []bool {
	n := len(a.parties)
	sel := make([]bool, n)
	rr := rng.Derive(a.seed, "fednmf", "sample", r)
	if a.cfg.DP() {
		for i := range sel {
			sel[i] = rr.Float64() < a.cfg.ClientFraction
		}
		return sel
	}
	for _, i := range rr.Perm(n)[:a.cfg.SampleSize(n)] {
		sel[i] = true
	}
	return sel
}

// open starts round r: it samples the clients and builds the broadcasts.
func (a *Aggregator) open(r int) fed.Step {
	a.round, a.sel = r, a.sample(r)
	st := fed.Step{Payload: encodeModel(a.sh, a.x), PerParty: make([][]byte, len(a.parties))}
	skip := encodeSkip()
	for i, s := range a.sel {
		if !s {
			st.PerParty[i] = skip
		}
	}
	return st
}

// Init implements fed.Aggregator.
func (a *Aggregator) Init() (fed.Step, error) { return a.open(1), nil }

// Aggregate implements fed.Aggregator.
func (a *Aggregator) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	if round != a.round {
		return fed.Step{}, fmt.Errorf("fednmf: aggregate round %d, but round %d is open", round, a.round)
	}
	n := a.sh.n()
	// Without DP the deltas are summed exactly on the grid of step 2^−32
	// that secure aggregation uses (secure.go), so that a run under it
	// gives this one's model bit for bit.
	var sum []float64
	var acc []int64
	if a.cfg.DP() {
		sum = make([]float64, n)
	} else {
		acc = make([]int64, n)
	}
	var weight int64
	limit := plainLimit(len(a.parties))
	for _, u := range updates {
		if u.Party < 0 || u.Party >= len(a.sel) {
			return fed.Step{}, fmt.Errorf("fednmf: round %d: update from party index %d outside the federation", round, u.Party)
		}
		up, err := decodeUpdate(u.Payload, a.sh)
		if err != nil {
			return fed.Step{}, fmt.Errorf("fednmf: round %d: party %s: %w", round, u.ID, err)
		}
		switch {
		case up.delta == nil && a.sel[u.Party]:
			return fed.Step{}, fmt.Errorf("fednmf: round %d: party %s was sampled but sent no update", round, u.ID)
		case up.delta == nil:
			continue
		case !a.sel[u.Party]:
			return fed.Step{}, fmt.Errorf("fednmf: round %d: party %s was not sampled but sent an update", round, u.ID)
		}
		if !a.cfg.DP() {
			if j, ok := accumulate(acc, up.docs, up.delta, limit); !ok {
				return fed.Step{}, fmt.Errorf("fednmf: round %d: party %s: entry %d of the update times the party's document count is too large to sum exactly (the local SGD diverged)", round, u.ID, j)
			}
			weight += int64(up.docs)
			continue
		}
		if norm := clipTo(up.delta, a.cfg.Clip); norm > a.cfg.Clip*(1+1e-9) {
			return fed.Step{}, fmt.Errorf("fednmf: round %d: party %s: update of norm above the clip S = %v", round, u.ID, a.cfg.Clip)
		}
		weight++
		for i, d := range up.delta {
			sum[i] += d
		}
	}
	switch {
	case a.cfg.DP():
		a.noisyMean(round, sum)
		ev, _ := a.cfg.RoundEvent(UnitClient)
		return a.advance(round, sum, []privacy.Event{ev})
	case weight > 0:
		return a.advance(round, gridMean(acc, weight), nil)
	}
	return a.advance(round, nil, nil)
}

// advance applies round's pseudo-gradient delta (nil: no client's update
// arrived) with the server optimizer and returns the next round's
// broadcast, or the final model after the last round, with the
// coordinator's releases spent.
func (a *Aggregator) advance(round int, delta []float64, spent []privacy.Event) (fed.Step, error) {
	if delta != nil {
		a.opt.step(a.x, delta)
	}
	if round >= a.cfg.Rounds {
		return fed.Step{Payload: encodeFinal(a.sh, a.x[:a.sh.v*a.sh.k]), Spent: spent, Done: true}, nil
	}
	next := a.open(round + 1)
	next.Spent = spent
	return next, nil
}

// noisyMean turns the sum of round's clipped updates into DP-FedAvg's
// estimate of their mean: (sum + N(0, (z·S)²I)) / (C·n), with the fixed
// denominator C·n, the expected number of sampled clients (McMahan et al.
// 2018), so that the sensitivity to one client stays S/(C·n).
func (a *Aggregator) noisyMean(round int, sum []float64) {
	noise := make([]float64, len(sum))
	a.mech.Fill(a.noise.Stream("fednmf", "round", round, "noise"), noise)
	den := a.cfg.ClientFraction * float64(len(a.parties))
	for i := range sum {
		sum[i] = (sum[i] + noise[i]) / den
	}
}

// W returns a copy of the current W (V×K, row-major).
func (a *Aggregator) W() []float64 { return append([]float64(nil), a.x[:a.sh.v*a.sh.k]...) }

// Model implements fed.Modeler: the topics of the current W.
func (a *Aggregator) Model() (*topic.Model, error) {
	m, err := ModelOf(a.x[:a.sh.v*a.sh.k], a.sh.v, a.sh.k, a.vocab)
	if err != nil {
		return nil, err
	}
	m.Prov.Rounds = a.round
	return m, nil
}

// aggMagic starts an Aggregator's checkpoint.
const aggMagic = "fednmf-aggregator/1\x00"

// MarshalBinary implements encoding.BinaryMarshaler: the open round, the
// model and the server optimizer's moments. The sampling and the noise are
// derived from the seed and the round, so they need no state.
func (a *Aggregator) MarshalBinary() ([]byte, error) {
	b := append([]byte(aggMagic), 0)
	if a.opt.m != nil {
		b[len(b)-1] = 1
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(a.round))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(a.x)))
	b = appendFloats(b, a.x)
	if a.opt.m != nil {
		b = appendFloats(appendFloats(b, a.opt.m), a.opt.v)
	}
	if a.noise != nil {
		ns, err := a.noise.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = append(b, ns...)
	}
	return b, nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler, restoring what
// MarshalBinary wrote into an Aggregator built from the same setup.
func (a *Aggregator) UnmarshalBinary(b []byte) error {
	bad := func(what string) error { return fmt.Errorf("fednmf: aggregator state: %s", what) }
	if len(b) < len(aggMagic)+17 || string(b[:len(aggMagic)]) != aggMagic {
		return bad("wrong header")
	}
	b = b[len(aggMagic):]
	hasMoments := b[0] == 1
	if hasMoments != (a.opt.m != nil) {
		return bad("server optimizer state does not match " + a.cfg.ServerOpt)
	}
	round := int(binary.LittleEndian.Uint64(b[1:]))
	n := binary.LittleEndian.Uint64(b[9:])
	if n != uint64(len(a.x)) {
		return bad(fmt.Sprintf("model of %d entries, want %d", n, len(a.x)))
	}
	b = b[17:]
	vecs := 1
	if hasMoments {
		vecs = 3
	}
	if len(b) < 8*vecs*len(a.x) {
		return bad("truncated")
	}
	x, err := readFloats(b[:8*len(a.x)], len(a.x), a.sh.v*a.sh.k)
	if err != nil {
		return bad(err.Error())
	}
	b = b[8*len(a.x):]
	var m, v []float64
	if hasMoments {
		if m, err = readFloats(b[:8*len(a.x)], len(a.x), 0); err != nil {
			return bad(err.Error())
		}
		if v, err = readFloats(b[8*len(a.x):16*len(a.x)], len(a.x), len(a.x)); err != nil {
			return bad(err.Error())
		}
		b = b[16*len(a.x):]
	}
	if a.noise != nil {
		if err := a.noise.UnmarshalBinary(b); err != nil {
			return bad(err.Error())
		}
	} else if len(b) != 0 {
		return bad("trailing bytes")
	}
	if round < 1 {
		return bad("round below 1")
	}
	a.x, a.round, a.sel = x, round, a.sample(round)
	if hasMoments {
		a.opt.m, a.opt.v = m, v
	}
	return nil
}
