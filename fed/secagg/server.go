package secagg

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
)

// serverStage is the kind of reply the coordinator collects next.
type serverStage uint8

const (
	serverNew     serverStage = iota // Start not yet called
	collectAdvert                    // next: KindAdvertise replies
	collectShares                    // next: KindShares replies
	collectMasked                    // next: KindMasked replies
	collectReveal                    // next: KindReveal replies
	serverDone                       // the sum is known
	serverAborted                    // stopped; nothing unmasked
)

var serverStageNames = [...]string{"new", "advertise", "shares", "masked", "reveal", "done", "aborted"}

func (s serverStage) expects() Kind {
	switch s {
	case collectAdvert:
		return KindAdvertise
	case collectShares:
		return KindShares
	case collectMasked:
		return KindMasked
	case collectReveal:
		return KindReveal
	}
	return 0
}

// Out is what one coordinator stage sends, or its result.
type Out struct {
	// To lists the parties the stage addresses, ascending: the survivors
	// so far. The engine waits for their replies until the deadline.
	To []int
	// Payload is the message for every party in To, unless PerParty holds
	// one of its own.
	Payload []byte
	// PerParty, when not nil, is indexed by party.
	PerParty [][]byte
	// Rejected lists the replies the stage refused (they count as
	// dropouts), with the reason, by party.
	Rejected []Rejection
	// Done is set by the last stage; Sum is then the sum of the inputs of
	// the parties in Included, on the fixed-point grid.
	Done     bool
	Sum      []int64
	Included []int
}

// For returns the message party i receives.
func (o *Out) For(i int) []byte {
	if i < len(o.PerParty) && o.PerParty[i] != nil {
		return o.PerParty[i]
	}
	return o.Payload
}

// Rejection says why a party's reply was refused.
type Rejection struct {
	Party int
	Err   error
}

// Server is the coordinator's half of an instance: a state machine started
// by Start and advanced by Collect, one stage's replies at a time. It draws
// no randomness and does no I/O. It sees the masked vectors and, at the
// end, only their sum. A Server is not safe for concurrent use.
type Server struct {
	params Params
	stage  serverStage
	last   Out // the messages of the current stage, for resends

	keys   []keyPair  // U1's keys, ascending
	u2     []int      // parties that sent shares
	sealed [][]sealed // by sender (U2), kept until the masked stage is collected
	u3     []int      // parties whose masked vector is in sum
	sum    ringVec    // the sum of U3's masked vectors; empty before and after
	result []int64
}

// NewServer returns the coordinator of instance p.
func NewServer(p Params) (*Server, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Server{params: p}, nil
}

// Start returns the first stage: the parameters, sent to every party.
func (s *Server) Start() (Out, error) {
	if s.stage != serverNew {
		return Out{}, fmt.Errorf("secagg: coordinator: start in stage %s: %w", serverStageNames[s.stage], ErrStage)
	}
	m := &message{kind: KindSetup, session: s.params.Session, params: s.params}
	s.last = Out{To: seq(s.params.Parties), Payload: m.encode()}
	s.stage = collectAdvert
	return s.last, nil
}

// Pending returns the messages of the current stage again, for parties
// that did not get them (a resend after a restart from a checkpoint).
func (s *Server) Pending() Out { return s.last }

// Collect takes the replies to the current stage, indexed by party (nil:
// no reply before the deadline), and returns the next stage. A reply that
// is malformed, from another stage or session, from a party the stage did
// not address, or that claims another sender, is refused and listed in
// Out.Rejected; its party counts as dropped. With fewer than t valid
// replies the instance aborts with ErrBelowThreshold and nothing is
// unmasked; every later call fails with ErrAborted.
func (s *Server) Collect(replies [][]byte) (Out, error) {
	want := s.stage.expects()
	if want == 0 {
		err := ErrStage
		if s.stage == serverAborted {
			err = ErrAborted
		}
		return Out{}, fmt.Errorf("secagg: coordinator: collect in stage %s: %w", serverStageNames[s.stage], err)
	}
	if len(replies) > s.params.Parties {
		return Out{}, fmt.Errorf("secagg: coordinator: %d replies for %d parties", len(replies), s.params.Parties)
	}
	var rejected []Rejection
	msgs := make([]*message, s.params.Parties)
	valid := 0
	for _, i := range s.last.To {
		if i >= len(replies) || replies[i] == nil {
			continue
		}
		m, err := s.check(i, replies[i], want)
		if err != nil {
			rejected = append(rejected, Rejection{Party: i, Err: err})
			continue
		}
		msgs[i] = m
		valid++
	}
	for i, r := range replies {
		if r != nil && !slices.Contains(s.last.To, i) {
			rejected = append(rejected, Rejection{Party: i, Err: fmt.Errorf("secagg: coordinator: reply from party %d, not addressed in stage %s: %w", i, want, ErrStage)})
		}
	}
	slices.SortFunc(rejected, func(a, b Rejection) int { return a.Party - b.Party })
	if valid < s.params.Threshold {
		s.abort()
		return Out{Rejected: rejected}, fmt.Errorf("secagg: coordinator: stage %s: %d valid replies, threshold %d: %w", want, valid, s.params.Threshold, ErrBelowThreshold)
	}
	next := *s
	var out Out
	var err error
	switch want {
	case KindAdvertise:
		out, err = next.collectAdvert(msgs, &rejected)
	case KindShares:
		out, err = next.collectShares(msgs, &rejected)
	case KindMasked:
		out, err = next.collectMasked(msgs, &rejected)
	case KindReveal:
		out, err = next.collectReveal(msgs, &rejected)
	}
	out.Rejected = rejected
	if err != nil {
		s.abort()
		return out, fmt.Errorf("secagg: coordinator: stage %s: %w", want, err)
	}
	next.stage++
	next.last = out
	*s = next
	return out, nil
}

