package fedlda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/parallel"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
)

// Learner is the half of FedLDA one party runs for all of its users (one
// user per document). Every round it decodes the collector's counts,
// computes φ, and for every user re-samples the topics, turns the changes
// into tuples, pads them to M, samples l of the M slots and perturbs the
// sampled tuples' words; the party's update is the concatenation of every
// user's l tuples, in user order.
//
// Its state is flat: the clipped documents' words (4 bytes a token), every
// token's reported topic (2 bytes a token) and each user's start offset
// (4 bytes a user); θ and the topic counts of a user are recomputed from
// its topics when its turn comes, so a party holds millions of users.
type Learner struct {
	cfg   Config
	k, v  int
	l     int // tuples per user per iteration
	id    string
	seed  uint64
	words []int32  // documents clipped to M tokens, concatenated
	start []uint32 // user d's tokens are words[start[d]:start[d+1]]
	z     []uint16 // every token's reported topic, noTopic before its first report
	iter  int      // iterations done
	n     []uint32 // the latest broadcast counts
	phi   *phiView
	krr   *privacy.KRR
}

// NewLearner returns party's half for its documents docs (one user each),
// whose word ids index s.Vocab. Its random streams derive from s.Seed and
// the party's id.
func NewLearner(s fed.Setup, party int, docs *corpus.Corpus) (*Learner, error) {
	cfg, err := setupConfig(s)
	if err != nil {
		return nil, err
	}
	if party < 0 || party >= len(s.Parties) {
		return nil, fmt.Errorf("fedlda: party %d outside [0, %d)", party, len(s.Parties))
	}
	if docs == nil {
		return nil, errors.New("fedlda: nil corpus")
	}
	id := s.Parties[party]
	if err := docs.Validate(); err != nil {
		return nil, fmt.Errorf("fedlda: party %s: %w", id, err)
	}
	v := len(s.Vocab)
	if docs.V > v {
		return nil, fmt.Errorf("fedlda: party %s: corpus vocabulary of %d words, larger than the federation's %d", id, docs.V, v)
	}
	users := docs.NumDocs()
	if users == 0 {
		return nil, fmt.Errorf("fedlda: party %s has no users (documents)", id)
	}
	if users > cfg.MaxUsers {
		return nil, fmt.Errorf("fedlda: party %s has %d users (documents), more than max_users = %d", id, users, cfg.MaxUsers)
	}
	l := &Learner{cfg: cfg, k: cfg.K, v: v, l: cfg.Tuples(), id: id, seed: s.Seed,
		start: make([]uint32, users+1), n: make([]uint32, cfg.K*v)}
	m := cfg.MaxDocTokens
	total := 0
	for d := range users {
		total += min(docs.DocStart[d+1]-docs.DocStart[d], m)
	}
	l.words = make([]int32, 0, total)
	for d := range users {
		doc := docs.Doc(d)
		l.words = append(l.words, doc[:min(len(doc), m)]...)
		l.start[d+1] = uint32(len(l.words))
	}
	l.z = make([]uint16, len(l.words))
	for i := range l.z {
		l.z[i] = noTopic
	}
	if cfg.Mechanism == MechanismKRR {
		if l.krr, err = privacy.NewKRR(cfg.Epsilon, v, Unit); err != nil {
			return nil, fmt.Errorf("fedlda: %w", err)
		}
	}
	return l, nil
}

// Users returns the party's number of users.
func (l *Learner) Users() int { return len(l.start) - 1 }

// Plan implements fed.Planner: every iteration releases l perturbed tuples
// per user (Config.Events).
func (l *Learner) Plan(round int) ([]privacy.Event, error) { return l.cfg.Events() }

// Learn implements fed.Learner.
func (l *Learner) Learn(round int, broadcast []byte) (fed.Step, error) {
	if err := decodeCounts(broadcast, l.k, l.v, l.n); err != nil {
		return fed.Step{}, fmt.Errorf("fedlda: party %s: round %d: broadcast: %w", l.id, round, err)
	}
	spent, err := l.Plan(round)
	if err != nil {
		return fed.Step{}, err
	}
	payload, err := l.iterate(context.Background(), round)
	if err != nil {
		return fed.Step{}, fmt.Errorf("fedlda: party %s: round %d: %w", l.id, round, err)
	}
	return fed.Step{Payload: payload, Spent: spent}, nil
}

// iterate runs one iteration over every user against the counts l.n and
// returns the encoded update.
func (l *Learner) iterate(ctx context.Context, round int) ([]byte, error) {
	mh := l.cfg.Sampler == SamplerMH
	if l.phi == nil {
		l.phi = newPhiView(l.n, l.k, l.v, l.cfg.Beta, mh)
	} else {
		l.phi.fill(l.n, l.cfg.Beta, mh)
	}
	pert, err := newPerturber(l.cfg, l.phi, l.n, l.krr)
	if err != nil {
		return nil, err
	}
	users := l.Users()
	payload := tuplesHeader(users, l.l)
	body := payload[headerSize+8:]
	bu := l.cfg.BlockUsers
	nb := (users + bu - 1) / bu
	workers := min(l.cfg.Workers, nb)
	scratch := make([]*sweeper, workers)
	for i := range scratch {
		scratch[i] = newSweeper(l.k, l.cfg.MaxDocTokens)
	}
	err = parallel.Blocks(ctx, workers, nb, func(worker, b int) {
		s := scratch[worker]
		s.src.Seed(rng.Key(l.seed, "fedlda", "party", l.id, "round", round, "block", b))
		r := rand.New(s.src)
		for d := b * bu; d < min((b+1)*bu, users); d++ {
			l.user(s, r, d, pert, body[d*l.l*tupleSize:(d+1)*l.l*tupleSize])
		}
	})
	if err != nil {
		return nil, err
	}
	l.iter++
	return payload, nil
}

