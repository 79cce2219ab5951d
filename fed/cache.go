package fed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
	"github.com/fedtopic/fedtopic/privacy"
)

// cacheKind and cacheVersion identify party caches.
const (
	cacheKind    = "PCAC"
	cacheVersion = 1
)

// cachedUpdate is a party's last release, keyed by (run, party, round): the
// exact bytes that left (or were about to), what they cost, and the
// learner's state right after it produced them.
type cachedUpdate struct {
	Run   string          `json:"run"`
	Party string          `json:"party"`
	Round int             `json:"round"`
	Spent []privacy.Event `json:"spent"`
	// SecAgg, for a round under secure aggregation, is where the party is
	// in the protocol; payload then holds its vector on the grid (noise
	// included), reused by every attempt at the round.
	SecAgg  *secAggCache `json:"secagg,omitempty"`
	payload []byte
	state   []byte // learner state after the round; nil if not persisted
	sastate []byte // the secure aggregation party's state; nil if none
}

// secAggCache records a party's secure aggregation instance of a round.
type secAggCache struct {
	Attempt int `json:"attempt"` // the attempt whose instance sastate holds
	// Revealed is the attempt in which the party answered an unmask
	// request (0: none yet); it takes part in no other attempt at the round.
	Revealed int `json:"revealed,omitempty"`
}

// cacheFile is the name of the cache inside a party's state directory.
const cacheFile = "last-update"

// saveCache writes u to dir atomically (temp file, fsync, rename).
func saveCache(dir string, u *cachedUpdate) error {
	blobs := [][]byte{u.payload, u.state}
	if u.SecAgg != nil {
		blobs = append(blobs, u.sastate)
	}
	data, err := encodeState(cacheKind, cacheVersion, u, blobs...)
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, cacheFile), 0o600, data)
}

// loadCache reads the cache in dir; it returns nil, nil when there is none.
func loadCache(dir string) (*cachedUpdate, error) {
	path := filepath.Join(dir, cacheFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var u cachedUpdate
	blobs, err := decodeState(data, cacheKind, cacheVersion, &u)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	want := 2
	if u.SecAgg != nil {
		want = 3
	}
	if len(blobs) != want {
		return nil, fmt.Errorf("%s: %w: %d sections, want %d", path, ErrCheckpoint, len(blobs), want)
	}
	u.payload, u.state = slices.Clone(blobs[0]), slices.Clone(blobs[1])
	if u.SecAgg != nil {
		u.sastate = slices.Clone(blobs[2])
	}
	return &u, nil
}
