package pctd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/fed/fedtest"
	"github.com/fedtopic/fedtopic/fed/inproc"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/pctd"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
)

// recorder wraps the aggregator to keep what it is given each round: the
// sum under secure aggregation, the sum of the decoded updates without.
type recorder struct {
	*pctd.Aggregator
	k, v int
	sums [][]float64 // per round, word-major V×K, in real units
}

func (r *recorder) AggregateSum(round int, sum []int64, included []int) (fed.Step, error) {
	m := make([]float64, len(sum))
	for i, x := range sum {
		m[i] = float64(x) / (1 << pctd.SecureFracBits)
	}
	r.sums = append(r.sums, m)
	return r.Aggregator.AggregateSum(round, sum, included)
}

func (r *recorder) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	m := make([]float64, r.k*r.v)
	for _, u := range updates {
		// The update's values: float32 after the 13-byte header.
		b := u.Payload[13:]
		for i := range m {
			m[i] += float64(math.Float32frombits(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24))
		}
	}
	r.sums = append(r.sums, m)
	return r.Aggregator.Aggregate(round, updates)
}

// secureOutcome is what playSecure produced.
type secureOutcome struct {
	final   []byte
	sums    [][]float64
	ledgers [][]fedtest.LedgerEntry
}

// playSecure runs PC-TD in process with secure aggregation of threshold
// threshold (0: off); each party draws its share of distributed noise from
// a stream seeded by noiseSeed and its id.
func playSecure(t *testing.T, params string, parts []*corpus.Corpus, vocab []string, threshold int, noiseSeed uint64) *secureOutcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ids := make([]string, len(parts))
	for i := range ids {
		ids[i] = fmt.Sprintf("p%d", i+1)
	}
	setup := fed.Setup{Run: "pctd-secure", Parties: ids, Vocab: vocab, Seed: 3, Params: json.RawMessage(params)}
	inner, err := pctd.NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := pctd.ParseConfig(setup.Params)
	if err != nil {
		t.Fatal(err)
	}
	agg := &recorder{Aggregator: inner, k: cfg.Resolved().Topics, v: len(vocab)}
	val, err := pctd.NewValidator(setup)
	if err != nil {
		t.Fatal(err)
	}
	var sa *fed.SecureAggregation
	if threshold > 0 {
		sa = &fed.SecureAggregation{Threshold: threshold}
	}
	coord, err := fed.NewCoordinator(fed.CoordinatorConfig{Run: setup.Run, Algorithm: pctd.Name, Parties: ids, SecureAggregation: sa,
		RoundTimeout: fed.Duration(time.Minute), PollTimeout: fed.Duration(time.Second)}, agg, val, fed.CoordinatorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	net, err := inproc.New(coord, inproc.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	ledgers := make([]*fedtest.Ledger, len(ids))
	errs := make([]error, len(ids)+1)
	var wg sync.WaitGroup
	for i, id := range ids {
		l, err := pctd.NewLearner(setup, i, parts[i])
		if err != nil {
			t.Fatal(err)
		}
		ledgers[i], _ = fedtest.OpenLedger(1e6, "")
		p, err := fed.NewParty(fed.PartyConfig{Run: setup.Run, ID: id, Algorithm: pctd.Name, SecureAggregation: sa,
			RetryMin: fed.Duration(time.Millisecond), RetryMax: fed.Duration(50 * time.Millisecond)},
			l, ledgers[i], net.Dial(id), fed.PartyOptions{Noise: rng.Derive(noiseSeed, "party", id)})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _, errs[i] = p.Run(ctx) })
	}
	var res *fed.Result
	wg.Go(func() { res, errs[len(ids)] = coord.Run(ctx) })
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("participant %d: %v", i, err)
		}
	}
	out := &secureOutcome{final: res.Final.Payload, sums: agg.sums}
	for _, l := range ledgers {
		out.ledgers = append(out.ledgers, l.Entries())
	}
	return out
}

