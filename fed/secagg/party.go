package secagg

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"slices"
)

// partyStage is where a party is: the kind of message it waits for next.
type partyStage uint8

const (
	waitSetup   partyStage = iota // next: KindSetup
	waitKeys                      // next: KindKeys
	waitForward                   // next: KindForward
	waitUnmask                    // next: KindUnmask
	partyDone                     // answered an unmask request; only its repeat is accepted
)

var partyStageNames = [...]string{"setup", "keys", "forward", "unmask", "done"}

// expects returns the message kind a stage accepts.
func (s partyStage) expects() Kind {
	switch s {
	case waitSetup:
		return KindSetup
	case waitKeys:
		return KindKeys
	case waitForward:
		return KindForward
	case waitUnmask:
		return KindUnmask
	}
	return 0
}

// heldShares are the shares a party holds of one peer's two secrets.
type heldShares struct {
	seed, key share
}

// Party is one party's half of an instance: a state machine advanced by
// Handle, one coordinator message at a time. It does no I/O; its only
// randomness is read from the source it was made with, in the setup and
// key-sharing stages. A Party is not safe for concurrent use.
type Party struct {
	params Params
	index  int
	bound  int64
	src    io.Reader

	stage   partyStage
	lastIn  [32]byte // SHA-256 of the last message handled
	lastOut []byte   // the reply to it, resent if it comes again

	cSK, sSK [32]byte     // private keys: share encryption, pairwise masks
	seed     [32]byte     // self-mask seed
	keys     []keyPair    // the key list of the keys stage (U1), ascending
	held     []heldShares // indexed by owner; valid for owners in u2
	u2       []int        // parties whose shares this party holds, itself included
}

// NewParty returns party index (0 … n−1) of the instance p, drawing its
// keys, self-mask seed and share polynomials from src (crypto/rand.Reader
// in production; a seeded stream only in tests and simulations).
func NewParty(p Params, index int, src io.Reader) (*Party, error) {
	b, err := p.Bound()
	if err != nil {
		return nil, err
	}
	if index < 0 || index >= p.Parties {
		return nil, fmt.Errorf("secagg: party %d of %d", index, p.Parties)
	}
	if src == nil {
		return nil, fmt.Errorf("secagg: party %d: no random source", index)
	}
	return &Party{params: p, index: index, bound: b, src: src}, nil
}

// Handle advances the party by one stage: msg is the coordinator's message
// and the result is the reply to send back. input is the party's vector on
// the fixed-point grid (see Params.Encode); only the forward stage, which
// masks it, reads it, and it must then hold Len values of magnitude at most
// Params.Bound, or the party refuses with ErrOverflow.
//
// A message whose bytes equal the last one handled gets the same reply
// again, without drawing randomness or reading input: resends are
// idempotent. Any other message that is not the one the stage expects —
// from an earlier or a later stage, or a second, different request for the
// current one — is rejected with ErrStage. On any error the party's state
// is unchanged.
func (p *Party) Handle(msg []byte, input []int64) ([]byte, error) {
	if p.lastOut != nil && sha256.Sum256(msg) == p.lastIn {
		return slices.Clone(p.lastOut), nil
	}
	m, err := decode(msg)
	if err != nil {
		return nil, fmt.Errorf("secagg: party %d: %w", p.index, err)
	}
	if !bytes.Equal(m.session, p.params.Session) {
		return nil, fmt.Errorf("secagg: party %d: message for another session: %w", p.index, ErrStage)
	}
	if want := p.stage.expects(); m.kind != want {
		return nil, fmt.Errorf("secagg: party %d: %s message in stage %s (want %s): %w",
			p.index, m.kind, partyStageNames[p.stage], want, ErrStage)
	}
	next := *p // the stages work on a copy and commit only on success
	var out *message
	switch m.kind {
	case KindSetup:
		out, err = next.setup(m)
	case KindKeys:
		out, err = next.shareKeys(m)
	case KindForward:
		out, err = next.mask(m, input)
	case KindUnmask:
		out, err = next.unmask(m)
	}
	if err != nil {
		return nil, fmt.Errorf("secagg: party %d: %s: %w", p.index, m.kind, err)
	}
	next.stage++
	next.lastIn = sha256.Sum256(msg)
	next.lastOut = out.encode()
	*p = next
	return slices.Clone(p.lastOut), nil
}

