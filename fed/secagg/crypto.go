package secagg

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
)

// Labels that separate the uses of derived keys.
const (
	labelShareKey = "fedtopic secagg v1 share encryption"
	labelPairMask = "fedtopic secagg v1 pairwise mask"
	labelSelfMask = "fedtopic secagg v1 self mask"
)

// newPrivateKey draws an X25519 private key from src. The scalar is read
// from src (rather than through GenerateKey, which ignores its reader) so
// that a seeded source gives reproducible runs in tests and simulations.
func newPrivateKey(src io.Reader) ([32]byte, error) {
	var k [32]byte
	if _, err := io.ReadFull(src, k[:]); err != nil {
		return k, fmt.Errorf("random source: %w", err)
	}
	return k, nil
}

// publicKey returns the X25519 public key of a private key.
func publicKey(sk [32]byte) ([32]byte, error) {
	priv, err := ecdh.X25519().NewPrivateKey(sk[:])
	if err != nil {
		return [32]byte{}, err
	}
	var pk [32]byte
	copy(pk[:], priv.PublicKey().Bytes())
	return pk, nil
}

// privateKey returns the X25519 private key of a scalar, made once for
// all the pair keys it derives (making it computes its public key).
func privateKey(sk [32]byte) (*ecdh.PrivateKey, error) {
	return ecdh.X25519().NewPrivateKey(sk[:])
}

// pairKey derives the 32-byte key parties a and b share for one use:
// HKDF-SHA256 over their X25519 shared secret, salted with the session,
// with the label and the unordered pair as context. An adversarial public
// key that forces the all-zero shared secret is an error.
func pairKey(priv *ecdh.PrivateKey, peer [32]byte, session []byte, label string, a, b int) ([32]byte, error) {
	var out [32]byte
	pub, err := ecdh.X25519().NewPublicKey(peer[:])
	if err != nil {
		return out, err
	}
	shared, err := priv.ECDH(pub)
	if err != nil {
		return out, fmt.Errorf("key agreement with party %d: %w", b, err)
	}
	lo, hi := min(a, b), max(a, b)
	info := make([]byte, 0, len(label)+4)
	info = append(info, label...)
	info = binary.LittleEndian.AppendUint16(info, uint16(lo))
	info = binary.LittleEndian.AppendUint16(info, uint16(hi))
	k, err := hkdf.Key(sha256.New, shared, session, string(info), 32)
	if err != nil {
		return out, err
	}
	copy(out[:], k)
	return out, nil
}

// selfKey derives the AES key of a party's self mask from its seed.
func selfKey(seed [32]byte, session []byte) ([32]byte, error) {
	var out [32]byte
	k, err := hkdf.Key(sha256.New, seed[:], session, labelSelfMask, 32)
	if err != nil {
		return out, err
	}
	copy(out[:], k)
	return out, nil
}

// sealedSize is the size of one encrypted pair of shares: sender and
// recipient (2 bytes each), two shares and the GCM tag.
const sealedSize = 4 + 2*shareSize + 16

// shareAEAD returns the AES-256-GCM cipher parties a and b use for the
// shares they send each other.
func shareAEAD(key [32]byte) cipher.AEAD {
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	g, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	return g
}

// shareNonce is unique per key and direction: both directions of a pair
// use the same key, each sends exactly one message per session.
func shareNonce(from, to int) []byte {
	n := make([]byte, 12)
	binary.LittleEndian.PutUint16(n, uint16(from))
	binary.LittleEndian.PutUint16(n[2:], uint16(to))
	return n
}

// sealShares encrypts the shares from sends to party to.
func sealShares(key [32]byte, session []byte, from, to int, b, s share) []byte {
	w := writer{b: make([]byte, 0, 4+2*shareSize)}
	w.u16(from)
	w.u16(to)
	b.appendTo(&w)
	s.appendTo(&w)
	return shareAEAD(key).Seal(nil, shareNonce(from, to), w.b, session)
}

// openShares decrypts and checks one encrypted pair of shares.
func openShares(key [32]byte, session []byte, from, to int, ct []byte) (b, s share, err error) {
	pt, err := shareAEAD(key).Open(nil, shareNonce(from, to), ct, session)
	if err != nil {
		return b, s, fmt.Errorf("shares from party %d do not authenticate", from)
	}
	r := reader{b: pt}
	gotFrom, gotTo := r.u16(), r.u16()
	b, s = readShare(&r), readShare(&r)
	if err := r.done(); err != nil {
		return b, s, fmt.Errorf("shares from party %d: %w", from, err)
	}
	if gotFrom != from || gotTo != to {
		return b, s, fmt.Errorf("shares from party %d name sender %d and recipient %d", from, gotFrom, gotTo)
	}
	if int(b.x) != to+1 || int(s.x) != to+1 {
		return b, s, fmt.Errorf("shares from party %d are at the wrong point", from)
	}
	return b, s, nil
}
