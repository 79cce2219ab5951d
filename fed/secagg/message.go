package secagg

import (
	"errors"
	"fmt"
)

// Kind names a message of the protocol.
type Kind uint8

// The messages, in protocol order. Even kinds go from the coordinator to
// parties, odd kinds from a party to the coordinator.
const (
	KindSetup     Kind = 1 + iota // coordinator → all: the parameters
	KindAdvertise                 // party → coordinator: its two public keys
	KindKeys                      // coordinator → survivors: everyone's public keys
	KindShares                    // party → coordinator: encrypted shares, one per peer
	KindForward                   // coordinator → one party: the shares addressed to it
	KindMasked                    // party → coordinator: the masked vector
	KindUnmask                    // coordinator → survivors: who is alive, who dropped
	KindReveal                    // party → coordinator: the shares that unmask the sum
)

var kindNames = [...]string{"", "setup", "advertise", "keys", "shares", "forward", "masked", "unmask", "reveal"}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && k != 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// magic starts every message.
const magic = "FSA1"

// keyPair is one party's advertised public keys: c for encrypting shares,
// s for pairwise masks.
type keyPair struct {
	party int
	c, s  [32]byte
}

// sealed is one encrypted pair of shares with its peer (recipient in
// KindShares, sender in KindForward).
type sealed struct {
	peer int
	ct   []byte
}

// Reveal kinds: the share of a survivor's self-mask seed, or of a dropped
// party's mask key.
const (
	revealSeed = 1
	revealKey  = 2
)

// revealed is one share a party hands over in the last stage.
type revealed struct {
	owner int
	kind  uint8
	sh    share
}

// message is any protocol message. Which fields are used depends on kind.
type message struct {
	kind    Kind
	session []byte
	party   int        // sender; for KindForward the recipient
	params  Params     // KindSetup
	keys    []keyPair  // KindAdvertise (one), KindKeys (ascending party)
	sealed  []sealed   // KindShares, KindForward (ascending peer)
	bits    int        // KindMasked: k
	count   int        // KindMasked: the number of values
	masked  []byte     // KindMasked: count values of k bits, packed (packWords)
	alive   []int      // KindUnmask (ascending)
	dropped []int      // KindUnmask (ascending)
	reveals []revealed // KindReveal (ascending owner)
}

// encode returns the canonical bytes of m.
func (m *message) encode() []byte {
	w := writer{}
	if m.kind == KindMasked {
		w.b = make([]byte, 0, 16+len(m.session)+len(m.masked))
	}
	w.raw([]byte(magic))
	w.u8(uint8(m.kind))
	if m.kind == KindSetup {
		m.params.appendTo(&w)
		return w.b
	}
	w.u8(uint8(len(m.session)))
	w.raw(m.session)
	switch m.kind {
	case KindAdvertise:
		w.u16(m.party)
		w.raw(m.keys[0].c[:])
		w.raw(m.keys[0].s[:])
	case KindKeys:
		w.u16(len(m.keys))
		for _, k := range m.keys {
			w.u16(k.party)
			w.raw(k.c[:])
			w.raw(k.s[:])
		}
	case KindShares, KindForward:
		w.u16(m.party)
		w.u16(len(m.sealed))
		for _, s := range m.sealed {
			w.u16(s.peer)
			w.raw(s.ct)
		}
	case KindMasked:
		w.u16(m.party)
		w.u8(uint8(m.bits))
		w.u32(m.count)
		w.raw(m.masked)
	case KindUnmask:
		w.u16(len(m.alive))
		for _, p := range m.alive {
			w.u16(p)
		}
		w.u16(len(m.dropped))
		for _, p := range m.dropped {
			w.u16(p)
		}
	case KindReveal:
		w.u16(m.party)
		w.u16(len(m.reveals))
		for _, r := range m.reveals {
			w.u16(r.owner)
			w.u8(r.kind)
			r.sh.appendTo(&w)
		}
	}
	return w.b
}

// decode parses b strictly: known kind, every field in range, lists in
// ascending order without repeats, no trailing bytes. Whatever decodes
// encodes back to the same bytes.
func decode(b []byte) (*message, error) {
	m, err := decodeMessage(b)
	if err != nil {
		return nil, fmt.Errorf("secagg: decode: %w: %w", ErrMalformed, err)
	}
	return m, nil
}