// setup checks the coordinator's parameters against the party's own and
// advertises two fresh public keys.
func (p *Party) setup(m *message) (*message, error) {
	if p.src == nil {
		return nil, errors.New("no random source")
	}
	if !m.params.Equal(p.params) {
		return nil, fmt.Errorf("coordinator's parameters differ from this party's: %w", ErrRefused)
	}
	var err error
	if p.cSK, err = newPrivateKey(p.src); err != nil {
		return nil, err
	}
	if p.sSK, err = newPrivateKey(p.src); err != nil {
		return nil, err
	}
	kp := keyPair{party: p.index}
	if kp.c, err = publicKey(p.cSK); err != nil {
		return nil, err
	}
	if kp.s, err = publicKey(p.sSK); err != nil {
		return nil, err
	}
	return &message{kind: KindAdvertise, session: p.params.Session, party: p.index, keys: []keyPair{kp}}, nil
}

// shareKeys checks the key list, draws the self-mask seed, and sends each
// listed peer its shares of the seed and of the mask key, encrypted.
func (p *Party) shareKeys(m *message) (*message, error) {
	if len(m.keys) < p.params.Threshold {
		return nil, fmt.Errorf("%d parties listed, fewer than the threshold %d: %w", len(m.keys), p.params.Threshold, ErrBelowThreshold)
	}
	seen := make(map[[32]byte]bool, 2*len(m.keys))
	self := false
	for _, k := range m.keys {
		if k.party >= p.params.Parties {
			return nil, fmt.Errorf("party %d listed in an instance of %d", k.party, p.params.Parties)
		}
		if seen[k.c] || seen[k.s] || k.c == k.s {
			return nil, fmt.Errorf("party %d's public key is listed twice: %w", k.party, ErrRefused)
		}
		seen[k.c], seen[k.s] = true, true
		if k.party == p.index {
			own := p.ownKeys()
			if k.c != own.c || k.s != own.s {
				return nil, fmt.Errorf("this party's keys are listed wrong: %w", ErrRefused)
			}
			self = true
		}
	}
	if !self {
		return nil, fmt.Errorf("this party is not in the key list: %w", ErrRefused)
	}
	seed, err := newPrivateKey(p.src) // 32 uniform bytes
	if err != nil {
		return nil, err
	}
	p.seed = seed
	seedShares, err := shamirSplit(seed, p.params.Threshold, p.params.Parties, p.src)
	if err != nil {
		return nil, err
	}
	keyShares, err := shamirSplit(p.sSK, p.params.Threshold, p.params.Parties, p.src)
	if err != nil {
		return nil, err
	}
	p.keys = slices.Clone(m.keys)
	p.held = make([]heldShares, p.params.Parties)
	p.held[p.index] = heldShares{seed: seedShares[p.index], key: keyShares[p.index]}
	out := &message{kind: KindShares, session: p.params.Session, party: p.index}
	cPriv, err := privateKey(p.cSK)
	if err != nil {
		return nil, err
	}
	for _, k := range m.keys {
		if k.party == p.index {
			continue
		}
		key, err := pairKey(cPriv, k.c, p.params.Session, labelShareKey, p.index, k.party)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		ct := sealShares(key, p.params.Session, p.index, k.party, seedShares[k.party], keyShares[k.party])
		out.sealed = append(out.sealed, sealed{peer: k.party, ct: ct})
	}
	return out, nil
}

// ownKeys returns the party's public keys.
func (p *Party) ownKeys() keyPair {
	c, _ := publicKey(p.cSK)
	s, _ := publicKey(p.sSK)
	return keyPair{party: p.index, c: c, s: s}
}

// keyOf returns the listed keys of party q.
func (p *Party) keyOf(q int) (keyPair, bool) {
	i, ok := slices.BinarySearchFunc(p.keys, q, func(k keyPair, q int) int { return k.party - q })
	if !ok {
		return keyPair{}, false
	}
	return p.keys[i], true
}

