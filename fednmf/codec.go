package fednmf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Messages. Every message starts with the four bytes "NMF1" and a kind
// byte; numbers are little-endian, matrix entries float64 (so that a
// one-client run reproduces centralized SGD to rounding).
//
//	model   (coordinator → sampled client): uint32 K, uint32 V, uint32 P,
//	        then W (V×K, row-major) and θ (P entries; P = 0 without MI).
//	skip    (coordinator → client not sampled this round): nothing more.
//	final   (coordinator → everyone, end of run): uint32 K, uint32 V, W.
//	update  (sampled client → coordinator): uint64 N_i (0 under DP), uint32
//	        K, uint32 V, uint32 P, then the delta of W and θ.
//	idle    (client not sampled → coordinator): nothing more.
//
// Decoding checks the kind, the shape against the configuration, that every
// value is finite and that W is non-negative. Errors name positions, never
// values.
const (
	magic      = "NMF1"
	kindModel  = 1
	kindSkip   = 2
	kindFinal  = 3
	kindUpdate = 4
	kindIdle   = 5
	headerSize = len(magic) + 1
	maxDocs    = 1 << 40
)

// errCodec is wrapped by every decoding error.
var errCodec = errors.New("fednmf: malformed message")

// shape is the size of the shared parameters: W is V×K, θ has P entries.
type shape struct{ k, v, p int }

func (s shape) n() int { return s.v*s.k + s.p }

func appendHeader(b []byte, kind byte) []byte { return append(append(b, magic...), kind) }

func appendFloats(b []byte, xs []float64) []byte {
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

func appendShape(b []byte, s shape, withP bool) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(s.k))
	b = binary.LittleEndian.AppendUint32(b, uint32(s.v))
	if withP {
		b = binary.LittleEndian.AppendUint32(b, uint32(s.p))
	}
	return b
}

func encodeModel(s shape, x []float64) []byte {
	b := make([]byte, 0, headerSize+12+8*len(x))
	return appendFloats(appendShape(appendHeader(b, kindModel), s, true), x)
}

func encodeFinal(s shape, w []float64) []byte {
	b := make([]byte, 0, headerSize+8+8*len(w))
	return appendFloats(appendShape(appendHeader(b, kindFinal), s, false), w)
}

func encodeUpdate(s shape, docs int, delta []float64) []byte {
	b := make([]byte, 0, headerSize+20+8*len(delta))
	b = binary.LittleEndian.AppendUint64(appendHeader(b, kindUpdate), uint64(docs))
	return appendFloats(appendShape(b, s, true), delta)
}

func encodeSkip() []byte { return appendHeader(nil, kindSkip) }
func encodeIdle() []byte { return appendHeader(nil, kindIdle) }

// modelSize and updateSize are the sizes of a model and an update message.
func modelSize(s shape) int  { return headerSize + 12 + 8*s.n() }
func updateSize(s shape) int { return headerSize + 20 + 8*s.n() }

// kindOf returns a message's kind after checking its header.
func kindOf(b []byte) (byte, error) {
	if len(b) < headerSize || string(b[:len(magic)]) != magic {
		return 0, fmt.Errorf("%w: missing header %q", errCodec, magic)
	}
	return b[len(magic)], nil
}

// readShape checks the shape in b against want and returns the rest.
func readShape(b []byte, want shape, withP bool) ([]byte, error) {
	n := 8
	if withP {
		n = 12
	}
	if len(b) < n {
		return nil, fmt.Errorf("%w: truncated shape", errCodec)
	}
	k, v := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	p := 0
	if withP {
		p = int(binary.LittleEndian.Uint32(b[8:]))
	} else {
		want.p = 0
	}
	if k != want.k || v != want.v || p != want.p {
		return nil, fmt.Errorf("%w: shape K=%d V=%d P=%d, want K=%d V=%d P=%d", errCodec, k, v, p, want.k, want.v, want.p)
	}
	return b[n:], nil
}

// readFloats decodes exactly n finite float64s, the first nonneg of them
// non-negative.
func readFloats(b []byte, n, nonneg int) ([]float64, error) {
	if len(b) != 8*n {
		return nil, fmt.Errorf("%w: %d bytes of values, want %d", errCodec, len(b), 8*n)
	}
	xs := make([]float64, n)
	for i := range xs {
		x := math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: value %d is not finite", errCodec, i)
		}
		if i < nonneg && x < 0 {
			return nil, fmt.Errorf("%w: W entry %d is negative", errCodec, i)
		}
		xs[i] = x
	}
	return xs, nil
}

// broadcast is a decoded coordinator message.
type broadcast struct {
	kind byte
	x    []float64 // model: W then θ; final: W
}

func decodeBroadcast(b []byte, s shape) (broadcast, error) {
	kind, err := kindOf(b)
	if err != nil {
		return broadcast{}, err
	}
	rest := b[headerSize:]
	switch kind {
	case kindSkip:
		if len(rest) != 0 {
			return broadcast{}, fmt.Errorf("%w: skip message with %d trailing bytes", errCodec, len(rest))
		}
		return broadcast{kind: kind}, nil
	case kindModel, kindFinal:
		withP := kind == kindModel
		if rest, err = readShape(rest, s, withP); err != nil {
			return broadcast{}, err
		}
		n := s.v * s.k
		if withP {
			n += s.p
		}
		x, err := readFloats(rest, n, s.v*s.k)
		return broadcast{kind: kind, x: x}, err
	}
	return broadcast{}, fmt.Errorf("%w: kind %d is not a broadcast", errCodec, kind)
}

// update is a decoded client message; idle when delta is nil.
type update struct {
	docs  int
	delta []float64
}

func decodeUpdate(b []byte, s shape) (update, error) {
	kind, err := kindOf(b)
	if err != nil {
		return update{}, err
	}
	rest := b[headerSize:]
	switch kind {
	case kindIdle:
		if len(rest) != 0 {
			return update{}, fmt.Errorf("%w: idle message with %d trailing bytes", errCodec, len(rest))
		}
		return update{}, nil
	case kindUpdate:
		if len(rest) < 8 {
			return update{}, fmt.Errorf("%w: truncated document count", errCodec)
		}
		docs := binary.LittleEndian.Uint64(rest)
		if docs > maxDocs {
			return update{}, fmt.Errorf("%w: document count above 2⁴⁰", errCodec)
		}
		if rest, err = readShape(rest[8:], s, true); err != nil {
			return update{}, err
		}
		d, err := readFloats(rest, s.n(), 0)
		return update{docs: int(docs), delta: d}, err
	}
	return update{}, fmt.Errorf("%w: kind %d is not an update", errCodec, kind)
}
