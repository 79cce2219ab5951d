package secagg

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Limits on one protocol instance.
const (
	// MaxParties is the largest number of parties in one instance.
	MaxParties = 1000
	// MaxLen is the largest vector length (2^28 values).
	MaxLen = 1 << 28
	// MaxSession is the longest session identifier in bytes.
	MaxSession = 64
)

// Params are what every party and the coordinator must agree on before an
// instance starts. The coordinator sends them in its first message and a
// party refuses to take part unless they equal its own.
type Params struct {
	// Session names this instance (for example the run and the round) and
	// must never be reused: it salts every key derivation.
	Session []byte
	// Parties is n; parties are numbered 0 … n−1.
	Parties int
	// Threshold is t: the fewest parties whose inputs can be summed, and the
	// number of shares that rebuild a secret. n/2 < t ≤ n.
	Threshold int
	// Bits is k, the ring Z_(2^k) that masked values live in: MinBits to
	// 32, or 64. A masked value travels in k bits, packed (RingBits gives
	// the smallest k the other parameters allow).
	Bits int
	// FracBits is f: a real value x travels as the integer round(x·2^f).
	FracBits int
	// Clip is the largest |x| (in real units, noise included) that one
	// party may contribute in any coordinate.
	Clip float64
	// Len is the length of every party's vector.
	Len int
}

// Validate reports every problem with p, joined. Beyond the ranges of each
// field it checks the overflow condition: n·⌊Clip·2^f⌋ ≤ 2^(k−1) − 1, so
// that the sum of n values within the clip cannot wrap in Z_(2^k).
func (p Params) Validate() error {
	var errs []error
	if len(p.Session) == 0 || len(p.Session) > MaxSession {
		errs = append(errs, fmt.Errorf("session of %d bytes: need 1 to %d", len(p.Session), MaxSession))
	}
	if p.Parties < 2 || p.Parties > MaxParties {
		errs = append(errs, fmt.Errorf("%d parties: need 2 to %d", p.Parties, MaxParties))
	}
	if 2*p.Threshold <= p.Parties || p.Threshold > p.Parties {
		errs = append(errs, fmt.Errorf("threshold %d with %d parties: need n/2 < t ≤ n", p.Threshold, p.Parties))
	}
	if !ringBitsOK(p.Bits) {
		errs = append(errs, fmt.Errorf("ring of 2^%d: bits must be %d to 32, or 64", p.Bits, MinBits))
	}
	if p.FracBits < 0 || p.FracBits > 52 {
		errs = append(errs, fmt.Errorf("%d fraction bits: need 0 to 52", p.FracBits))
	}
	if p.Len < 1 || p.Len > MaxLen {
		errs = append(errs, fmt.Errorf("vector length %d: need 1 to %d", p.Len, MaxLen))
	}
	if !(p.Clip > 0) || math.IsInf(p.Clip, 0) {
		errs = append(errs, fmt.Errorf("clip %v: must be positive and finite", p.Clip))
	} else if len(errs) == 0 {
		if _, err := p.bound(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("secagg: params: %w", err)
	}
	return nil
}

// MinBits is the smallest ring, in bits, an instance may use.
const MinBits = 8

// ringBitsOK reports whether Z_(2^bits) is a ring the package masks in.
func ringBitsOK(bits int) bool { return bits >= MinBits && bits <= 32 || bits == 64 }

// RingBits returns the smallest k in MinBits … 32, or else 64, for which
// parameters with these parties, clip and fraction bits pass the overflow
// check n·⌊Clip·2^f⌋ ≤ 2^(k−1) − 1: the ring whose masked values take the
// fewest bytes. (With 64 the check may still fail; Validate says so.)
func RingBits(parties int, clip float64, fracBits int) int {
	p := Params{Parties: parties, Clip: clip, FracBits: fracBits}
	for k := MinBits; k <= 32; k++ {
		p.Bits = k
		if _, err := p.bound(); err == nil {
			return k
		}
	}
	return 64
}

// bound returns B = ⌊Clip·2^f⌋, the largest |v| a party's encoded value
// may have, after checking n·B < 2^(k−1).
func (p Params) bound() (int64, error) {
	scaled := math.Floor(math.Ldexp(p.Clip, p.FracBits))
	if scaled < 1 {
		return 0, fmt.Errorf("clip %v with %d fraction bits is below one grid step", p.Clip, p.FracBits)
	}
	if scaled >= 0x1p62 {
		return 0, fmt.Errorf("clip %v with %d fraction bits exceeds 2^62 grid steps", p.Clip, p.FracBits)
	}
	b := uint64(scaled)
	hi, lo := bits.Mul64(b, uint64(p.Parties))
	if hi != 0 || lo > 1<<(p.Bits-1)-1 {
		return 0, fmt.Errorf("overflow: %d parties × %d grid steps (clip %v, %d fraction bits) does not fit a signed %d-bit sum", p.Parties, b, p.Clip, p.FracBits, p.Bits)
	}
	return int64(b), nil
}

// Bound returns B = ⌊Clip·2^f⌋, the largest magnitude of an encoded value
// a party accepts.
func (p Params) Bound() (int64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	return p.bound()
}

// Equal reports whether p and q are the same parameters.
func (p Params) Equal(q Params) bool {
	return bytes.Equal(p.Session, q.Session) && p.Parties == q.Parties && p.Threshold == q.Threshold &&
		p.Bits == q.Bits && p.FracBits == q.FracBits && p.Clip == q.Clip && p.Len == q.Len
}

// Encode maps real values to the fixed-point grid: round(x·2^f), rounding
// half away from zero. It refuses a NaN, an infinity and any value whose
// encoding exceeds the bound B = ⌊Clip·2^f⌋ in magnitude, naming the
// coordinate: a value past the clip could make the sum wrap.
func (p Params) Encode(x []float64) ([]int64, error) {
	b, err := p.Bound()
	if err != nil {
		return nil, err
	}
	if len(x) != p.Len {
		return nil, fmt.Errorf("secagg: encode: %d values, want %d", len(x), p.Len)
	}
	out := make([]int64, len(x))
	scale := math.Ldexp(1, p.FracBits) // v·2^f is exact, as Ldexp(v, f)
	lim := float64(b)
	for i, v := range x {
		s := math.Round(v * scale)
		if !(math.Abs(s) <= lim) { // NaN too
			return nil, fmt.Errorf("secagg: encode: value %d is %v, outside ±%v (clip): %w", i, v, p.Clip, ErrOverflow)
		}
		out[i] = int64(s)
	}
	return out, nil
}

// Decode maps grid integers (a sum from the coordinator) back to real
// values v/2^f. It is exact whenever |v| < 2^53.
func (p Params) Decode(v []int64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Ldexp(float64(x), -p.FracBits)
	}
	return out
}