// mask stores the shares forwarded to the party and returns its input
// masked with its self mask and one pairwise mask per peer that shared.
func (p *Party) mask(m *message, input []int64) (*message, error) {
	if m.party != p.index {
		return nil, fmt.Errorf("shares addressed to party %d: %w", m.party, ErrRefused)
	}
	if len(m.sealed)+1 < p.params.Threshold {
		return nil, fmt.Errorf("shares from %d peers and itself, fewer than the threshold %d: %w", len(m.sealed), p.params.Threshold, ErrBelowThreshold)
	}
	if len(input) != p.params.Len {
		return nil, fmt.Errorf("input of %d values, want %d", len(input), p.params.Len)
	}
	for i, v := range input {
		if v > p.bound || v < -p.bound {
			return nil, fmt.Errorf("input value %d is outside ±%d grid steps (clip %v): %w", i, p.bound, p.params.Clip, ErrOverflow)
		}
	}
	cPriv, err := privateKey(p.cSK)
	if err != nil {
		return nil, err
	}
	sPriv, err := privateKey(p.sSK)
	if err != nil {
		return nil, err
	}
	held := slices.Clone(p.held)
	u2 := []int{p.index}
	for _, s := range m.sealed {
		k, ok := p.keyOf(s.peer)
		if !ok {
			return nil, fmt.Errorf("shares from party %d, which was not in the key list: %w", s.peer, ErrRefused)
		}
		key, err := pairKey(cPriv, k.c, p.params.Session, labelShareKey, p.index, s.peer)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		seed, mk, err := openShares(key, p.params.Session, s.peer, p.index, s.ct)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		held[s.peer] = heldShares{seed: seed, key: mk}
		u2 = append(u2, s.peer)
	}
	slices.Sort(u2)

	sk, err := selfKey(p.seed, p.params.Session)
	if err != nil {
		return nil, err
	}
	masks := []maskStream{{key: sk, sign: +1}}
	for _, q := range u2 {
		if q == p.index {
			continue
		}
		k, _ := p.keyOf(q)
		key, err := pairKey(sPriv, k.s, p.params.Session, labelPairMask, p.index, q)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRefused, err)
		}
		masks = append(masks, maskStream{key: key, sign: pairSign(p.index, q)})
	}
	acc := ringVecOf(p.params.Bits, input)
	acc.applyMasks(masks)
	p.held, p.u2 = held, u2
	return &message{kind: KindMasked, session: p.params.Session, party: p.index, bits: p.params.Bits, count: len(input), masked: acc.pack()}, nil
}

// pairSign is the sign with which party a adds the mask it shares with b:
// the lower index adds, the higher subtracts, so the pair cancels.
func pairSign(a, b int) int {
	if a < b {
		return +1
	}
	return -1
}

// unmask answers the coordinator's list of survivors and dropouts with the
// shares that remove their masks: of each survivor's self-mask seed, and
// of each dropped party's mask key — never both for one party. It refuses
// a request that lists a party as both alive and dropped, lists fewer than
// t alive, leaves this party out of the alive list, or does not partition
// exactly the parties whose shares it holds.
func (p *Party) unmask(m *message) (*message, error) {
	for _, q := range m.alive {
		if _, both := slices.BinarySearch(m.dropped, q); both {
			return nil, fmt.Errorf("party %d listed as both alive and dropped: %w", q, ErrRefused)
		}
	}
	if len(m.alive) < p.params.Threshold {
		return nil, fmt.Errorf("%d parties alive, fewer than the threshold %d: %w", len(m.alive), p.params.Threshold, ErrRefused)
	}
	if _, ok := slices.BinarySearch(m.alive, p.index); !ok {
		return nil, fmt.Errorf("this party is not listed alive: %w", ErrRefused)
	}
	all := append(slices.Clone(m.alive), m.dropped...)
	slices.Sort(all)
	if !slices.Equal(all, p.u2) {
		return nil, fmt.Errorf("alive and dropped parties (%d) are not the %d parties whose shares it holds: %w", len(all), len(p.u2), ErrRefused)
	}
	out := &message{kind: KindReveal, session: p.params.Session, party: p.index}
	for _, q := range all {
		r := revealed{owner: q, kind: revealSeed, sh: p.held[q].seed}
		if _, dropped := slices.BinarySearch(m.dropped, q); dropped {
			r = revealed{owner: q, kind: revealKey, sh: p.held[q].key}
		}
		out.reveals = append(out.reveals, r)
	}
	return out, nil
}
