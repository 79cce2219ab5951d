package fed

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Duration is a time.Duration that reads and writes as a Go duration string
// ("30s", "1m30s") in JSON and YAML configuration files.
type Duration time.Duration

// MarshalText implements encoding.TextMarshaler.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("fed: duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

// orDefault returns d as a time.Duration, or def when d is zero.
func (d Duration) orDefault(def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return time.Duration(d)
}

// Defaults of CoordinatorConfig and PartyConfig fields left at zero.
const (
	DefaultRoundTimeout = 10 * time.Minute
	DefaultPollTimeout  = 30 * time.Second
	DefaultMaxAttempts  = 3
	DefaultRetryMin     = 100 * time.Millisecond
	DefaultRetryMax     = 20 * time.Second
	DefaultGiveUp       = 10 * time.Minute
)

// CoordinatorConfig configures a Coordinator. The zero value of every field
// but Run, Algorithm and Parties means its documented default.
type CoordinatorConfig struct {
	// Run names the run (federation); messages for another run are refused.
	Run string `json:"run" yaml:"run"`
	// Algorithm is the name of the algorithm; parties configured for
	// another one are refused.
	Algorithm string `json:"algorithm" yaml:"algorithm"`
	// Parties is the allow-list of party identities, in index order.
	Parties []string `json:"parties" yaml:"parties"`
	// MinParties is the quorum: a round aggregates only with at least this
	// many valid updates. Default: all parties.
	MinParties int `json:"min_parties,omitempty" yaml:"min_parties,omitempty"`
	// RoundTimeout is each round's deadline; replies after it are excluded.
	// Default DefaultRoundTimeout.
	RoundTimeout Duration `json:"round_timeout,omitzero" yaml:"round_timeout,omitempty"`
	// JoinTimeout bounds how long the first round waits for every party to
	// join before it starts with those present. Default: RoundTimeout.
	JoinTimeout Duration `json:"join_timeout,omitzero" yaml:"join_timeout,omitempty"`
	// PollTimeout is how long a party's request for work waits before it is
	// answered "nothing yet"; it doubles as the liveness interval.
	// Default DefaultPollTimeout.
	PollTimeout Duration `json:"poll_timeout,omitzero" yaml:"poll_timeout,omitempty"`
	// LingerTimeout bounds how long a finished run waits for live parties to
	// collect the final broadcast. Default: PollTimeout.
	LingerTimeout Duration `json:"linger_timeout,omitzero" yaml:"linger_timeout,omitempty"`
	// MaxAttempts is how often a round that misses its quorum is tried
	// before the run stops with a *RoundError. Default DefaultMaxAttempts.
	MaxAttempts int `json:"max_attempts,omitempty" yaml:"max_attempts,omitempty"`
	// StateDir, if set, holds the checkpoint written at every round
	// boundary; a coordinator started on it resumes the run. Empty: no
	// checkpoints (simulation).
	StateDir string `json:"state_dir,omitempty" yaml:"state_dir,omitempty"`
	// SecureAggregation, if set, runs every round under secure
	// aggregation: the coordinator learns only the sum of the surviving
	// parties' updates, and the quorum is its threshold. The algorithm
	// must declare its update a vector of sums (SumAggregator, SumLearner).
	SecureAggregation *SecureAggregation `json:"secure_aggregation,omitempty" yaml:"secure_aggregation,omitempty"`
}

// Validate reports every problem with c.
func (c *CoordinatorConfig) Validate() error {
	var errs []error
	for _, f := range []struct{ name, v string }{{"run", c.Run}, {"algorithm", c.Algorithm}} {
		if err := checkConfigID(f.name, f.v); err != nil {
			errs = append(errs, fmt.Errorf("fed: coordinator config: %w", err))
		}
	}
	if len(c.Parties) == 0 {
		errs = append(errs, errors.New("fed: coordinator config: no parties"))
	}
	if err := checkPartyIDs(c.Parties); err != nil {
		errs = append(errs, fmt.Errorf("fed: coordinator config: parties: %w", err))
	}
	if c.MinParties < 0 || c.MinParties > len(c.Parties) {
		errs = append(errs, fmt.Errorf("fed: coordinator config: min_parties = %d outside [1, %d]", c.MinParties, len(c.Parties)))
	}
	if c.MaxAttempts < 0 {
		errs = append(errs, fmt.Errorf("fed: coordinator config: max_attempts = %d < 0", c.MaxAttempts))
	}
	if err := c.SecureAggregation.validate(len(c.Parties)); err != nil {
		errs = append(errs, fmt.Errorf("fed: coordinator config: %w", err))
	} else if t := c.SecureAggregation.threshold(); t > 0 && c.MinParties != 0 && c.MinParties != t {
		errs = append(errs, fmt.Errorf("fed: coordinator config: min_parties = %d, but with secure aggregation the quorum is its threshold %d", c.MinParties, t))
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"round_timeout", c.RoundTimeout}, {"join_timeout", c.JoinTimeout}, {"poll_timeout", c.PollTimeout}, {"linger_timeout", c.LingerTimeout}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("fed: coordinator config: %s = %v < 0", d.name, time.Duration(d.v)))
		}
	}
	return errors.Join(errs...)
}

