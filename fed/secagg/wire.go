package secagg

import (
	"encoding/binary"
	"errors"
	"math"
)

// errShort and errTrailing are the reader's two ways to fail on framing.
var (
	errShort    = errors.New("truncated")
	errTrailing = errors.New("trailing bytes")
)

// writer appends little-endian fields to a byte slice.
type writer struct{ b []byte }

func (w *writer) u8(v uint8)    { w.b = append(w.b, v) }
func (w *writer) u16(v int)     { w.b = binary.LittleEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) u32(v int)     { w.b = binary.LittleEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) u64(v uint64)  { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *writer) f64(v float64) { w.u64(math.Float64bits(v)) }
func (w *writer) raw(p []byte)  { w.b = append(w.b, p...) }

// blob writes a length-prefixed byte string (u32 length).
func (w *writer) blob(p []byte) { w.u32(len(p)); w.raw(p) }

// reader consumes little-endian fields; the first failure sticks, and
// later reads return zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = errShort
		r.b = nil
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *reader) u8() uint8 {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *reader) u16() int {
	if p := r.take(2); p != nil {
		return int(binary.LittleEndian.Uint16(p))
	}
	return 0
}

func (r *reader) u32() int {
	if p := r.take(4); p != nil {
		return int(binary.LittleEndian.Uint32(p))
	}
	return 0
}

func (r *reader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (r *reader) f64() float64 { return math.Float64frombits(r.u64()) }

// key32 reads 32 bytes.
func (r *reader) key32() (k [32]byte) {
	copy(k[:], r.take(32))
	return k
}

// blob reads a u32 length-prefixed byte string, copied.
func (r *reader) blob() []byte {
	n := r.u32()
	p := r.take(n)
	if p == nil {
		return nil
	}
	return append([]byte(nil), p...)
}

// fail records err unless an earlier error is already recorded.
func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// done reports the sticky error, or errTrailing if bytes remain.
func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = errTrailing
	}
	return r.err
}
