package pctd

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

// TestScheduleKeepsCost: a noise schedule moves precision between rounds
// and nothing else. The shares w_t sum to 1 and grow with t for g > 1;
// the rounds' noise multipliers σ_t satisfy Σ_t 1/σ_t² = T/σ² (the same
// μ as T rounds at σ); the accountant composes the run's per-round events
// to the equal split's ε, continuous (GDP) and distributed (RDP) alike;
// and Events lists round t's event as Plan charges it, with NoiseStdAt's
// noise.
func TestScheduleKeepsCost(t *testing.T) {
	const delta = 1e-5
	for _, base := range []Config{
		{Epsilon: 4, MaxDocTokens: 15, Topics: 5},
		{Epsilon: 10, MaxDocTokens: 15, Topics: 5, SecureThreshold: 3},
	} {
		for _, rounds := range []int{1, 5, 20} {
			for _, g := range []float64{0.5, 1.3, 2, 10} {
				if g == 10 && rounds > 5 {
					continue // the first rounds' noise would leave no room under the secure bound
				}
				equal, sched := base, base
				equal.Rounds, sched.Rounds, sched.ScheduleGrowth = rounds, rounds, g
				if err := sched.Validate(); err != nil {
					t.Fatalf("Validate(%+v) = %v", sched, err)
				}
				r := sched.Resolved()
				var sumW, sumPrec float64
				for s := 1; s <= rounds; s++ {
					sumW += r.share(s)
					z := r.at(s).Sigma
					sumPrec += 1 / (z * z)
					if s > 1 && g > 1 && !(r.share(s) > r.share(s-1)) {
						t.Errorf("g = %v: share of round %d %v ≤ round %d's %v; want growing", g, s, r.share(s), s-1, r.share(s-1))
					}
				}
				if math.Abs(sumW-1) > 1e-12 {
					t.Errorf("g = %v, T = %d: Σ w_t = %v; want 1", g, rounds, sumW)
				}
				if want := float64(rounds) / (r.Sigma * r.Sigma); math.Abs(sumPrec-want) > 1e-9*want {
					t.Errorf("g = %v, T = %d: Σ 1/σ_t² = %v; want T/σ² = %v", g, rounds, sumPrec, want)
				}
				evs, err := sched.Events()
				if err != nil {
					t.Fatal(err)
				}
				eqEvs, err := equal.Events()
				if err != nil {
					t.Fatal(err)
				}
				got, err := accountant.Compose(evs, delta)
				if err != nil {
					t.Fatal(err)
				}
				want, err := accountant.Compose(eqEvs, delta)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(got.Epsilon-want.Epsilon) > 1e-6*want.Epsilon || got.Epsilon > base.Epsilon*(1+1e-9) {
					t.Errorf("%+v: scheduled run costs ε = %v (%s); want the equal split's %v, at most the target %v", sched, got.Epsilon, got.Accountant, want.Epsilon, base.Epsilon)
				}
				var planned []privacy.Event
				for s := 1; s <= rounds; s++ {
					ev, err := r.roundEvent(s)
					if err != nil {
						t.Fatal(err)
					}
					planned = append(planned, ev...)
					std := sched.NoiseStdAt(s)
					if base.SecureThreshold > 0 {
						std *= gridScale
					}
					if ev[0].Sigma != std {
						t.Errorf("round %d: event σ %v; NoiseStdAt says %v", s, ev[0].Sigma, std)
					}
				}
				if rounds > 1 && !slices.Equal(planned, evs) {
					t.Errorf("Events() = %v; want the rounds' events %v", evs, planned)
				}
			}
		}
	}
}

