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
	Run     string          `json:"run"`
	Party   string          `json:"party"`
	Round   int             `json:"round"`
	Spent   []privacy.Event `json:"spent"`
	payload []byte
	state   []byte // learner state after the round; nil if not persisted
}

// cacheFile is the name of the cache inside a party's state directory.
const cacheFile = "last-update"

// saveCache writes u to dir atomically (temp file, fsync, rename).
func saveCache(dir string, u *cachedUpdate) error {
	data, err := encodeState(cacheKind, cacheVersion, u, u.payload, u.state)
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
	if len(blobs) != 2 {
		return nil, fmt.Errorf("%s: %w: %d sections, want 2", path, ErrCheckpoint, len(blobs))
	}
	u.payload, u.state = slices.Clone(blobs[0]), slices.Clone(blobs[1])
	return &u, nil
}