// abort drops everything that could help unmask anything.
func (s *Server) abort() {
	*s = Server{params: s.params, stage: serverAborted}
}

// check decodes party i's reply and checks its framing.
func (s *Server) check(i int, b []byte, want Kind) (*message, error) {
	m, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("secagg: coordinator: party %d: %w", i, err)
	}
	switch {
	case !bytes.Equal(m.session, s.params.Session):
		err = fmt.Errorf("reply for another session: %w", ErrStage)
	case m.kind != want:
		err = fmt.Errorf("%s reply in stage %s: %w", m.kind, want, ErrStage)
	case m.party != i:
		err = fmt.Errorf("reply claims to be from party %d: %w", m.party, ErrRefused)
	}
	if err != nil {
		return nil, fmt.Errorf("secagg: coordinator: party %d: %w", i, err)
	}
	return m, nil
}

// survivors counts the non-nil entries after a stage's own checks and
// fails below the threshold.
func (s *Server) survivors(msgs []*message) ([]int, error) {
	var u []int
	for i, m := range msgs {
		if m != nil {
			u = append(u, i)
		}
	}
	if len(u) < s.params.Threshold {
		return nil, fmt.Errorf("%d valid replies, threshold %d: %w", len(u), s.params.Threshold, ErrBelowThreshold)
	}
	return u, nil
}

func (s *Server) collectAdvert(msgs []*message, rejected *[]Rejection) (Out, error) {
	seen := map[[32]byte]bool{}
	for i, m := range msgs {
		if m == nil {
			continue
		}
		k := m.keys[0]
		var err error
		switch {
		case seen[k.c] || seen[k.s] || k.c == k.s:
			err = fmt.Errorf("a public key repeats another's: %w", ErrRefused)
		case isZero(k.c) || isZero(k.s):
			err = fmt.Errorf("a zero public key: %w", ErrRefused)
		}
		if err != nil {
			*rejected = append(*rejected, Rejection{Party: i, Err: fmt.Errorf("secagg: coordinator: party %d: %w", i, err)})
			msgs[i] = nil
			continue
		}
		seen[k.c], seen[k.s] = true, true
		s.keys = append(s.keys, k)
	}
	u1, err := s.survivors(msgs)
	if err != nil {
		return Out{}, err
	}
	m := &message{kind: KindKeys, session: s.params.Session, keys: s.keys}
	return Out{To: u1, Payload: m.encode()}, nil
}

func isZero(k [32]byte) bool { return k == [32]byte{} }

func (s *Server) collectShares(msgs []*message, rejected *[]Rejection) (Out, error) {
	u1 := s.last.To
	s.sealed = make([][]sealed, s.params.Parties)
	for i, m := range msgs {
		if m == nil {
			continue
		}
		peers := make([]int, len(m.sealed))
		for j, c := range m.sealed {
			peers[j] = c.peer
		}
		others := slices.DeleteFunc(slices.Clone(u1), func(q int) bool { return q == i })
		if !slices.Equal(peers, others) {
			*rejected = append(*rejected, Rejection{Party: i, Err: fmt.Errorf("secagg: coordinator: party %d: shares for %d peers, not one for each of the %d others: %w", i, len(peers), len(others), ErrRefused)})
			msgs[i] = nil
			continue
		}
		s.sealed[i] = m.sealed
	}
	u2, err := s.survivors(msgs)
	if err != nil {
		return Out{}, err
	}
	s.u2 = u2
	out := Out{To: u2, PerParty: make([][]byte, s.params.Parties)}
	for _, v := range u2 {
		f := &message{kind: KindForward, session: s.params.Session, party: v}
		for _, w := range u2 {
			if w == v {
				continue
			}
			i, _ := slices.BinarySearchFunc(s.sealed[w], v, func(c sealed, v int) int { return c.peer - v })
			f.sealed = append(f.sealed, sealed{peer: w, ct: s.sealed[w][i].ct})
		}
		out.PerParty[v] = f.encode()
	}
	return out, nil
}