// TestScheduleEqualIsToday: growth 1 (and 0) is the equal split: every
// round has Sigma, and Events is the one event of count T it always was.
func TestScheduleEqualIsToday(t *testing.T) {
	base := Config{Epsilon: 4, MaxDocTokens: 15, Rounds: 7}
	want, err := base.Events()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []float64{0, 1} {
		c := base
		c.ScheduleGrowth = g
		got, err := c.Events()
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("growth %v: Events() = %v, %v; want %v", g, got, err, want)
		}
		for s := 1; s <= 7; s++ {
			if got := c.NoiseStdAt(s); got != c.NoiseStd() {
				t.Errorf("growth %v: NoiseStdAt(%d) = %v; want NoiseStd() = %v", g, s, got, c.NoiseStd())
			}
		}
	}
}

// TestScheduleValidate: the new knobs' bad values are refused by name.
func TestScheduleValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{name: "growth", cfg: Config{MaxDocTokens: 9, ScheduleGrowth: 1.5}},
		{name: "negative growth", cfg: Config{MaxDocTokens: 9, ScheduleGrowth: -1}, want: "schedule_growth"},
		{name: "huge growth", cfg: Config{MaxDocTokens: 9, ScheduleGrowth: 1e6}, want: "schedule_growth"},
		{name: "NaN growth", cfg: Config{MaxDocTokens: 9, ScheduleGrowth: math.NaN()}, want: "schedule_growth"},
		{name: "average", cfg: Config{MaxDocTokens: 9, Rounds: 5, AverageLast: 5}},
		{name: "average default rounds", cfg: Config{MaxDocTokens: 9, AverageLast: DefaultRounds}},
		{name: "average beyond rounds", cfg: Config{MaxDocTokens: 9, Rounds: 5, AverageLast: 6}, want: "average_last"},
		{name: "negative average", cfg: Config{MaxDocTokens: 9, AverageLast: -1}, want: "average_last"},
		{name: "document units", cfg: Config{NoNoise: true, Units: UnitsDocument}},
		{name: "theta prior", cfg: Config{MaxDocTokens: 9, ThetaPrior: 0.25}},
		{name: "negative theta prior", cfg: Config{MaxDocTokens: 9, ThetaPrior: -1}, want: "theta_prior"},
		{name: "share below a grid step", cfg: Config{MaxDocTokens: 1, Sigma: 0.01, Rounds: 10, ScheduleGrowth: 3, SecureThreshold: 3}, want: "secure_threshold: round"},
		{name: "first round's noise past the bound", cfg: Config{MaxDocTokens: 15, Epsilon: 10, Rounds: 20, ScheduleGrowth: 10, SecureThreshold: 3}, want: "leaves no room"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate(%+v) = %v; want nil", tt.cfg, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate(%+v) = %v; want an error mentioning %q", tt.cfg, err, tt.want)
			}
		})
	}
}

