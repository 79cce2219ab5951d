package adlda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Wire format of a count matrix (absolute counts or deltas), word-major
// index i = w·K + k:
//
//	version byte (1)
//	uvarint K, uvarint V, uvarint n (non-zero entries)
//	n × (uvarint gap, zigzag varint value)
//
// where gap is the index minus the previous index minus one (the first
// index itself). Values are non-zero and within int32.

const wireVersion = 1

// maxVarint32 is the longest varint of a 32-bit value.
const maxVarint32 = 5

// maxEncodedSize bounds the encoding of a K × V matrix: a header and, per
// entry, a gap and a value of at most five bytes each.
func maxEncodedSize(k, v int) int {
	return 1 + 3*binary.MaxVarintLen64 + k*v*2*maxVarint32
}

// encodeCounts encodes the non-zero entries of m (word-major K × V).
func encodeCounts(k, v int, m []int32) []byte {
	n := 0
	for _, x := range m {
		if x != 0 {
			n++
		}
	}
	b := make([]byte, 0, 16+n*4)
	b = append(b, wireVersion)
	b = binary.AppendUvarint(b, uint64(k))
	b = binary.AppendUvarint(b, uint64(v))
	b = binary.AppendUvarint(b, uint64(n))
	prev := -1
	for i, x := range m {
		if x == 0 {
			continue
		}
		b = binary.AppendUvarint(b, uint64(i-prev-1))
		b = binary.AppendVarint(b, int64(x))
		prev = i
	}
	return b
}

// decodeCounts calls f(index, value) for every entry of an encoded K × V
// matrix, in increasing index order, after checking the shape. With
// nonNegative, negative values are refused. Errors name positions, never
// values.
func decodeCounts(b []byte, k, v int, nonNegative bool, f func(i int, x int32)) error {
	if len(b) == 0 || b[0] != wireVersion {
		return errors.New("adlda: not a count matrix (bad version byte)")
	}
	b = b[1:]
	next := func(what string) (uint64, error) {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, fmt.Errorf("adlda: truncated or malformed %s", what)
		}
		b = b[n:]
		return x, nil
	}
	gk, err := next("K")
	if err != nil {
		return err
	}
	gv, err := next("V")
	if err != nil {
		return err
	}
	if gk != uint64(k) || gv != uint64(v) {
		return fmt.Errorf("adlda: count matrix is K × V = %d × %d, want %d × %d", gk, gv, k, v)
	}
	size := k * v
	n, err := next("entry count")
	if err != nil {
		return err
	}
	if n > uint64(size) {
		return fmt.Errorf("adlda: %d entries in a %d-entry matrix", n, size)
	}
	idx := -1
	for e := range int(n) {
		gap, err := next("index")
		if err != nil {
			return fmt.Errorf("%w (entry %d)", err, e)
		}
		if gap >= uint64(size-idx-1) {
			return fmt.Errorf("adlda: entry %d: index beyond the %d × %d matrix", e, k, v)
		}
		idx += int(gap) + 1
		x, m := binary.Varint(b)
		if m <= 0 {
			return fmt.Errorf("adlda: entry %d: truncated or malformed value", e)
		}
		b = b[m:]
		switch {
		case x == 0:
			return fmt.Errorf("adlda: entry %d: explicit zero", e)
		case x < math.MinInt32 || x > math.MaxInt32:
			return fmt.Errorf("adlda: entry %d: value outside int32", e)
		case nonNegative && x < 0:
			return fmt.Errorf("adlda: entry %d (word %d, topic %d): negative count", e, idx/k, idx%k)
		}
		f(idx, int32(x))
	}
	if len(b) != 0 {
		return fmt.Errorf("adlda: %d trailing bytes", len(b))
	}
	return nil
}