func decodeMessage(b []byte) (*message, error) {
	r := reader{b: b}
	if string(r.take(len(magic))) != magic {
		return nil, errors.New("not a secure aggregation message")
	}
	m := &message{kind: Kind(r.u8())}
	if m.kind == KindSetup {
		m.params = readParams(&r)
		m.session = m.params.Session
		return m, r.done()
	}
	if m.kind < KindSetup || m.kind > KindReveal {
		if r.err != nil {
			return nil, r.err
		}
		return nil, fmt.Errorf("unknown message kind %d", uint8(m.kind))
	}
	n := int(r.u8())
	if n == 0 || n > MaxSession {
		r.fail(fmt.Errorf("session of %d bytes", n))
	}
	m.session = append([]byte(nil), r.take(n)...)
	party := func() int {
		p := r.u16()
		if p >= MaxParties {
			r.fail(fmt.Errorf("party %d out of range", p))
		}
		return p
	}
	// ascending reads a strictly increasing party list of count entries.
	ascending := func(count int, each func(p int)) {
		prev := -1
		for i := 0; i < count && r.err == nil; i++ {
			p := party()
			if p <= prev {
				r.fail(fmt.Errorf("party %d listed after %d", p, prev))
			}
			prev = p
			each(p)
		}
	}
	count := func() int {
		c := r.u16()
		if c > MaxParties {
			r.fail(fmt.Errorf("list of %d entries", c))
		}
		return c
	}
	switch m.kind {
	case KindAdvertise:
		m.party = party()
		m.keys = []keyPair{{party: m.party, c: r.key32(), s: r.key32()}}
	case KindKeys:
		c := count()
		if c == 0 && r.err == nil {
			r.fail(errors.New("no keys"))
		}
		ascending(c, func(p int) {
			m.keys = append(m.keys, keyPair{party: p, c: r.key32(), s: r.key32()})
		})
	case KindShares, KindForward:
		m.party = party()
		ascending(count(), func(p int) {
			if p == m.party {
				r.fail(fmt.Errorf("party %d sends shares to itself", p))
			}
			ct := r.take(sealedSize)
			m.sealed = append(m.sealed, sealed{peer: p, ct: append([]byte(nil), ct...)})
		})
	case KindMasked:
		m.party = party()
		m.bits = int(r.u8())
		if !ringBitsOK(m.bits) && r.err == nil {
			r.fail(fmt.Errorf("ring of 2^%d", m.bits))
		}
		m.count = r.u32()
		if r.err == nil && (m.count == 0 || m.count > MaxLen) {
			r.fail(fmt.Errorf("%d values", m.count))
		}
		if r.err == nil {
			if err := checkPacked(r.b, m.count, m.bits); err != nil {
				r.fail(err)
			}
		}
		m.masked = r.take(len(r.b)) // not copied: a masked vector is summed and dropped within the call that decodes it
	case KindUnmask:
		ascending(count(), func(p int) { m.alive = append(m.alive, p) })
		ascending(count(), func(p int) { m.dropped = append(m.dropped, p) })
	case KindReveal:
		m.party = party()
		ascending(count(), func(p int) {
			k := r.u8()
			if k != revealSeed && k != revealKey {
				r.fail(fmt.Errorf("reveal kind %d", k))
			}
			m.reveals = append(m.reveals, revealed{owner: p, kind: k, sh: readShare(&r)})
		})
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return m, nil
}

// MessageKind returns the kind of an encoded message without decoding the
// rest, so that a transport can route it.
func MessageKind(b []byte) (Kind, error) {
	if len(b) < len(magic)+1 || string(b[:len(magic)]) != magic {
		return 0, fmt.Errorf("secagg: %w: not a secure aggregation message", ErrMalformed)
	}
	k := Kind(b[len(magic)])
	if k < KindSetup || k > KindReveal {
		return 0, fmt.Errorf("secagg: %w: unknown message kind %d", ErrMalformed, uint8(k))
	}
	return k, nil
}