// TestSecureNoNoiseSameModel: without noise the coordinator's sum under
// secure aggregation is exactly the sum of the plain run (every M_t is on
// the grid in both), so the model is the plain run's bit for bit, at
// every threshold.
func TestSecureNoNoiseSameModel(t *testing.T) {
	parts, vocab := synthData(t, 4, 60, 240, 2)
	plain := playSecure(t, `{"topics":4,"rounds":4,"no_noise":true}`, parts, vocab, 0, 1)
	for _, th := range []int{2, 3} {
		got := playSecure(t, fmt.Sprintf(`{"topics":4,"rounds":4,"no_noise":true,"secure_threshold":%d}`, th), parts, vocab, th, 1)
		if !slices.Equal(got.final, plain.final) {
			t.Errorf("threshold %d: the secure run's model differs from the plain run's", th)
		}
		for r := range plain.sums {
			if !slices.Equal(got.sums[r], plain.sums[r]) {
				t.Errorf("threshold %d: round %d: the coordinator's sum differs from the plain run's", th, r+1)
			}
		}
	}
}

// chiSquareBounds returns the two-sided bounds of a χ² variable with n
// degrees of freedom at total tail probability 1e-5 (z = 4.4172), by the
// Wilson–Hilferty approximation, whose relative error in these quantiles
// is below 1e-3 for n in the thousands.
func chiSquareBounds(n int) (lo, hi float64) {
	const z = 4.4172 // Φ⁻¹(1 − 0.5e-5)
	k := float64(n)
	c := 2 / (9 * k)
	return k * math.Pow(1-c-z*math.Sqrt(c), 3), k * math.Pow(1-c+z*math.Sqrt(c), 3)
}

// TestSecureNoiseVariance measures the noise the coordinator's sum
// carries. In round 1 every party's exact M_t depends only on the
// seed-drawn first topics, so a run's sum minus the noiseless run's sum is
// the noise alone: V·K = 3,000 independent values of mean 0. Their sum of
// squares over the expected variance s² is χ² with 3,000 degrees of
// freedom; the test accepts it between its 0.5e-5 and 1 − 0.5e-5
// quantiles, so a correct implementation fails with probability 1e-5 for
// a fresh noise seed (this one is fixed), while a variance off by a factor
// of 3/2 or more (about ±12% is accepted) fails. Expected: with
// distributed noise and 3 survivors, σ²·3/t — exactly σ² at t = 3, the
// central noise of one party — and without secure aggregation, where
// every party adds its full noise, 3σ².
func TestSecureNoiseVariance(t *testing.T) {
	parts, vocab := synthData(t, 10, 300, 600, 4)
	const sigma, docLen = 2.0, 20
	std := sigma * math.Sqrt(docLen) // noise standard deviation of one party's central release
	exact := playSecure(t, fmt.Sprintf(`{"topics":10,"rounds":1,"no_noise":true,"max_doc_tokens":%d}`, docLen), parts, vocab, 0, 1).sums[0]
	for _, tc := range []struct {
		name      string
		threshold int
		params    string
		variance  float64
	}{
		{"distributed, t = 3", 3, `,"secure_threshold":3`, std * std},
		{"distributed, t = 2", 2, `,"secure_threshold":2`, std * std * 3 / 2},
		{"central per party", 0, ``, std * std * 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := fmt.Sprintf(`{"topics":10,"rounds":1,"max_doc_tokens":%d,"sigma":%g%s}`, docLen, sigma, tc.params)
			got := playSecure(t, params, parts, vocab, tc.threshold, 11).sums[0]
			var ss float64
			for i, x := range got {
				d := x - exact[i]
				ss += d * d
			}
			lo, hi := chiSquareBounds(len(got))
			if q := ss / tc.variance; q < lo || q > hi {
				t.Errorf("noise variance at the coordinator %.4g; want %.4g (χ² statistic %.1f outside [%.1f, %.1f])", ss/float64(len(got)), tc.variance, q, lo, hi)
			}
		})
	}
}

