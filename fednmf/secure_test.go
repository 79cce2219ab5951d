package fednmf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/secagg"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
)

// secureParts is a planted corpus split over n parties.
func secureParts(t *testing.T, n int) ([]*corpus.Corpus, []string) {
	t.Helper()
	c, vocab := planted(t, 4, 40, 300)
	sizes := make([]float64, n)
	for i := range sizes {
		sizes[i] = float64(i + 1) // unequal N_i, so the weights matter
	}
	parts, err := corpus.Split(c, corpus.SplitSpec{Sizes: sizes}, rng.Derive(1, "split"))
	if err != nil {
		t.Fatal(err)
	}
	return parts, vocab
}

// runSecure runs cfg over parts in process, under secure aggregation of
// threshold t (0: off).
func runSecure(t *testing.T, cfg Config, parts []*corpus.Corpus, vocab []string, threshold int, budget float64) *sim.Result {
	t.Helper()
	params, _ := json.Marshal(cfg)
	sc := sim.Scenario{Algorithm: Algorithm, Params: params, Corpora: parts, Vocab: vocab, Seed: 6}
	if threshold > 0 {
		sc.SecureAggregation, sc.SecureThreshold = true, threshold
	}
	if budget > 0 {
		sc.Budget = accountant.Budget{Epsilon: budget, Delta: DefaultDelta}
	}
	res, err := sim.Run(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestSecureSameModel: without noise a run under secure aggregation ends
// with the plain run's model bit for bit, for FedAvg weights over unequal
// parties, the critic θ included, with every server optimizer, a sample
// of two of three parties a round and both thresholds: the plain
// aggregator sums N_i·round(Δ·2^32) exactly, and the secure sum recovers
// the same integers from their two parts.
func TestSecureSameModel(t *testing.T) {
	parts, vocab := secureParts(t, 3)
	for _, opt := range ServerOpts {
		t.Run(opt, func(t *testing.T) {
			cfg := Config{K: 4, Rounds: 4, ClientFraction: 0.7, ServerOpt: opt, MILambda: 0.1, Batch: 16, LR: 0.3}
			plain := runSecure(t, cfg, parts, vocab, 0, 0)
			for _, th := range []int{2, 3} {
				cfg.SecureThreshold = th
				got := runSecure(t, cfg, parts, vocab, th, 0)
				if !bytes.Equal(got.Final, plain.Final) {
					t.Errorf("threshold %d: the secure run's model differs from the plain run's", th)
				}
			}
		})
	}
}

// TestSumGridRoundTrip: the coordinator recovers from the sum of the
// parties' two-part vectors exactly Σ N_i·round(Δ·2^32) and Σ N_i, the
// plain aggregator's sums, at the edges of the range and past zero.
func TestSumGridRoundTrip(t *testing.T) {
	const n = 5
	sh := shape{k: 2, v: 2}
	g, err := newSumGrid(Config{}.WithDefaults(), sh, n)
	if err != nil {
		t.Fatal(err)
	}
	lim := g.bound << g.limb
	edge := math.Ldexp(float64(lim), -SecureFracBits)            // N·|Δ| at the bound
	edge7 := math.Ldexp(float64((lim/7)&^1023), -SecureFracBits) // 7·|Δ| at most the bound, Δ exact on the grid
	updates := []struct {
		docs  int
		delta []float64
	}{
		{1, []float64{edge, -edge, 0, math.Ldexp(1, -33)}},
		{7, []float64{-edge7, edge7, -1e-12, 0.25}},
		{1000, []float64{1e-3, -2.5e-4, 3.3e-7, -1.2345678901}},
		{0, []float64{5, -5, 0, 1}},
		{3, []float64{-math.Ldexp(1, -32), math.Ldexp(3, -34), -0.5, 2}},
	}
	sum := make([]int64, g.len())
	want := make([]int64, sh.n())
	var wantW int64
	for _, u := range updates {
		v := make([]int64, g.len())
		if err := g.encode(v, u.docs, u.delta); err != nil {
			t.Fatalf("encode(%d documents): %v", u.docs, err)
		}
		for i, x := range v {
			if x < -g.bound || x > g.bound {
				t.Fatalf("value %d = %d outside ±%d", i, x, g.bound)
			}
			sum[i] += x
		}
		if _, ok := accumulate(want, u.docs, u.delta, plainLimit(n)); !ok {
			t.Fatal("plain sum refused")
		}
		wantW += int64(u.docs)
	}
	acc, w := g.join(sum)
	if w != wantW {
		t.Errorf("Σ N_i = %d; want %d", w, wantW)
	}
	for j := range acc {
		if acc[j] != want[j] {
			t.Errorf("entry %d: Σ N·Δ on the grid = %d; want %d", j, acc[j], want[j])
		}
	}
}

// TestSumGridRefuses: a value past the grid's bound is refused before it
// could be masked, naming its entry: N·Δ past the range without DP, a
// clipped Δ whose grid value passes the data bound with DP; and the
// engine's own check refuses the bound plus one step.
func TestSumGridRefuses(t *testing.T) {
	sh := shape{k: 2, v: 2}
	g, _ := newSumGrid(Config{}.WithDefaults(), sh, 3)
	over := math.Ldexp(float64(g.bound<<g.limb), -SecureFracBits) * 1.0001
	for _, tc := range []struct {
		docs  int
		delta []float64
		entry int
	}{
		{1, []float64{0, over, 0, 0}, 1},
		{10, []float64{0, 0, over / 9, 0}, 2},
		{1, []float64{0, 0, 0, math.Inf(-1)}, 3},
		{1, []float64{math.NaN(), 0, 0, 0}, 0},
	} {
		err := g.encode(make([]int64, g.len()), tc.docs, tc.delta)
		if !errors.Is(err, errSumRange) || !strings.Contains(err.Error(), fmt.Sprintf("entry %d ", tc.entry)) {
			t.Errorf("encode(%d documents, entry %d past the range) = %v; want a range error naming entry %d", tc.docs, tc.entry, err, tc.entry)
		}
	}
	dp := Config{Clip: 1, NoiseMultiplier: 1, SecureThreshold: 2}.WithDefaults()
	gd, err := newSumGrid(dp, sh, 3)
	if err != nil {
		t.Fatal(err)
	}
	gd.clip = 10 // a Δ clipped to more than S: its grid value passes the data bound
	if err := gd.encode(make([]int64, gd.len()), 0, []float64{0, 0, 5, 0}); !errors.Is(err, errSumRange) || !strings.Contains(err.Error(), "entry 2 ") {
		t.Errorf("encode(DP entry past the data bound) = %v; want a range error naming entry 2", err)
	}
	spec := gd.spec(dp)
	p := secagg.Params{Session: []byte("s"), Parties: 3, Threshold: 2, Bits: fed.SecAggBits, FracBits: spec.FracBits, Clip: spec.Clip, Len: spec.Len}
	if _, err := p.Encode([]float64{0, 0, spec.Clip + math.Ldexp(1, -spec.FracBits), 0}); !errors.Is(err, secagg.ErrOverflow) {
		t.Errorf("secagg Encode(one step past the spec's clip) = %v; want ErrOverflow", err)
	}
	p.Parties = 4 // more than 2t − 1: the bound would let the sum wrap
	if err := p.Validate(); err == nil {
		t.Errorf("Validate(4 parties at the bound of 3) = nil; want an overflow error")
	}
}

// TestSecureDPGrid: with DP the grid holds a clipped Δ and 12 standard
// deviations of a party's noise under B, B is as large as 2t − 1 parties
// allow, and the sensitivity of the rounded vector is S·2^f: rounding
// towards zero never lifts the norm.
func TestSecureDPGrid(t *testing.T) {
	for _, c := range []Config{
		{Clip: 1, NoiseMultiplier: 1, SecureThreshold: 2},
		{Clip: 0.05, NoiseMultiplier: 3, SecureThreshold: 6},
		{Clip: 20, NoiseMultiplier: 0.5, SecureThreshold: 26},
	} {
		c = c.WithDefaults()
		g, err := newSumGrid(c, shape{k: 3, v: 50}, 2*c.SecureThreshold-1)
		if err != nil {
			t.Fatal(err)
		}
		spec := g.spec(c)
		s := math.Ldexp(c.Clip, g.frac)
		share := spec.Sigma / math.Sqrt(float64(c.SecureThreshold))
		if s+12*share > float64(g.bound) || 2*(s+12*share) <= float64(g.bound) {
			t.Errorf("%+v: data %g + headroom %g against B = %d; want it to fit, with less than one more fraction bit of room", c, s, 12*share, g.bound)
		}
		if int64(2*c.SecureThreshold-1)*g.bound > 1<<31-1 {
			t.Errorf("%+v: %d parties × B = %d can wrap a 32-bit sum", c, 2*c.SecureThreshold-1, g.bound)
		}
		if spec.Sensitivity != s || spec.Sigma != c.NoiseMultiplier*s || spec.Unit != UnitDocument {
			t.Errorf("%+v: spec σ = %g, sensitivity %g, unit %q; want %g, %g, %q", c, spec.Sigma, spec.Sensitivity, spec.Unit, c.NoiseMultiplier*s, s, UnitDocument)
		}
		r := rng.Derive(3, "delta")
		d := make([]float64, g.vals)
		for i := range d {
			d[i] = r.NormFloat64()
		}
		clipTo(d, c.Clip)
		v := make([]int64, g.len())
		if err := g.encode(v, 0, d); err != nil {
			t.Fatal(err)
		}
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if math.Sqrt(ss) > s {
			t.Errorf("%+v: grid vector of norm %g; want at most S·2^f = %g", c, math.Sqrt(ss), s)
		}
	}
}

// TestSecureDistributedCharges: with DP-FedAvg under secure aggregation the
// noise is distributed: Plan states the event the engine charges
// (SumSpec's σ and sensitivity, a discrete Gaussian at the document
// level), every party's ledger after the run holds exactly Config.Events,
// the coordinator spends nothing, and Learn refuses to send the update in
// the clear.
func TestSecureDistributedCharges(t *testing.T) {
	parts, vocab := secureParts(t, 3)
	cfg := Config{K: 4, Rounds: 3, ClientFraction: 0.5, Clip: 0.5, NoiseMultiplier: 1.5, Batch: 16, SecureThreshold: 2}
	want, err := accountant.Compose(cfg.Events(), DefaultDelta)
	if err != nil {
		t.Fatal(err)
	}
	res := runSecure(t, cfg, parts, vocab, 2, want.Epsilon*1.000001)
	for _, e := range res.Summary.Epsilon {
		if math.Abs(e.Epsilon-want.Epsilon) > 1e-9*want.Epsilon || e.Unit != UnitDocument || e.Releases != cfg.Rounds {
			t.Errorf("%s spent ε = %v per %s in %d releases; want %v per document in %d", e.Party, e.Epsilon, e.Unit, e.Releases, want.Epsilon, cfg.Rounds)
		}
	}
	if s := res.Summary.SecureAggregation; s == nil || s.Sigma == 0 {
		t.Errorf("run summary's secure aggregation %+v; want the distributed noise stated", s)
	}
	params, _ := json.Marshal(cfg)
	setup := fed.Setup{Run: "r", Parties: []string{"a", "b", "c"}, Vocab: vocab, Seed: 1, Params: params}
	l, err := NewLearner(setup, 0, parts[0])
	if err != nil {
		t.Fatal(err)
	}
	spec := l.SumSpec()
	engine := privacy.Event{Mechanism: privacy.MechanismDiscreteGaussian, Sigma: spec.Sigma, Sensitivity: spec.Sensitivity, Unit: spec.Unit, Count: 1}
	if plan, _ := l.Plan(1); len(plan) != 1 || plan[0] != engine {
		t.Errorf("Plan(1) = %v; want the engine's charge %v", plan, engine)
	}
	if _, spent, err := l.LearnSum(1, encodeSkip()); err != nil || spent != nil {
		t.Errorf("LearnSum(skip) spent %v, %v; want nothing of its own (the engine charges the noise)", spent, err)
	}
	if _, err := l.Learn(1, encodeSkip()); err == nil || !strings.Contains(err.Error(), "distributed noise") {
		t.Errorf("Learn in the clear with distributed noise = %v; want a refusal", err)
	}
	a, err := NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	a.Init()
	st, err := a.AggregateSum(1, make([]int64, spec.Len), []int{0, 1, 2})
	if err != nil || st.Spent != nil {
		t.Errorf("AggregateSum spent %v, %v; want nothing at the coordinator", st.Spent, err)
	}
}

// TestSecureRefusals: without noise a sample of one party a round is
// refused (the coordinator would learn its update), and so is DP-FedAvg
// under secure aggregation without secure_threshold; both name the field
// to change.
func TestSecureRefusals(t *testing.T) {
	parts, vocab := secureParts(t, 3)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{K: 4, ClientFraction: 0.2}, "client_fraction"},
		{Config{K: 4, ClientFraction: 1, Clip: 1, NoiseMultiplier: 1}, "secure_threshold"},
	} {
		params, _ := json.Marshal(tc.cfg)
		l, err := NewLearner(fed.Setup{Run: "r", Parties: []string{"a", "b", "c"}, Vocab: vocab, Seed: 1, Params: params}, 0, parts[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.LearnSum(1, encodeSkip()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: LearnSum = %v; want an error naming %s", tc.cfg, err, tc.want)
		}
	}
	if err := (Config{Clip: 1e-15, NoiseMultiplier: 1e-3, SecureThreshold: 2}).Validate(); err == nil {
		t.Errorf("Validate(a party's noise below one grid step) = nil; want an error")
	}
	if err := (Config{SecureThreshold: -1}).Validate(); err == nil {
		t.Errorf("Validate(secure_threshold = -1) = nil; want an error")
	}
}