// TestAverageIsPostProcessing: with AverageLast the final topics are a
// function of the released sums alone — the M-step of their
// precision-weighted average over the last m rounds —, the earlier
// rounds' topics those of their own sums;
// and a checkpoint taken inside the averaged rounds resumes to the same
// final topics.
func TestAverageIsPostProcessing(t *testing.T) {
	const k, v, parties = 3, 50, 2
	cfg := Config{Topics: k, Rounds: 5, Epsilon: 6, MaxDocTokens: 9, ScheduleGrowth: 1.5, AverageLast: 3}
	setup := fed.Setup{Parties: []string{"p1", "p2"}, Vocab: make([]string, v), Seed: 4}
	raw := `{"topics":3,"rounds":5,"epsilon":6,"max_doc_tokens":9,"schedule_growth":1.5,"average_last":3}`
	setup.Params = []byte(raw)
	r := cfg.Resolved()
	sums := make([][]float64, r.Rounds+1)
	for round := 1; round <= r.Rounds; round++ {
		sums[round] = make([]float64, k*v)
		for i := range sums[round] {
			sums[round][i] = float64((i*7+round*3)%11) - 2 // some entries negative, as noise makes them
		}
	}
	play := func(a *Aggregator, from, to int) {
		for round := from; round <= to; round++ {
			a.update(round, slices.Clone(sums[round]), parties)
			a.rounds = round
		}
	}
	a, err := NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	play(a, 1, 2)
	if want := onWire(mStep(sums[2], k, v, r.Beta, nil, 0), k, v); !slices.Equal(a.phi, want) {
		t.Errorf("round 2's topics differ from the M-step of its own sum")
	}
	play(a, 3, 4)
	state, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	play(a, 5, 5)
	avg := make([]float64, k*v)
	var prec float64
	for round := 3; round <= 5; round++ {
		s := r.sumNoiseStd(round, parties)
		w := 1 / (s * s)
		prec += w
		for i, x := range sums[round] {
			avg[i] += w * x
		}
	}
	for i := range avg {
		avg[i] /= prec
	}
	thr := 1 / math.Sqrt(prec)
	if got := r.ReleaseNoiseStd(parties); math.Abs(got-thr) > 1e-12*thr {
		t.Errorf("ReleaseNoiseStd(%d) = %v; want the average's %v", parties, got, thr)
	}
	want := onWire(mStep(avg, k, v, r.Beta, nil, 0), k, v)
	if !slices.Equal(a.phi, want) {
		t.Errorf("final topics differ from the M-step of the precision-weighted average of rounds 3-5")
	}
	b, err := NewAggregator(setup)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	play(b, 5, 5)
	if !slices.Equal(b.phi, want) {
		t.Errorf("a checkpoint after round 4 resumed to other final topics")
	}
	if err := b.UnmarshalBinary(state[:len(state)-8]); err == nil {
		t.Errorf("UnmarshalBinary accepted a checkpoint without its whole average")
	}
}

// TestUnitsDocument: units "document" makes each document one unit even
// when the corpus has sentences, after the same clip.
func TestUnitsDocument(t *testing.T) {
	c := sensitivityCorpus(40, 5)
	us := buildUnits(c, -1, 16)
	clipped := buildUnits(c, 0, 16)
	if us.numUnits() != c.NumDocs() || us.tokens != clipped.tokens {
		t.Errorf("document units: %d units, %d tokens; want %d (one per document), %d", us.numUnits(), us.tokens, c.NumDocs(), clipped.tokens)
	}
	for d := range c.NumDocs() {
		a, b := us.docCounts(d), clipped.docCounts(d)
		if len(a) != len(b) {
			t.Fatalf("document %d: %d distinct words as one unit, %d in sentences", d, len(a), len(b))
		}
		for w, x := range b {
			if a[w] != x {
				t.Errorf("document %d, word %d: count %v as one unit, %v in sentences", d, w, a[w], x)
			}
		}
	}
	if w, err := windowOf(UnitsDocument); w != -1 || err != nil {
		t.Errorf("windowOf(%q) = %d, %v; want -1, nil", UnitsDocument, w, err)
	}
}

// TestThetaPrior: Config.ThetaPrior adds its pseudo-count to every topic
// of θ_d's update; 0 is the maximum-likelihood update.
func TestThetaPrior(t *testing.T) {
	c := &corpus.Corpus{V: 2, Words: []int32{0}, DocStart: []int{0, 1}}
	phi := []float64{0.9, 0.1, 0.1, 0.9} // topic 0 favours word 0
	for _, tc := range []struct {
		alpha float64
		want  []float64
	}{
		{0, []float64{0.9, 0.1}},
		{1, []float64{1.9 / 3, 1.1 / 3}},
	} {
		e := newEM(buildUnits(c, 0, 0), 2, 2)
		e.alpha = tc.alpha
		if _, err := e.iterate(context.Background(), phi, noise{variant: VariantSSP}, 1); err != nil {
			t.Fatal(err)
		}
		for z, want := range tc.want {
			if math.Abs(e.theta[z]-want) > 1e-12 {
				t.Errorf("θ prior %v: θ = %v; want %v", tc.alpha, e.theta, tc.want)
				break
			}
		}
	}
}