// TestSecureLedgerCharge: with distributed noise each party is charged,
// every round, the discrete Gaussian release of the sum of exactly t
// survivors, which is the event Config.Events states (what `fedtopic
// privacy pctd --variant ssp` reports from); calibrated by Epsilon, the
// run costs that ε under the RDP accounting the ledger uses, and more
// noise than the continuous calibration, which RDP's conversion never
// beats.
func TestSecureLedgerCharge(t *testing.T) {
	parts, vocab := synthData(t, 4, 60, 240, 5)
	params := `{"topics":4,"rounds":3,"max_doc_tokens":20,"epsilon":4,"secure_threshold":2}`
	out := playSecure(t, params, parts, vocab, 2, 1)
	cfg, err := pctd.ParseConfig(json.RawMessage(params))
	if err != nil {
		t.Fatal(err)
	}
	want, err := cfg.Events()
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Resolved()
	if len(want) != 1 || want[0].Mechanism != privacy.MechanismDiscreteGaussian || want[0].Count != 3 ||
		want[0].Sigma != r.NoiseStd()*(1<<pctd.SecureFracBits) || want[0].Sensitivity != math.Sqrt(20)*(1<<pctd.SecureFracBits) {
		t.Fatalf("Events() = %+v; want 3 discrete Gaussian releases of σ = %g and sensitivity √20 on the grid", want, r.NoiseStd())
	}
	wantCost, err := accountant.Compose(want, r.Delta)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(wantCost.Epsilon-4) > 1e-6 {
		t.Errorf("calibrated run costs ε = %v; want 4", wantCost.Epsilon)
	}
	central := pctd.Config{Topics: 4, Rounds: 3, MaxDocTokens: 20, Epsilon: 4}.Resolved()
	if !(r.Sigma > central.Sigma) {
		t.Errorf("distributed noise multiplier %v; want above the continuous calibration's %v", r.Sigma, central.Sigma)
	}
	for i, entries := range out.ledgers {
		var evs []privacy.Event
		for _, e := range entries {
			evs = append(evs, e.Events...)
		}
		got, err := accountant.Compose(evs, r.Delta)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 3 || got.Epsilon != wantCost.Epsilon {
			t.Errorf("party %d: %d charges costing ε = %v; want 3 costing %v", i+1, len(entries), got.Epsilon, wantCost.Epsilon)
		}
	}
}

// TestSecureRunRecord: the run's summary states the distributed noise
// (its total σ on the grid and what each party was charged for).
func TestSecureRunRecord(t *testing.T) {
	parts, vocab := synthData(t, 4, 60, 240, 6)
	params := json.RawMessage(`{"topics":4,"rounds":2,"max_doc_tokens":20,"epsilon":4,"secure_threshold":2}`)
	res, err := sim.Run(context.Background(), sim.Scenario{Algorithm: pctd.Algorithm, Params: params, Corpora: parts, Vocab: vocab, Seed: 1,
		SecureAggregation: true, SecureThreshold: 2, Budget: accountant.Budget{Epsilon: 5, Delta: 1e-5, Unit: pctd.UnitDocument}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := pctd.ParseConfig(params)
	sa := res.Summary.SecureAggregation
	if sa == nil || sa.Threshold != 2 || sa.Sigma != cfg.Resolved().NoiseStd()*(1<<pctd.SecureFracBits) || sa.Noise != fed.NoiseStatement {
		t.Errorf("summary secure aggregation %+v; want threshold 2, σ %g on the grid and the noise statement", sa, cfg.Resolved().NoiseStd()*(1<<pctd.SecureFracBits))
	}
}

// TestSecureRefusals: a party whose noise is distributed refuses to send
// its M_t in the clear; the unit variant cannot opt in; a share of noise
// below one grid step is refused.
func TestSecureRefusals(t *testing.T) {
	parts, vocab := synthData(t, 4, 60, 240, 7)
	setup := fed.Setup{Run: "r", Parties: []string{"p1"}, Vocab: vocab, Seed: 1,
		Params: json.RawMessage(`{"topics":4,"rounds":2,"max_doc_tokens":20,"epsilon":4,"secure_threshold":2}`)}
	agg, err := pctd.NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	l, err := pctd.NewLearner(setup, 0, parts[0])
	if err != nil {
		t.Fatal(err)
	}
	init, err := agg.Init()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Learn(1, init.Payload); err == nil || !strings.Contains(err.Error(), "must not leave it without secure aggregation") {
		t.Errorf("Learn with distributed noise in the clear: %v; want a refusal", err)
	}
	for _, tc := range []struct{ params, want string }{
		{`{"variant":"unit","sigma":0.5,"secure_threshold":2}`, "the unit variant cannot run under secure aggregation"},
		{`{"max_doc_tokens":1,"sigma":0.001,"secure_threshold":3}`, "need at least 1"},
		{`{"max_doc_tokens":20,"secure_threshold":-1}`, "secure_threshold = -1"},
	} {
		if _, err := pctd.ParseConfig(json.RawMessage(tc.params)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%s) = %v; want an error containing %q", tc.params, err, tc.want)
		}
	}
}
