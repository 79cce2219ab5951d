package secagg

import (
	"errors"
	"fmt"
)

// Magic strings of the saved states.
const (
	partyMagic  = "FSAP1"
	serverMagic = "FSAS1"
)

// MarshalBinary implements encoding.BinaryMarshaler: the party's whole
// state, so that it can be checkpointed after each stage and restored to
// answer a resend with the same bytes. It holds the party's private keys,
// its self-mask seed and the shares it holds of its peers' secrets: keep
// it where the party keeps its data, never with the coordinator.
func (p *Party) MarshalBinary() ([]byte, error) {
	w := writer{}
	w.raw([]byte(partyMagic))
	p.params.appendTo(&w)
	w.u16(p.index)
	w.u8(uint8(p.stage))
	w.raw(p.lastIn[:])
	w.blob(p.lastOut)
	w.raw(p.cSK[:])
	w.raw(p.sSK[:])
	w.raw(p.seed[:])
	w.u16(len(p.keys))
	for _, k := range p.keys {
		w.u16(k.party)
		w.raw(k.c[:])
		w.raw(k.s[:])
	}
	w.u16(len(p.u2))
	for _, q := range p.u2 {
		w.u16(q)
		p.held[q].seed.appendTo(&w)
		p.held[q].key.appendTo(&w)
	}
	if p.stage == waitForward {
		// Before masking, u2 is still empty but the party holds its own shares.
		p.held[p.index].seed.appendTo(&w)
		p.held[p.index].key.appendTo(&w)
	}
	return w.b, nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. It restores a
// state saved by MarshalBinary into a Party made by NewParty, which keeps
// its random source; the saved parameters and index must be the ones it
// was made with.
func (p *Party) UnmarshalBinary(b []byte) error {
	q, err := readParty(b)
	if err != nil {
		return fmt.Errorf("secagg: party state: %w: %w", ErrMalformed, err)
	}
	if !q.params.Equal(p.params) || q.index != p.index {
		return fmt.Errorf("secagg: party state: saved for party %d of another instance, not party %d", q.index, p.index)
	}
	q.src = p.src
	*p = *q
	return nil
}

func readParty(b []byte) (*Party, error) {
	r := reader{b: b}
	if string(r.take(len(partyMagic))) != partyMagic {
		return nil, errors.New("not a party state")
	}
	p := &Party{params: readParams(&r)}
	if r.err != nil {
		return nil, r.err
	}
	p.bound, _ = p.params.bound()
	n := p.params.Parties
	p.index = r.u16()
	p.stage = partyStage(r.u8())
	if p.index >= n || p.stage > partyDone {
		r.fail(fmt.Errorf("party %d in stage %d", p.index, p.stage))
	}
	copy(p.lastIn[:], r.take(32))
	p.lastOut = r.blob()
	p.cSK, p.sSK, p.seed = r.key32(), r.key32(), r.key32()
	readList(&r, n, func(q int) {
		p.keys = append(p.keys, keyPair{party: q, c: r.key32(), s: r.key32()})
	})
	if p.stage >= waitForward {
		p.held = make([]heldShares, n)
	}
	readList(&r, n, func(q int) {
		p.u2 = append(p.u2, q)
		h := heldShares{seed: readShare(&r), key: readShare(&r)}
		if p.held != nil {
			p.held[q] = h
		}
	})
	if p.stage == waitForward && r.err == nil {
		p.held[p.index] = heldShares{seed: readShare(&r), key: readShare(&r)}
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return p, nil
}

// readList reads a u16 count and that many ascending party numbers below
// n, calling each after reading each one.
func readList(r *reader, n int, each func(q int)) {
	c := r.u16()
	prev := -1
	for i := 0; i < c && r.err == nil; i++ {
		q := r.u16()
		if q <= prev || q >= n {
			r.fail(fmt.Errorf("party %d listed after %d of %d", q, prev, n))
			return
		}
		prev = q
		each(q)
	}
}

// MarshalBinary implements encoding.BinaryMarshaler: the coordinator's
// state and the messages of its current stage, so that it can checkpoint
// after each stage and resend them after a restart. It holds the running
// sum of masked vectors, never an individual input in the clear.
func (s *Server) MarshalBinary() ([]byte, error) {
	w := writer{}
	w.raw([]byte(serverMagic))
	s.params.appendTo(&w)
	w.u8(uint8(s.stage))
	writeList(&w, s.last.To)
	w.blob(s.last.Payload)
	w.u16(len(s.last.PerParty))
	for _, b := range s.last.PerParty {
		if b == nil {
			w.u8(0)
			continue
		}
		w.u8(1)
		w.blob(b)
	}
	w.u16(len(s.keys))
	for _, k := range s.keys {
		w.u16(k.party)
		w.raw(k.c[:])
		w.raw(k.s[:])
	}
	writeList(&w, s.u2)
	if s.stage == collectMasked {
		for _, q := range s.u2 {
			w.u16(len(s.sealed[q]))
			for _, c := range s.sealed[q] {
				w.u16(c.peer)
				w.raw(c.ct)
			}
		}
	}
	writeList(&w, s.u3)
	w.u32(s.sum.len())
	for i := range s.sum.len() {
		w.u64(s.sum.at(i))
	}
	w.u32(len(s.result))
	for _, v := range s.result {
		w.u64(uint64(v))
	}
	return w.b, nil
}

func writeList(w *writer, l []int) {
	w.u16(len(l))
	for _, q := range l {
		w.u16(q)
	}
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler: it restores a
// state saved by MarshalBinary into a Server made by NewServer with the
// same parameters.
func (s *Server) UnmarshalBinary(b []byte) error {
	t, err := readServer(b)
	if err != nil {
		return fmt.Errorf("secagg: coordinator state: %w: %w", ErrMalformed, err)
	}
	if !t.params.Equal(s.params) {
		return errors.New("secagg: coordinator state: saved for another instance")
	}
	*s = *t
	return nil
}

func readServer(b []byte) (*Server, error) {
	r := reader{b: b}
	if string(r.take(len(serverMagic))) != serverMagic {
		return nil, errors.New("not a coordinator state")
	}
	s := &Server{params: readParams(&r)}
	if r.err != nil {
		return nil, r.err
	}
	n := s.params.Parties
	s.stage = serverStage(r.u8())
	if s.stage > serverAborted {
		r.fail(fmt.Errorf("stage %d", s.stage))
	}
	readList(&r, n, func(q int) { s.last.To = append(s.last.To, q) })
	s.last.Payload = r.blob()
	if c := r.u16(); c > 0 {
		if c != n {
			r.fail(fmt.Errorf("%d per-party messages for %d parties", c, n))
		}
		s.last.PerParty = make([][]byte, n)
		for i := 0; i < c && r.err == nil; i++ {
			if r.u8() == 1 {
				s.last.PerParty[i] = r.blob()
			}
		}
	}
	readList(&r, n, func(q int) {
		s.keys = append(s.keys, keyPair{party: q, c: r.key32(), s: r.key32()})
	})
	readList(&r, n, func(q int) { s.u2 = append(s.u2, q) })
	if s.stage == collectMasked && r.err == nil {
		s.sealed = make([][]sealed, n)
		for _, q := range s.u2 {
			c := r.u16()
			for i := 0; i < c && r.err == nil; i++ {
				s.sealed[q] = append(s.sealed[q], sealed{peer: r.u16(), ct: append([]byte(nil), r.take(sealedSize)...)})
			}
		}
	}
	readList(&r, n, func(q int) { s.u3 = append(s.u3, q) })
	if c := r.u32(); c > 0 {
		if c != s.params.Len {
			r.fail(fmt.Errorf("sum of %d values, want %d", c, s.params.Len))
		}
		if r.err == nil && len(r.b) < 8*c {
			r.fail(errShort)
		}
		if r.err == nil {
			s.sum = newRingVec(s.params.Bits, c)
			for i := range c {
				s.sum.set(i, r.u64())
			}
		}
	}
	if c := r.u32(); c > 0 {
		if c != s.params.Len {
			r.fail(fmt.Errorf("result of %d values, want %d", c, s.params.Len))
		}
		s.result = make([]int64, 0, min(c, len(r.b)/8))
		for i := 0; i < c && r.err == nil; i++ {
			s.result = append(s.result, int64(r.u64()))
		}
	}
	if s.stage == serverDone {
		s.last = Out{Done: true, Sum: s.result, Included: s.u3}
	}
	if err := r.done(); err != nil {
		return nil, err
	}
	return s, nil
}
