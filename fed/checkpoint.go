package fed

import (
	"encoding"
	"fmt"
	"slices"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
)

// checkpointKind and checkpointVersion identify coordinator checkpoints.
const (
	checkpointKind    = "CKPT"
	checkpointVersion = 1
)

// checkpointMeta is the JSON part of a checkpoint. The blobs that follow are
// the aggregator's state, the broadcast payload, for each entry of
// PerParty that is true, that party's own broadcast and, when SecAgg is
// set, the state of the secure aggregation protocol of the open round.
type checkpointMeta struct {
	Run       string       `json:"run"`
	Algorithm string       `json:"algorithm"`
	Parties   []string     `json:"parties"`
	Committed int          `json:"committed"`
	Done      bool         `json:"done"`
	PerParty  []bool       `json:"per_party,omitempty"`
	Last      *RoundRecord `json:"last,omitempty"`
	SecAgg    *secAggMeta  `json:"secagg,omitempty"`
}

// secAggMeta locates an unfinished secure round: its attempt and the
// stages collected so far.
type secAggMeta struct {
	Round   int `json:"round"`
	Attempt int `json:"attempt"`
	Stages  int `json:"stages"`
}

// persist writes the coordinator's state at a round boundary: committed
// rounds, the aggregator's state and the next broadcast. It is a no-op
// without a state directory.
func (c *Coordinator) persist() error {
	if c.ckptPath == "" {
		return nil
	}
	state, err := c.agg.(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return fmt.Errorf("fed: checkpoint: aggregator state: %w", err)
	}
	c.mu.Lock()
	meta := checkpointMeta{
		Run: c.cfg.Run, Algorithm: c.cfg.Algorithm, Parties: c.cfg.Parties,
		Committed: c.committed, Done: c.bcast.Done, Last: c.last,
	}
	blobs := [][]byte{state, c.bcast.Payload}
	for _, b := range c.bcast.PerParty {
		meta.PerParty = append(meta.PerParty, b != nil)
		if b != nil {
			blobs = append(blobs, b)
		}
	}
	if c.sa != nil {
		// Called from Run's goroutine, the only one that touches the
		// protocol's state.
		sa, err := c.sa.srv.MarshalBinary()
		if err != nil {
			c.mu.Unlock()
			return fmt.Errorf("fed: checkpoint: secure aggregation: %w", err)
		}
		meta.SecAgg = &secAggMeta{Round: c.round, Attempt: c.attempt, Stages: c.sa.stages}
		blobs = append(blobs, sa)
	}
	data, err := encodeState(checkpointKind, checkpointVersion, &meta, blobs...)
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("fed: checkpoint: %w", err)
	}
	if err := atomicfile.WriteBytes(c.ckptPath, 0o600, data); err != nil {
		return fmt.Errorf("fed: checkpoint: %w", err)
	}
	return nil
}

// restore loads a checkpoint written by persist.
func (c *Coordinator) restore(data []byte) error {
	var meta checkpointMeta
	blobs, err := decodeState(data, checkpointKind, checkpointVersion, &meta)
	if err != nil {
		return err
	}
	switch {
	case meta.Run != c.cfg.Run:
		return fmt.Errorf("%w: checkpoint of run %q, configured run %q", ErrCheckpoint, meta.Run, c.cfg.Run)
	case meta.Algorithm != c.cfg.Algorithm:
		return fmt.Errorf("%w: checkpoint of algorithm %q, configured %q", ErrCheckpoint, meta.Algorithm, c.cfg.Algorithm)
	case !slices.Equal(meta.Parties, c.cfg.Parties):
		return fmt.Errorf("%w: checkpoint of parties %v, configured %v", ErrCheckpoint, meta.Parties, c.cfg.Parties)
	case meta.Committed < 0:
		return fmt.Errorf("%w: committed round %d", ErrCheckpoint, meta.Committed)
	}
	want := 2
	for _, p := range meta.PerParty {
		if p {
			want++
		}
	}
	if meta.SecAgg != nil {
		want++
	}
	if len(blobs) != want || len(meta.PerParty) > len(c.cfg.Parties) {
		return fmt.Errorf("%w: %d sections, want %d", ErrCheckpoint, len(blobs), want)
	}
	if err := c.agg.(encoding.BinaryUnmarshaler).UnmarshalBinary(slices.Clone(blobs[0])); err != nil {
		return fmt.Errorf("%w: aggregator state: %w", ErrCheckpoint, err)
	}
	step := Step{Payload: slices.Clone(blobs[1]), Done: meta.Done}
	next := 2
	for _, p := range meta.PerParty {
		var b []byte
		if p {
			b = slices.Clone(blobs[next])
			next++
		}
		step.PerParty = append(step.PerParty, b)
	}
	if sa := meta.SecAgg; sa != nil {
		if c.cfg.SecureAggregation == nil || sa.Round != meta.Committed+1 || sa.Attempt < 1 || sa.Stages < 0 || sa.Stages > 3 {
			return fmt.Errorf("%w: secure aggregation state of round %d attempt %d stage %d does not fit this run", ErrCheckpoint, sa.Round, sa.Attempt, sa.Stages)
		}
		c.resume = &secureResume{round: sa.Round, attempt: sa.Attempt, stages: sa.Stages, state: slices.Clone(blobs[next])}
	}
	c.bcast, c.committed, c.round, c.last = step, meta.Committed, meta.Committed, meta.Last
	if meta.Done {
		c.phase = phaseDone
	}
	return nil
}
