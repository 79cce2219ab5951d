package ftm

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
)

func TestConfigValidate(t *testing.T) {
	neg := -0.1
	tests := []struct {
		name    string
		cfg     Config
		wantErr []string // substrings of the joined error; nil for valid
	}{
		{name: "zero value", cfg: Config{}},
		{name: "papers' setting", cfg: Config{Epsilon: 8, Topics: []int{40, 50, 60}, Model: ModelSLDA}},
		{name: "infinite epsilon", cfg: Config{Epsilon: math.Inf(1)}, wantErr: []string{"epsilon"}},
		{name: "negative tau", cfg: Config{Tau: &neg}, wantErr: []string{"tau"}},
		{name: "every problem at once",
			cfg:     Config{Epsilon: -1, Topics: []int{0, 70000}, Alpha: math.NaN(), Beta: -1, LocalIterations: -1, Rounds: -2, TopL: -1, Xi: 1.5, Model: "plsa", MHSteps: -1, MaxDocTokens: -1, BlockSize: -1, Workers: -1},
			wantErr: []string{"epsilon", "topics[0]", "topics[1]", "alpha", "beta", "local_iterations", "rounds", "top_l", "xi", "model", "mh_steps", "max_doc_tokens", "block_size", "workers"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantErr == nil {
				if err != nil {
					t.Errorf("Validate() = %v; want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil; want errors about %v", tt.wantErr)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q; want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`{"epsilon": 9, "tau": 0, "topics": [40, 50, 60], "model": "slda"}`))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	if c.Epsilon != 9 || c.Tau == nil || *c.Tau != 0 || len(c.Topics) != 3 || c.Model != ModelSLDA {
		t.Errorf("ParseConfig = %+v; want ε 9, τ 0, topics 40,50,60, slda", c)
	}
	d := c.withDefaults()
	if *d.Tau != 0 || d.Rounds != DefaultRounds || d.TopL != DefaultTopL || d.Xi != DefaultXi {
		t.Errorf("withDefaults kept τ = %v and set rounds %d, L %d, ξ %v; want 0, %d, %d, %v", *d.Tau, d.Rounds, d.TopL, d.Xi, DefaultRounds, DefaultTopL, DefaultXi)
	}
	if d := (Config{}).withDefaults(); d.Tau != nil || d.tauFor(434) != AutoTau(DefaultEpsilon, 434) || d.Epsilon != DefaultEpsilon {
		t.Errorf("Config{}.withDefaults() τ = %v (for V = 434: %v), ε = %v; want nil (%v), %v", d.Tau, d.tauFor(434), d.Epsilon, AutoTau(DefaultEpsilon, 434), DefaultEpsilon)
	}
	if _, err := ParseConfig([]byte(`{"epsilon": 9, "rounds_per_party": 3}`)); err == nil {
		t.Errorf("ParseConfig with an unknown field = nil error; want one")
	}
	if _, err := ParseConfig([]byte(`{"xi": 2}`)); err == nil {
		t.Errorf("ParseConfig with ξ = 2 = nil error; want one")
	}
	if c, err := ParseConfig(nil); err != nil || c.Epsilon != 0 {
		t.Errorf("ParseConfig(nil) = %+v, %v; want the zero Config", c, err)
	}
}

func TestTopicsFor(t *testing.T) {
	tests := []struct {
		topics []int
		want   []int
		err    bool
	}{
		{topics: nil, want: []int{DefaultK, DefaultK, DefaultK}},
		{topics: []int{7}, want: []int{7, 7, 7}},
		{topics: []int{4, 5, 6}, want: []int{4, 5, 6}},
		{topics: []int{4, 5}, err: true},
	}
	for _, tt := range tests {
		got, err := Config{Topics: tt.topics}.topicsFor(3)
		if (err != nil) != tt.err || (err == nil && !slices.Equal(got, tt.want)) {
			t.Errorf("topicsFor(3) with topics %v = %v, %v; want %v (error %v)", tt.topics, got, err, tt.want, tt.err)
		}
	}
}

func TestNewLearnerRejects(t *testing.T) {
	c := randomCorpus(20, 5, 1)
	s := testSetup(2, 20, `{"model":"slda"}`)
	noUnits := &corpus.Corpus{V: c.V, Words: c.Words, DocStart: c.DocStart}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"party out of range", second(NewLearner(s, 2, c))},
		{"nil corpus", second(NewLearner(s, 0, nil))},
		{"vocabulary too large", second(NewLearner(testSetup(2, 10, ``), 0, c))},
		{"SentenceLDA without sentences", second(NewLearner(s, 0, noUnits))},
		{"empty corpus", second(NewLearner(s, 0, &corpus.Corpus{V: 20, DocStart: []int{0}}))},
		{"topics for the wrong number of parties", second(NewLearner(testSetup(2, 20, `{"topics":[1,2,3]}`), 0, c))},
		{"bad parameters", second(NewLearner(testSetup(2, 20, `{"epsilon":-3}`), 0, c))},
	} {
		if tc.err == nil {
			t.Errorf("NewLearner with %s: nil error; want one", tc.name)
		}
	}
	if _, err := NewLearner(s, 1, c); err != nil {
		t.Errorf("NewLearner(valid) = %v; want nil", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestAutoTau(t *testing.T) {
	tests := []struct {
		name string
		eps  float64
		v    int
		want float64
	}{
		// ln(434/2)/11 = 0.4889…: one expected noise entry per token.
		{name: "demo vocabulary", eps: 11, v: 434, want: math.Log(217) / 11},
		// ln(6000)/11 = 0.7909… < 1 − 1/11.
		{name: "12k words", eps: 11, v: 12000, want: math.Log(6000) / 11},
		// ln(6000)/2 = 4.35 is capped at 1 − 1/2 so the true entry survives.
		{name: "small epsilon capped", eps: 2, v: 12000, want: 0.5},
		// ln(5)/11 = 0.146 < PaperTau: the floor.
		{name: "tiny vocabulary floor", eps: 11, v: 10, want: PaperTau},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AutoTau(tt.eps, tt.v)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("AutoTau(%v, %d) = %v; want %v", tt.eps, tt.v, got, tt.want)
			}
			// At the chosen τ a zero entry survives with probability
			// ½e^(−ετ): at most one noise entry per token in expectation
			// unless the cap bound it.
			if noise := float64(tt.v) * 0.5 * math.Exp(-tt.eps*got); got < 1-1/tt.eps && got > PaperTau && math.Abs(noise-1) > 1e-9 {
				t.Errorf("AutoTau(%v, %d): %v noise entries per token; want 1", tt.eps, tt.v, noise)
			}
		})
	}
}

func TestEventsMatchPlan(t *testing.T) {
	cfg := Config{Epsilon: 11, MaxDocTokens: 30, Unit: UnitDocument}
	ev, err := cfg.Events()
	if err != nil || len(ev) != 1 {
		t.Fatalf("Events() = %v, %v; want one event", ev, err)
	}
	if ev[0].Unit != UnitDocument || ev[0].Epsilon != 330 {
		t.Errorf("Events() = %+v; want ε = 330 per document", ev[0])
	}
	if ev, err := (Config{NoNoise: true}).Events(); err != nil || ev != nil {
		t.Errorf("Events() with no noise = %v, %v; want nil, nil", ev, err)
	}
	w, err := (Config{Epsilon: 8}).Events()
	if err != nil || len(w) != 1 || w[0].Unit != UnitWord || w[0].Epsilon != 8 {
		t.Errorf("Events() per word = %+v, %v; want ε = 8 per word occurrence", w, err)
	}
}
