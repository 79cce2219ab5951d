package pctd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Messages. Every message starts with the four bytes "PCT1" and a kind
// byte; numbers are little-endian, values float32.
//
//	model   (coordinator → party: the topics p(w|z) of the next iteration,
//	        or the final model): uint32 K, uint32 V, K×V rows, each a
//	        probability distribution over the vocabulary.
//	update  (party → coordinator): uint32 K, uint32 V, V×K values M_t of
//	        Eq. 10, word-major (the K values of word 0, then word 1 …);
//	        with noise they may be negative.
//
// Decoding checks the shape, that every value is finite (and for a model
// non-negative, every row summing to 1 within rowTolerance, then
// renormalized in float64) and that no update value exceeds maxValue in
// magnitude. Errors name positions, never values.
const (
	magic        = "PCT1"
	kindModel    = 1
	kindUpdate   = 2
	headerSize   = len(magic) + 1
	rowTolerance = 1e-4
	// maxValue bounds |M_t(w, k)|: far above any count a party can hold
	// plus its noise, far below float32's range.
	maxValue = 1e15
)

// errCodec is wrapped by every decoding error.
var errCodec = errors.New("pctd: malformed message")

func appendHeader(b []byte, kind byte, k, v int) []byte {
	b = append(append(b, magic...), kind)
	b = binary.LittleEndian.AppendUint32(b, uint32(k))
	return binary.LittleEndian.AppendUint32(b, uint32(v))
}

func appendValues(b []byte, xs []float64) []byte {
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	return b
}

// encodeModel encodes K topics over V words (row-major K×V).
func encodeModel(phi []float64, k, v int) []byte {
	return appendValues(appendHeader(make([]byte, 0, modelSize(k, v)), kindModel, k, v), phi)
}

// encodeUpdate encodes M_t (word-major V×K).
func encodeUpdate(m []float64, k, v int) []byte {
	return appendValues(appendHeader(make([]byte, 0, updateSize(k, v)), kindUpdate, k, v), m)
}

// decodeHeader checks the header of a message of kind and shape k×v and
// returns its values' bytes.
func decodeHeader(b []byte, kind byte, k, v int) ([]byte, error) {
	if len(b) < headerSize+8 || string(b[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w: no PCT1 header in %d bytes", errCodec, len(b))
	}
	if got := b[len(magic)]; got != kind {
		return nil, fmt.Errorf("%w: kind %d, want %d", errCodec, got, kind)
	}
	gk, gv := binary.LittleEndian.Uint32(b[headerSize:]), binary.LittleEndian.Uint32(b[headerSize+4:])
	if int64(gk) != int64(k) || int64(gv) != int64(v) {
		return nil, fmt.Errorf("%w: message is %d × %d, want %d × %d", errCodec, gk, gv, k, v)
	}
	b = b[headerSize+8:]
	if len(b) != 4*k*v {
		return nil, fmt.Errorf("%w: %d × %d values in %d bytes, want %d", errCodec, k, v, len(b), 4*k*v)
	}
	return b, nil
}

// decodeModel decodes a model of k topics over v words.
func decodeModel(b []byte, k, v int) ([]float64, error) {
	b, err := decodeHeader(b, kindModel, k, v)
	if err != nil {
		return nil, err
	}
	phi := make([]float64, k*v)
	for t := range k {
		row := phi[t*v : (t+1)*v]
		var s float64
		for w := range row {
			x := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*(t*v+w):])))
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return nil, fmt.Errorf("%w: entry (%d, %d) is not finite and non-negative", errCodec, t, w)
			}
			row[w] = x
			s += x
		}
		if math.Abs(s-1) > rowTolerance {
			return nil, fmt.Errorf("%w: row %d does not sum to 1 ± %g", errCodec, t, rowTolerance)
		}
		for w := range row {
			row[w] /= s
		}
	}
	return phi, nil
}

// decodeUpdate decodes M_t of k topics over v words.
func decodeUpdate(b []byte, k, v int) ([]float64, error) {
	b, err := decodeHeader(b, kindUpdate, k, v)
	if err != nil {
		return nil, err
	}
	m := make([]float64, k*v)
	for i := range m {
		x := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxValue {
			return nil, fmt.Errorf("%w: value (word %d, topic %d) is not finite or exceeds %g in magnitude", errCodec, i/k, i%k, maxValue)
		}
		m[i] = x
	}
	return m, nil
}

// modelSize returns the encoded size of a k×v model.
func modelSize(k, v int) int { return headerSize + 8 + 4*k*v }

// updateSize returns the encoded size of a k×v update.
func updateSize(k, v int) int { return headerSize + 8 + 4*k*v }
