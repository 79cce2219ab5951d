package fed_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/fed"
)

func TestCoordinatorConfigValidate(t *testing.T) {
	ok := fed.CoordinatorConfig{Run: "r", Algorithm: "a", Parties: []string{"p1", "p2"}}
	tests := []struct {
		name  string
		edit  func(*fed.CoordinatorConfig)
		wants []string // substrings of the joined error; none = valid
	}{
		{name: "valid", edit: func(*fed.CoordinatorConfig) {}},
		{name: "empty", edit: func(c *fed.CoordinatorConfig) { *c = fed.CoordinatorConfig{} }, wants: []string{"run is empty", "algorithm is empty", "no parties"}},
		{name: "duplicate party", edit: func(c *fed.CoordinatorConfig) { c.Parties = []string{"p1", "p1"} }, wants: []string{`duplicate id "p1"`}},
		{name: "bad quorum and timeouts", edit: func(c *fed.CoordinatorConfig) {
			c.MinParties = 3
			c.RoundTimeout = fed.Duration(-time.Second)
			c.MaxAttempts = -1
		}, wants: []string{"min_parties = 3", "round_timeout = -1s", "max_attempts = -1"}},
		{name: "invalid UTF-8 party", edit: func(c *fed.CoordinatorConfig) { c.Parties = []string{"p\xff"} }, wants: []string{"not valid UTF-8"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.edit(&c)
			err := c.Validate()
			if len(tt.wants) == 0 {
				if err != nil {
					t.Errorf("Validate() = %v; want nil", err)
				}
				return
			}
			for _, w := range tt.wants {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v; want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestPartyConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  fed.PartyConfig
		want string
	}{
		{name: "valid", cfg: fed.PartyConfig{Run: "r", ID: "p", Algorithm: "a"}},
		{name: "no id", cfg: fed.PartyConfig{Run: "r", Algorithm: "a"}, want: "id is empty"},
		{name: "backoff inverted", cfg: fed.PartyConfig{Run: "r", ID: "p", Algorithm: "a", RetryMin: fed.Duration(time.Second), RetryMax: fed.Duration(time.Millisecond)}, want: "retry_max 1ms < retry_min 1s"},
		{name: "negative parties", cfg: fed.PartyConfig{Run: "r", ID: "p", Algorithm: "a", Parties: -1}, want: "parties = -1 < 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (tt.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v; want %q", err, tt.want)
			}
		})
	}
}

func TestDurationJSON(t *testing.T) {
	var c fed.CoordinatorConfig
	if err := json.Unmarshal([]byte(`{"run":"r","round_timeout":"1m30s"}`), &c); err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(c.RoundTimeout); got != 90*time.Second {
		t.Errorf("round_timeout = %v; want 1m30s", got)
	}
	b, err := json.Marshal(c)
	if err != nil || !strings.Contains(string(b), `"round_timeout":"1m30s"`) || strings.Contains(string(b), "poll_timeout") {
		t.Errorf("json.Marshal = %s, %v; want round_timeout as a string and zero durations omitted", b, err)
	}
	if err := json.Unmarshal([]byte(`{"round_timeout":"soon"}`), &c); err == nil {
		t.Error(`json.Unmarshal of round_timeout "soon" succeeded; want an error`)
	}
}