// quorum returns the effective MinParties.
func (c *CoordinatorConfig) quorum() int {
	if t := c.SecureAggregation.threshold(); t > 0 {
		return t
	}
	if c.MinParties == 0 {
		return len(c.Parties)
	}
	return c.MinParties
}

func (c *CoordinatorConfig) roundTimeout() time.Duration {
	return c.RoundTimeout.orDefault(DefaultRoundTimeout)
}
func (c *CoordinatorConfig) joinTimeout() time.Duration {
	return c.JoinTimeout.orDefault(c.roundTimeout())
}
func (c *CoordinatorConfig) pollTimeout() time.Duration {
	return c.PollTimeout.orDefault(DefaultPollTimeout)
}
func (c *CoordinatorConfig) lingerTimeout() time.Duration {
	return c.LingerTimeout.orDefault(c.pollTimeout())
}
func (c *CoordinatorConfig) maxAttempts() int {
	if c.MaxAttempts == 0 {
		return DefaultMaxAttempts
	}
	return c.MaxAttempts
}

// PartyConfig configures a Party. The zero value of every field but Run, ID
// and Algorithm means its documented default.
type PartyConfig struct {
	// Run names the run (federation) the party takes part in.
	Run string `json:"run" yaml:"run"`
	// ID is the party's identity; over gRPC it must match its certificate.
	ID string `json:"id" yaml:"id"`
	// Algorithm is the algorithm the party's Learner implements.
	Algorithm string `json:"algorithm" yaml:"algorithm"`
	// Parties, if positive, is the number of parties of the Setup the
	// party's learner was built from; the party then refuses to take part
	// in a run with another number of parties (its learner would expect
	// other parties' updates and models). Zero: not checked.
	Parties int `json:"parties,omitempty" yaml:"parties,omitempty"`
	// StateDir, if set, holds the party's cache: the exact bytes of its last
	// update and its learner's state, written (fsync) before the update
	// leaves. A party restarted on it resends those bytes instead of drawing
	// new noise. Empty: the cache lives in memory only (simulation).
	StateDir string `json:"state_dir,omitempty" yaml:"state_dir,omitempty"`
	// RetryMin and RetryMax bound the exponential backoff between retries
	// of a call the coordinator did not answer. Defaults DefaultRetryMin,
	// DefaultRetryMax.
	RetryMin Duration `json:"retry_min,omitzero" yaml:"retry_min,omitempty"`
	RetryMax Duration `json:"retry_max,omitzero" yaml:"retry_max,omitempty"`
	// GiveUp is how long the coordinator may stay unreachable before the
	// party stops with an error. Default DefaultGiveUp.
	GiveUp Duration `json:"give_up,omitzero" yaml:"give_up,omitempty"`
	// SecureAggregation must match the coordinator's: the party takes part
	// in secure aggregation with this threshold, and refuses a run
	// configured otherwise (as the coordinator refuses the party).
	SecureAggregation *SecureAggregation `json:"secure_aggregation,omitempty" yaml:"secure_aggregation,omitempty"`
}

// Validate reports every problem with c.
func (c *PartyConfig) Validate() error {
	var errs []error
	for _, f := range []struct{ name, v string }{{"run", c.Run}, {"id", c.ID}, {"algorithm", c.Algorithm}} {
		if err := checkConfigID(f.name, f.v); err != nil {
			errs = append(errs, fmt.Errorf("fed: party config: %w", err))
		}
	}
	for _, d := range []struct {
		name string
		v    Duration
	}{{"retry_min", c.RetryMin}, {"retry_max", c.RetryMax}, {"give_up", c.GiveUp}} {
		if d.v < 0 {
			errs = append(errs, fmt.Errorf("fed: party config: %s = %v < 0", d.name, time.Duration(d.v)))
		}
	}
	if c.RetryMin > 0 && c.RetryMax > 0 && c.RetryMax < c.RetryMin {
		errs = append(errs, fmt.Errorf("fed: party config: retry_max %v < retry_min %v", time.Duration(c.RetryMax), time.Duration(c.RetryMin)))
	}
	if c.Parties < 0 {
		errs = append(errs, fmt.Errorf("fed: party config: parties = %d < 0", c.Parties))
	}
	if sa := c.SecureAggregation; sa != nil && sa.Threshold < 1 {
		errs = append(errs, fmt.Errorf("fed: party config: secure_aggregation: threshold %d < 1", sa.Threshold))
	}
	return errors.Join(errs...)
}

// checkConfigID reports an empty or overlong identifier in a configuration.
func checkConfigID(name, v string) error {
	switch {
	case v == "":
		return fmt.Errorf("%s is empty", name)
	case len(v) > maxIDLen:
		return fmt.Errorf("%s is %d bytes long, more than %d", name, len(v), maxIDLen)
	case !utf8.ValidString(v):
		return fmt.Errorf("%s is not valid UTF-8", name)
	}
	return nil
}
