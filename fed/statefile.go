package fed

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// State files (coordinator checkpoints, party caches) share one container:
//
//	magic   "FEDTOPIC"          8 bytes
//	kind    e.g. "CKPT", "PCAC" 4 bytes
//	version uint32 LE           schema version of the kind
//	nblobs  uint32 LE
//	meta    uint64 LE length, then JSON
//	blobs   nblobs × (uint64 LE length, then bytes)
//	sum     SHA-256 of everything above, 32 bytes
//
// The checksum is verified before anything else is parsed, so a truncated or
// bit-flipped file is reported as such and never half-read.

const stateMagic = "FEDTOPIC"

// maxStateBlobs bounds the number of blobs a state file may hold.
const maxStateBlobs = 1 << 20

// encodeState builds a state file of kind at schema version from meta (JSON)
// and blobs.
func encodeState(kind string, version uint32, meta any, blobs ...[]byte) ([]byte, error) {
	if len(kind) != 4 {
		panic("fed: state kind must be 4 bytes")
	}
	m, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("encode %s metadata: %w", kind, err)
	}
	n := 8 + 4 + 4 + 4 + 8 + len(m) + sha256.Size
	for _, b := range blobs {
		n += 8 + len(b)
	}
	buf := make([]byte, 0, n)
	buf = append(buf, stateMagic...)
	buf = append(buf, kind...)
	buf = binary.LittleEndian.AppendUint32(buf, version)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(blobs)))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(m)))
	buf = append(buf, m...)
	for _, b := range blobs {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(b)))
		buf = append(buf, b...)
	}
	sum := sha256.Sum256(buf)
	return append(buf, sum[:]...), nil
}

// decodeState parses a state file of kind at schema version, decoding its
// metadata into meta and returning its blobs (views into data). Every error
// wraps ErrCheckpoint.
func decodeState(data []byte, kind string, version uint32, meta any) ([][]byte, error) {
	const head = 8 + 4 + 4 + 4 + 8
	if len(data) < head+sha256.Size {
		return nil, fmt.Errorf("%w: truncated (%d bytes)", ErrCheckpoint, len(data))
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("%w: checksum mismatch (truncated or corrupted)", ErrCheckpoint)
	}
	if string(body[:8]) != stateMagic {
		return nil, fmt.Errorf("%w: not a fedtopic state file", ErrCheckpoint)
	}
	if k := string(body[8:12]); k != kind {
		return nil, fmt.Errorf("%w: file holds %q, want %q", ErrCheckpoint, k, kind)
	}
	if v := binary.LittleEndian.Uint32(body[12:16]); v != version {
		return nil, fmt.Errorf("%w: %s schema version %d, this build reads %d", ErrCheckpoint, kind, v, version)
	}
	nblobs := binary.LittleEndian.Uint32(body[16:20])
	if nblobs > maxStateBlobs {
		return nil, fmt.Errorf("%w: %d blobs", ErrCheckpoint, nblobs)
	}
	rest := body[20:]
	next := func() ([]byte, error) {
		if len(rest) < 8 {
			return nil, fmt.Errorf("%w: truncated section", ErrCheckpoint)
		}
		n := binary.LittleEndian.Uint64(rest)
		rest = rest[8:]
		if n > uint64(len(rest)) {
			return nil, fmt.Errorf("%w: section of %d bytes overruns the file", ErrCheckpoint, n)
		}
		b := rest[:n:n]
		rest = rest[n:]
		return b, nil
	}
	m, err := next()
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(m, meta); err != nil {
		return nil, fmt.Errorf("%w: metadata: %w", ErrCheckpoint, err)
	}
	blobs := make([][]byte, nblobs)
	for i := range blobs {
		if blobs[i], err = next(); err != nil {
			return nil, err
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrCheckpoint, len(rest))
	}
	return blobs, nil
}