// sweeper is one worker's scratch space.
type sweeper struct {
	u       userState
	changed []int32
	perm    []int32
	theta   []float64
	src     *chacha8.Stream
}

func newSweeper(k, m int) *sweeper {
	return &sweeper{u: userState{zNew: make([]uint16, m), cnt: make([]int32, k), p: make([]float64, k)},
		changed: make([]int32, m), perm: make([]int32, m), theta: make([]float64, k), src: chacha8.New([32]byte{})}
}

// user runs one iteration for user d and writes its l tuples to out.
func (l *Learner) user(s *sweeper, r *rand.Rand, d int, pert *perturber, out []byte) {
	lo, hi := l.start[d], l.start[d+1]
	u := &s.u
	u.words, u.z, u.zNew = l.words[lo:hi], l.z[lo:hi], u.zNew[:cap(u.zNew)][:hi-lo]
	switch {
	case l.iter == 0:
		// The first iteration reports the initial assignments.
		u.initUniform(r, l.k)
	case l.cfg.Sampler == SamplerMH:
		u.mh(r, l.phi, l.cfg.Alpha, l.cfg.MHSteps)
	default:
		u.gibbs(r, l.phi, l.cfg.Alpha)
	}
	c := 0
	for j, t := range u.zNew {
		if t != u.z[j] {
			s.changed[c] = int32(j)
			c++
		}
	}
	theta := s.theta
	if pert.mech == MechanismRRP {
		clear(theta)
		for _, t := range u.zNew {
			theta[t]++
		}
		for t := range theta {
			theta[t] += l.cfg.Alpha
		}
	}
	sampleTuples(r, s.perm[:l.cfg.MaxDocTokens], l.l, c, func(i, slot int) {
		t := tuple{kOld: noTopic, kNew: noTopic}
		if slot < c {
			j := s.changed[slot]
			t = tuple{w: uint32(pert.perturb(r, int(u.words[j]), theta)), kOld: u.z[j], kNew: u.zNew[j]}
			// Only a reported change is applied locally.
			u.z[j] = u.zNew[j]
		}
		putTuple(out[i*tupleSize:], t)
	})
}

// sampleTuples is padding and sampling: the real tuples are slots [0, c)
// of len(perm) = M slots, the rest are dummies; it draws l distinct slots
// uniformly without replacement (a partial Fisher–Yates shuffle) and calls
// emit(i, slot) for the i-th draw. Every slot is drawn with probability l/M.
func sampleTuples(r *rand.Rand, perm []int32, l, c int, emit func(i, slot int)) {
	m := len(perm)
	for i := range perm {
		perm[i] = int32(i)
	}
	for i := range l {
		j := i + r.IntN(m-i)
		perm[i], perm[j] = perm[j], perm[i]
		emit(i, int(perm[i]))
	}
}

// Counts returns the topic-word counts of every token's reported topic,
// topic-major (K×V): with no perturbation they equal what the collector
// holds from this party.
func (l *Learner) Counts() []uint32 {
	n := make([]uint32, l.k*l.v)
	for i, t := range l.z {
		if t != noTopic {
			n[int(t)*l.v+int(l.words[i])]++
		}
	}
	return n
}

// Memory describes what a Learner holds.
type Memory struct {
	Users, Tokens int
	// PerToken is the bytes kept per token (word id and topic), PerUser
	// the bytes per user (its offset).
	PerToken, PerUser int
	// Model is the bytes of the broadcast counts, φ and the alias tables,
	// shared by all users.
	Model int
}

// Memory reports the Learner's memory.
func (l *Learner) Memory() Memory {
	m := Memory{Users: l.Users(), Tokens: len(l.words), PerToken: 4 + 2, PerUser: 4, Model: 4 * len(l.n)}
	if l.phi != nil {
		m.Model += 8*len(l.phi.phiT) + 8*len(l.phi.words)
	}
	return m
}

// MarshalBinary implements encoding.BinaryMarshaler: the iterations done
// and every token's reported topic, so a restarted party continues from the
// state the collector's counts reflect.
func (l *Learner) MarshalBinary() ([]byte, error) {
	b := binary.LittleEndian.AppendUint64(nil, uint64(l.iter))
	b = binary.LittleEndian.AppendUint64(b, uint64(len(l.z)))
	for _, t := range l.z {
		b = binary.LittleEndian.AppendUint16(b, t)
	}
	return b, nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (l *Learner) UnmarshalBinary(b []byte) error {
	if len(b) < 16 {
		return fmt.Errorf("%w: learner state truncated", errCodec)
	}
	iter, n := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])
	b = b[16:]
	if n != uint64(len(l.z)) || uint64(len(b)) != 2*n || iter > 1<<31 {
		return fmt.Errorf("%w: learner state of %d tokens in %d bytes, want %d tokens", errCodec, n, len(b), len(l.z))
	}
	z := make([]uint16, n)
	for i := range z {
		z[i] = binary.LittleEndian.Uint16(b[2*i:])
		if z[i] != noTopic && int(z[i]) >= l.k {
			return fmt.Errorf("%w: learner state: token %d has topic %d ≥ K = %d", errCodec, i, z[i], l.k)
		}
	}
	l.z, l.iter = z, int(iter)
	return nil
}