func (s *Server) collectMasked(msgs []*message, rejected *[]Rejection) (Out, error) {
	for i, m := range msgs {
		if m != nil && (m.bits != s.params.Bits || m.count != s.params.Len) {
			*rejected = append(*rejected, Rejection{Party: i, Err: fmt.Errorf("secagg: coordinator: party %d: %d values in Z_2^%d, want %d in Z_2^%d: %w", i, m.count, m.bits, s.params.Len, s.params.Bits, ErrRefused)})
			msgs[i] = nil
		}
	}
	u3, err := s.survivors(msgs)
	if err != nil {
		return Out{}, err
	}
	s.sum = newRingVec(s.params.Bits, s.params.Len)
	for _, i := range u3 {
		s.sum.addPacked(msgs[i].masked)
	}
	s.u3 = u3
	s.sealed = nil // the coordinator no longer needs the encrypted shares
	var dropped []int
	for _, q := range s.u2 {
		if _, ok := slices.BinarySearch(u3, q); !ok {
			dropped = append(dropped, q)
		}
	}
	m := &message{kind: KindUnmask, session: s.params.Session, alive: u3, dropped: dropped}
	return Out{To: u3, Payload: m.encode()}, nil
}

func (s *Server) collectReveal(msgs []*message, rejected *[]Rejection) (Out, error) {
	t := s.params.Threshold
	for i, m := range msgs {
		if m == nil {
			continue
		}
		if err := s.checkReveal(i, m); err != nil {
			*rejected = append(*rejected, Rejection{Party: i, Err: fmt.Errorf("secagg: coordinator: party %d: %w: %w", i, err, ErrRefused)})
			msgs[i] = nil
		}
	}
	u5, err := s.survivors(msgs)
	if err != nil {
		return Out{}, err
	}
	seeds := make([][]share, s.params.Parties)
	keys := make([][]share, s.params.Parties)
	for _, i := range u5 {
		for _, r := range msgs[i].reveals {
			if r.kind == revealSeed {
				seeds[r.owner] = append(seeds[r.owner], r.sh)
			} else {
				keys[r.owner] = append(keys[r.owner], r.sh)
			}
		}
	}
	// The masks to take away: every survivor's self mask, and every
	// dropped party's pairwise masks with the survivors.
	var masks []maskStream
	for _, u := range s.u3 {
		seed, err := shamirCombine(seeds[u], t)
		if err != nil {
			return Out{}, fmt.Errorf("self-mask seed of party %d: %w", u, err)
		}
		key, err := selfKey(seed, s.params.Session)
		if err != nil {
			return Out{}, err
		}
		masks = append(masks, maskStream{key: key, sign: -1})
	}
	for _, d := range s.u2 {
		if slices.Contains(s.u3, d) {
			continue
		}
		sk, err := shamirCombine(keys[d], t)
		if err != nil {
			return Out{}, fmt.Errorf("mask key of dropped party %d: %w", d, err)
		}
		kd, _ := s.keyOf(d)
		priv, err := privateKey(sk)
		if err != nil || !bytes.Equal(priv.PublicKey().Bytes(), kd.s[:]) {
			return Out{}, errors.New("a dropped party's rebuilt mask key does not match its public key")
		}
		for _, u := range s.u3 {
			ku, _ := s.keyOf(u)
			key, err := pairKey(priv, ku.s, s.params.Session, labelPairMask, d, u)
			if err != nil {
				return Out{}, err
			}
			// u added the mask with sign pairSign(u, d); take it away.
			masks = append(masks, maskStream{key: key, sign: -pairSign(u, d)})
		}
	}
	sum := s.sum
	sum.applyMasks(masks)
	res := make([]int64, sum.len())
	for i := range res {
		res[i] = s.params.lift(sum.at(i))
	}
	s.result = res
	s.sum = ringVec{}
	return Out{Done: true, Sum: res, Included: s.u3}, nil
}

// checkReveal checks that party i revealed, for every party of U2 in
// order, the share at its own point of the right secret: the self-mask
// seed of a survivor, the mask key of a dropped party.
func (s *Server) checkReveal(i int, m *message) error {
	if len(m.reveals) != len(s.u2) {
		return fmt.Errorf("%d shares revealed, want %d", len(m.reveals), len(s.u2))
	}
	for j, r := range m.reveals {
		_, alive := slices.BinarySearch(s.u3, r.owner)
		switch {
		case r.owner != s.u2[j]:
			return fmt.Errorf("a share of party %d revealed, want %d", r.owner, s.u2[j])
		case int(r.sh.x) != i+1:
			return fmt.Errorf("a share at the wrong point")
		case alive && r.kind != revealSeed, !alive && r.kind != revealKey:
			return fmt.Errorf("the wrong secret of party %d revealed", r.owner)
		}
	}
	return nil
}

func (s *Server) keyOf(q int) (keyPair, bool) {
	i, ok := slices.BinarySearchFunc(s.keys, q, func(k keyPair, q int) int { return k.party - q })
	if !ok {
		return keyPair{}, false
	}
	return s.keys[i], true
}

// Result returns the unmasked sum and the parties it includes, once the
// last stage is collected.
func (s *Server) Result() (sum []int64, included []int, err error) {
	if s.stage != serverDone {
		return nil, nil, fmt.Errorf("secagg: coordinator: result in stage %s: %w", serverStageNames[s.stage], ErrStage)
	}
	return slices.Clone(s.result), slices.Clone(s.u3), nil
}

// seq returns 0 … n−1.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
