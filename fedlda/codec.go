package fedlda

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Messages. Every message starts with the four bytes "FLD1" and a kind
// byte; numbers are little-endian.
//
//	counts  (collector → parties: every broadcast, and the final model):
//	        uint32 K, uint32 V, K×V uint32 counts n_kw, topic-major.
//	tuples  (party → collector): uint32 U (users), uint32 l (tuples per
//	        user), then U·l tuples of 8 bytes: uint32 w, uint16 k_old,
//	        uint16 k_new. noTopic (0xFFFF) as k_old marks a token's first
//	        assignment; a dummy (padding) tuple is (0, noTopic, noTopic).
//
// Decoding checks the shape and every word and topic; errors name
// positions, never values.
const (
	magic      = "FLD1"
	kindCounts = 1
	kindTuples = 2
	headerSize = len(magic) + 1
	tupleSize  = 8
	// maxPayload is the largest message the transports carry (an int32
	// length less their overhead).
	maxPayload = math.MaxInt32 - 1<<20
	// noTopic marks "no topic": a token never reported, a dummy tuple.
	noTopic = math.MaxUint16
)

// errCodec is wrapped by every decoding error.
var errCodec = errors.New("fedlda: malformed message")

// tuple is one reported change of a token's topic: its (perturbed) word,
// its previous topic (noTopic for the first assignment) and its new one.
type tuple struct {
	w          uint32
	kOld, kNew uint16
}

// dummy reports whether t is a padding tuple.
func (t tuple) dummy() bool { return t.kNew == noTopic }

func appendHeader(b []byte, kind byte) []byte { return append(append(b, magic...), kind) }

// encodeCounts encodes K×V topic-major counts.
func encodeCounts(k, v int, n []uint32) []byte {
	b := make([]byte, 0, countsSize(k, v))
	b = appendHeader(b, kindCounts)
	b = binary.LittleEndian.AppendUint32(b, uint32(k))
	b = binary.LittleEndian.AppendUint32(b, uint32(v))
	for _, x := range n {
		b = binary.LittleEndian.AppendUint32(b, x)
	}
	return b
}

// countsSize is the size of a K×V counts message.
func countsSize(k, v int) int { return headerSize + 8 + 4*k*v }

// decodeCounts decodes a K×V counts message into n (len K·V).
func decodeCounts(b []byte, k, v int, n []uint32) error {
	if err := checkHeader(b, kindCounts); err != nil {
		return err
	}
	b = b[headerSize:]
	if len(b) < 8 {
		return fmt.Errorf("%w: counts header truncated", errCodec)
	}
	if gk, gv := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:])); gk != k || gv != v {
		return fmt.Errorf("%w: counts of %d × %d, want %d × %d", errCodec, gk, gv, k, v)
	}
	b = b[8:]
	if len(b) != 4*k*v {
		return fmt.Errorf("%w: %d × %d counts in %d bytes, want %d", errCodec, k, v, len(b), 4*k*v)
	}
	for i := range n {
		n[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return nil
}

// tuplesHeader starts an update of users users with l tuples each; the
// tuples follow, tupleSize bytes each, written with putTuple.
func tuplesHeader(users, l int) []byte {
	b := make([]byte, headerSize+8, tuplesSize(users, l))
	copy(b, magic)
	b[len(magic)] = kindTuples
	binary.LittleEndian.PutUint32(b[headerSize:], uint32(users))
	binary.LittleEndian.PutUint32(b[headerSize+4:], uint32(l))
	return b[:tuplesSize(users, l)]
}

// tuplesSize is the size of an update of users users with l tuples each.
func tuplesSize(users, l int) int { return headerSize + 8 + tupleSize*users*l }

// putTuple writes t at b[0:8].
func putTuple(b []byte, t tuple) {
	binary.LittleEndian.PutUint32(b, t.w)
	binary.LittleEndian.PutUint16(b[4:], t.kOld)
	binary.LittleEndian.PutUint16(b[6:], t.kNew)
}

// getTuple reads the tuple at b[0:8].
func getTuple(b []byte) tuple {
	return tuple{w: binary.LittleEndian.Uint32(b), kOld: binary.LittleEndian.Uint16(b[4:]), kNew: binary.LittleEndian.Uint16(b[6:])}
}

// tupleShape is what an update must look like.
type tupleShape struct {
	k, v, l, maxUsers int
}

// decodeTuples checks an update against s and returns its number of users
// and its tuples (a view of b, tupleSize bytes each). It refuses a wrong
// header, a count of tuples per user other than l, a number of users
// outside [1, maxUsers] or that does not match the payload's length, and
// any tuple whose word is ≥ V, whose topics are out of range, or that is
// neither a dummy nor a real change.
func decodeTuples(b []byte, s tupleShape) (users int, body []byte, err error) {
	if err := checkHeader(b, kindTuples); err != nil {
		return 0, nil, err
	}
	b = b[headerSize:]
	if len(b) < 8 {
		return 0, nil, fmt.Errorf("%w: update header truncated", errCodec)
	}
	u, l := int64(binary.LittleEndian.Uint32(b)), int64(binary.LittleEndian.Uint32(b[4:]))
	if l != int64(s.l) {
		return 0, nil, fmt.Errorf("%w: %d tuples per user, want exactly l = %d", errCodec, l, s.l)
	}
	if u < 1 || u > int64(s.maxUsers) {
		return 0, nil, fmt.Errorf("%w: %d users, want 1..%d", errCodec, u, s.maxUsers)
	}
	b = b[8:]
	if want := u * l * tupleSize; int64(len(b)) != want {
		return 0, nil, fmt.Errorf("%w: %d users × %d tuples need %d bytes, the update has %d", errCodec, u, l, want, len(b))
	}
	if i, err := checkTuples(b, s.k, s.v); err != nil {
		return 0, nil, fmt.Errorf("%w: user %d, tuple %d: %w", errCodec, i/s.l, i%s.l, err)
	}
	return int(u), b, nil
}

// checkTuples checks every tuple of body and returns the index of the
// first bad one.
func checkTuples(body []byte, k, v int) (int, error) {
	for i := 0; i < len(body); i += tupleSize {
		t := getTuple(body[i:])
		switch {
		case t.dummy():
			if t.kOld != noTopic || t.w != 0 {
				return i / tupleSize, errors.New("a dummy tuple must be (0, none, none)")
			}
		case int(t.w) >= v:
			return i / tupleSize, fmt.Errorf("word id outside [0, %d)", v)
		case int(t.kNew) >= k || (t.kOld != noTopic && int(t.kOld) >= k):
			return i / tupleSize, fmt.Errorf("topic outside [0, %d)", k)
		case t.kOld == t.kNew:
			return i / tupleSize, errors.New("a tuple that changes nothing")
		}
	}
	return 0, nil
}

func checkHeader(b []byte, kind byte) error {
	if len(b) < headerSize || string(b[:len(magic)]) != magic {
		return fmt.Errorf("%w: no FLD1 header in %d bytes", errCodec, len(b))
	}
	if b[len(magic)] != kind {
		return fmt.Errorf("%w: kind %d, want %d", errCodec, b[len(magic)], kind)
	}
	return nil
}
