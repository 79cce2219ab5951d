package ftm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Messages. Every message starts with the four bytes "FTM1" and a kind
// byte; numbers are little-endian, topic-word rows float32.
//
//	start   (coordinator → party, round 1): nothing more.
//	model   (coordinator → party: a composed local model; the final global
//	        model): uint32 K, uint32 V, K float64 topic weights, K×V rows.
//	update  (party → coordinator): uint64 n_p (documents), uint32 K,
//	        uint32 V, K×V rows — the topic-normalized local model M̂_p.
//
// Every row is a probability distribution; decoding checks the shape, that
// every value is finite and non-negative and that every row sums to 1
// within rowTolerance, and renormalizes the rows in float64. Errors name
// positions, never values.
const (
	magic        = "FTM1"
	kindStart    = 1
	kindModel    = 2
	kindUpdate   = 3
	headerSize   = len(magic) + 1
	rowTolerance = 1e-4 // float32 rows of V ≤ 2³¹ entries sum to 1 within V·2⁻²⁴·max φ, far inside it
	maxDocs      = 1 << 40
)

// errCodec is wrapped by every decoding error.
var errCodec = errors.New("ftm: malformed message")

// modelMsg is a set of topics with weights: a composed local model or the
// global model M*.
type modelMsg struct {
	k, v    int
	weights []float64
	rows    []float64 // k×v row-major, each row a distribution
}

// updateMsg is a party's update.
type updateMsg struct {
	docs int64
	k, v int
	rows []float64
}

func appendHeader(b []byte, kind byte) []byte { return append(append(b, magic...), kind) }

// encodeStart returns the round-1 broadcast.
func encodeStart() []byte { return appendHeader(nil, kindStart) }

// encodeModel encodes a model message.
func encodeModel(m modelMsg) []byte {
	b := make([]byte, 0, headerSize+8+8*m.k+4*m.k*m.v)
	b = appendHeader(b, kindModel)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.k))
	b = binary.LittleEndian.AppendUint32(b, uint32(m.v))
	for _, w := range m.weights {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(w))
	}
	return appendRows(b, m.rows)
}

// encodeUpdate encodes an update message.
func encodeUpdate(u updateMsg) []byte {
	b := make([]byte, 0, headerSize+16+4*u.k*u.v)
	b = appendHeader(b, kindUpdate)
	b = binary.LittleEndian.AppendUint64(b, uint64(u.docs))
	b = binary.LittleEndian.AppendUint32(b, uint32(u.k))
	b = binary.LittleEndian.AppendUint32(b, uint32(u.v))
	return appendRows(b, u.rows)
}

func appendRows(b []byte, rows []float64) []byte {
	for _, x := range rows {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	return b
}

// messageKind returns the kind of a message after checking its header.
func messageKind(b []byte) (byte, error) {
	if len(b) < headerSize || string(b[:len(magic)]) != magic {
		return 0, fmt.Errorf("%w: no FTM1 header in %d bytes", errCodec, len(b))
	}
	k := b[len(magic)]
	if k < kindStart || k > kindUpdate {
		return 0, fmt.Errorf("%w: unknown kind %d", errCodec, k)
	}
	return k, nil
}

// decodeModel decodes a model message of v columns and at most maxK rows.
func decodeModel(b []byte, v, maxK int) (modelMsg, error) {
	kind, err := messageKind(b)
	if err != nil {
		return modelMsg{}, err
	}
	if kind != kindModel {
		return modelMsg{}, fmt.Errorf("%w: kind %d, want a model (%d)", errCodec, kind, kindModel)
	}
	b = b[headerSize:]
	if len(b) < 8 {
		return modelMsg{}, fmt.Errorf("%w: model header truncated", errCodec)
	}
	k, gv := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	if k < 1 || k > maxK || gv != v {
		return modelMsg{}, fmt.Errorf("%w: model is %d × %d, want 1..%d × %d", errCodec, k, gv, maxK, v)
	}
	b = b[8:]
	if want := 8*k + 4*k*v; len(b) != want {
		return modelMsg{}, fmt.Errorf("%w: %d × %d model in %d bytes, want %d", errCodec, k, v, len(b), want)
	}
	m := modelMsg{k: k, v: v, weights: make([]float64, k)}
	for t := range m.weights {
		w := math.Float64frombits(binary.LittleEndian.Uint64(b[8*t:]))
		if math.IsNaN(w) || math.IsInf(w, 0) || w < 0 {
			return modelMsg{}, fmt.Errorf("%w: weight of topic %d is not finite and non-negative", errCodec, t)
		}
		m.weights[t] = w
	}
	m.rows, err = decodeRows(b[8*k:], k, v)
	return m, err
}

// decodeUpdate decodes an update of v columns and at most maxK rows.
func decodeUpdate(b []byte, v, maxK int) (updateMsg, error) {
	kind, err := messageKind(b)
	if err != nil {
		return updateMsg{}, err
	}
	if kind != kindUpdate {
		return updateMsg{}, fmt.Errorf("%w: kind %d, want an update (%d)", errCodec, kind, kindUpdate)
	}
	b = b[headerSize:]
	if len(b) < 16 {
		return updateMsg{}, fmt.Errorf("%w: update header truncated", errCodec)
	}
	u := updateMsg{docs: int64(binary.LittleEndian.Uint64(b))}
	u.k, u.v = int(binary.LittleEndian.Uint32(b[8:])), int(binary.LittleEndian.Uint32(b[12:]))
	if u.docs < 1 || u.docs > maxDocs {
		return updateMsg{}, fmt.Errorf("%w: document count outside [1, 2^40]", errCodec)
	}
	if u.k < 1 || u.k > maxK || u.v != v {
		return updateMsg{}, fmt.Errorf("%w: update is %d × %d, want 1..%d × %d", errCodec, u.k, u.v, maxK, v)
	}
	b = b[16:]
	if want := 4 * u.k * u.v; len(b) != want {
		return updateMsg{}, fmt.Errorf("%w: %d × %d update in %d bytes, want %d", errCodec, u.k, u.v, len(b), want)
	}
	u.rows, err = decodeRows(b, u.k, u.v)
	return u, err
}

// decodeRows decodes k×v float32 rows, checks them and renormalizes each.
func decodeRows(b []byte, k, v int) ([]float64, error) {
	rows := make([]float64, k*v)
	for t := 0; t < k; t++ {
		row := rows[t*v : (t+1)*v]
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
	return rows, nil
}

// modelSize returns the encoded size of a k×v model message.
func modelSize(k, v int) int { return headerSize + 8 + 8*k + 4*k*v }

// updateSize returns the encoded size of a k×v update.
func updateSize(k, v int) int { return headerSize + 16 + 4*k*v }