// ringMask returns 2^k − 1.
func (p Params) ringMask() uint64 {
	if p.Bits == 64 {
		return math.MaxUint64
	}
	return 1<<p.Bits - 1
}

// lift maps an element of Z_(2^k) to its representative in
// [−2^(k−1), 2^(k−1)).
func (p Params) lift(v uint64) int64 {
	if p.Bits == 64 {
		return int64(v)
	}
	return int64(v<<(64-p.Bits)) >> (64 - p.Bits)
}

func (p Params) appendTo(w *writer) {
	w.u8(uint8(len(p.Session)))
	w.raw(p.Session)
	w.u16(p.Parties)
	w.u16(p.Threshold)
	w.u8(uint8(p.Bits))
	w.u8(uint8(p.FracBits))
	w.f64(p.Clip)
	w.u32(p.Len)
}

func readParams(r *reader) Params {
	var p Params
	n := int(r.u8())
	p.Session = append([]byte(nil), r.take(n)...)
	p.Parties = r.u16()
	p.Threshold = r.u16()
	p.Bits = int(r.u8())
	p.FracBits = int(r.u8())
	p.Clip = r.f64()
	p.Len = r.u32()
	if r.err == nil {
		if err := p.Validate(); err != nil {
			r.fail(err)
		}
	}
	return p
}

// MaxMessageSize bounds the encoding of any message of an instance of n
// parties with vectors of length l in Z_(2^bits): the masked vector
// (bits bits a value, packed, plus a header of under 100 bytes) or a list with
// one entry per party, whichever is larger. Transports size their message
// limits from it.
func MaxMessageSize(n, l, bits int) int {
	const header = len(magic) + 1 + 1 + MaxSession + 2 + 2 + 1 + 4 + 16
	perParty := max(2+sealedSize, 2+64, 2+1+shareSize)
	return header + max(packedLen(l, bits), n*perParty+4)
}
