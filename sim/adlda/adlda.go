package adlda

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// Name is the algorithm's name on the command line and in run records.
const Name = "adlda"

// Defaults of Params, used where a field is zero.
const (
	DefaultK         = 10
	DefaultAlphaSum  = 5.0 // α = DefaultAlphaSum/K
	DefaultBeta      = 0.01
	DefaultRounds    = 100
	DefaultBlockSize = 1 << 14
)

// MaxK is the largest number of topics (assignments are uint16).
const MaxK = math.MaxUint16

// Params are AD-LDA's parameters. The zero value of every field means the
// default in its comment.
type Params struct {
	K         int     `json:"k"`          // topics; default 10
	Alpha     float64 `json:"alpha"`      // document-topic prior per topic; default 5/K
	Beta      float64 `json:"beta"`       // topic-word prior; default 0.01
	Rounds    int     `json:"rounds"`     // rounds, one Gibbs sweep each; default 100
	BlockSize int     `json:"block_size"` // tokens per block with its own stream and count view; default 16384
	Workers   int     `json:"workers"`    // goroutines per party; default 1; never changes the result
}

// Validate reports every problem with p.
func (p Params) Validate() error {
	var errs []error
	if p.K < 0 || p.K > MaxK {
		errs = append(errs, fmt.Errorf("adlda: k = %d, want 1..%d", p.K, MaxK))
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"alpha", p.Alpha}, {"beta", p.Beta}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			errs = append(errs, fmt.Errorf("adlda: %s = %v, want a finite number > 0", f.name, f.v))
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"rounds", p.Rounds}, {"block_size", p.BlockSize}, {"workers", p.Workers}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("adlda: %s = %d, want ≥ 1", f.name, f.v))
		}
	}
	return errors.Join(errs...)
}

func (p Params) withDefaults() Params {
	if p.K == 0 {
		p.K = DefaultK
	}
	if p.Alpha == 0 {
		p.Alpha = DefaultAlphaSum / float64(p.K)
	}
	if p.Beta == 0 {
		p.Beta = DefaultBeta
	}
	if p.Rounds == 0 {
		p.Rounds = DefaultRounds
	}
	if p.BlockSize == 0 {
		p.BlockSize = DefaultBlockSize
	}
	if p.Workers == 0 {
		p.Workers = 1
	}
	return p
}

// provenance returns the parameters as model provenance strings.
func (p Params) provenance() map[string]string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return map[string]string{"k": strconv.Itoa(p.K), "alpha": f(p.Alpha), "beta": f(p.Beta),
		"rounds": strconv.Itoa(p.Rounds), "block_size": strconv.Itoa(p.BlockSize)}
}

// setupParams decodes, checks and completes the parameters of s.
func setupParams(s fed.Setup) (Params, error) {
	var p Params
	if len(s.Params) > 0 {
		dec := json.NewDecoder(bytes.NewReader(s.Params))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return p, fmt.Errorf("adlda: parameters: %w", err)
		}
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	if len(s.Vocab) == 0 {
		return p, errors.New("adlda: empty vocabulary")
	}
	return p.withDefaults(), nil
}

// Algorithm is AD-LDA for the federation engine.
var Algorithm = fed.Algorithm{
	Name: Name,
	NewAggregator: func(s fed.Setup) (fed.Aggregator, error) {
		p, err := setupParams(s)
		if err != nil {
			return nil, err
		}
		return &Aggregator{p: p, v: len(s.Vocab), vocab: s.Vocab, seed: s.Seed, g: make([]int32, p.K*len(s.Vocab))}, nil
	},
	NewLearner: func(s fed.Setup, party int, docs *corpus.Corpus) (fed.Learner, error) {
		p, err := setupParams(s)
		if err != nil {
			return nil, err
		}
		if party < 0 || party >= len(s.Parties) {
			return nil, fmt.Errorf("adlda: party %d of %d", party, len(s.Parties))
		}
		return NewLearner(p, len(s.Vocab), s.Seed, s.Parties[party], docs)
	},
	NewValidator: func(s fed.Setup) (fed.Validator, error) {
		p, err := setupParams(s)
		if err != nil {
			return nil, err
		}
		return Validator{K: p.K, V: len(s.Vocab)}, nil
	},
}

// Validator checks AD-LDA messages: the shape and encoding of a sparse
// count matrix, and non-negative counts in the first round (later rounds
// carry deltas).
type Validator struct{ K, V int }

// CheckUpdate implements fed.Validator.
func (v Validator) CheckUpdate(round int, payload []byte) error {
	return decodeCounts(payload, v.K, v.V, round == 1, func(int, int32) {})
}

// MaxUpdateSize implements fed.Validator.
func (v Validator) MaxUpdateSize() int { return maxEncodedSize(v.K, v.V) }

// MaxBroadcastSize implements fed.Validator.
func (v Validator) MaxBroadcastSize() int { return maxEncodedSize(v.K, v.V) }

// Aggregator is the coordinator half: it holds the global counts G.
type Aggregator struct {
	p     Params
	v     int
	vocab []string
	seed  uint64
	g     []int32 // word-major: G_kw = g[w*K+k]
	round int     // rounds aggregated
}

// Init implements fed.Aggregator: the first broadcast is the empty matrix.
func (a *Aggregator) Init() (fed.Step, error) {
	return fed.Step{Payload: encodeCounts(a.p.K, a.v, a.g)}, nil
}

// Aggregate implements fed.Aggregator: G += Σ deltas (in party order),
// clipped at zero, which only a dishonest party could make necessary.
func (a *Aggregator) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	for _, u := range updates {
		g := a.g
		err := decodeCounts(u.Payload, a.p.K, a.v, round == 1, func(i int, x int32) {
			g[i] = int32(min(max(int64(g[i])+int64(x), 0), math.MaxInt32))
		})
		if err != nil {
			return fed.Step{}, fmt.Errorf("adlda: round %d: party %s: %w", round, u.ID, err)
		}
	}
	a.round = round
	return fed.Step{Payload: encodeCounts(a.p.K, a.v, a.g), Done: round >= a.p.Rounds}, nil
}

// SumSpec implements fed.SumAggregator.
func (a *Aggregator) SumSpec() fed.SumSpec { return sumSpec(a.p.K, a.v) }

// AggregateSum implements fed.SumAggregator: G += the sum of the parties'
// updates, clipped to [0, MaxInt32] as Aggregate clips. For honest parties
// G plus any one party's change is never negative, so the clip never acts
// and the model is the one Aggregate makes.
func (a *Aggregator) AggregateSum(round int, sum []int64, included []int) (fed.Step, error) {
	if len(sum) != len(a.g) {
		return fed.Step{}, fmt.Errorf("adlda: round %d: sum of %d values, want K × V = %d", round, len(sum), len(a.g))
	}
	for i, x := range sum {
		a.g[i] = int32(min(max(int64(a.g[i])+x, 0), math.MaxInt32))
	}
	a.round = round
	return fed.Step{Payload: encodeCounts(a.p.K, a.v, a.g), Done: round >= a.p.Rounds}, nil
}

// Model implements fed.Modeler: φ_kw = (G_kw + β)/(G_k + Vβ).
func (a *Aggregator) Model() (*topic.Model, error) {
	m := countsModel(a.g, a.p, a.v)
	m.Vocab = a.vocab
	m.Prov.Seed = a.seed
	m.Prov.Rounds = a.round
	return m, nil
}

// MarshalBinary implements encoding.BinaryMarshaler: the round and G.
func (a *Aggregator) MarshalBinary() ([]byte, error) {
	return append(binary.AppendUvarint(nil, uint64(a.round)), encodeCounts(a.p.K, a.v, a.g)...), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (a *Aggregator) UnmarshalBinary(b []byte) error {
	r, n := binary.Uvarint(b)
	if n <= 0 || r > math.MaxInt32 {
		return errors.New("adlda: aggregator state: bad round")
	}
	g := make([]int32, len(a.g))
	if err := decodeCounts(b[n:], a.p.K, a.v, true, func(i int, x int32) { g[i] = x }); err != nil {
		return fmt.Errorf("adlda: aggregator state: %w", err)
	}
	a.g, a.round = g, int(r)
	return nil
}

// countsModel turns word-major counts into a topic model with the
// posterior-mean estimate φ_kw = (C_kw + β)/(C_k + Vβ).
func countsModel(c []int32, p Params, v int) *topic.Model {
	k := p.K
	nk := make([]float64, k)
	for w := range v {
		for t := range k {
			nk[t] += float64(c[w*k+t])
		}
	}
	phi := make([]float64, k*v)
	vb := float64(v) * p.Beta
	for t := range k {
		inv := 1 / (nk[t] + vb)
		for w := range v {
			phi[t*v+w] = (float64(c[w*k+t]) + p.Beta) * inv
		}
	}
	alpha := make([]float64, k)
	for t := range alpha {
		alpha[t] = p.Alpha
	}
	return &topic.Model{Phi: phi, K: k, V: v, Alpha: alpha, Beta: p.Beta,
		Prov: topic.Provenance{Method: Name, Params: p.provenance(), Iterations: p.Rounds}}
}

// Learner is the party half: its tokens' topics and its local counts.
type Learner struct {
	p      Params
	v      int
	id     string // the party's id: its random streams derive from it
	seed   uint64
	docs   *corpus.Corpus
	blocks []int    // documents of block b are [blocks[b], blocks[b+1])
	z      []uint16 // topic of every token
	local  []int32  // word-major local counts L, as last sent
	sweeps int
}

// NewLearner returns the learner of the party called id over docs, with
// topics drawn uniformly at random. Its streams derive from seed and id,
// so a party that knows only itself draws what it would in a simulation.
func NewLearner(p Params, v int, seed uint64, id string, docs *corpus.Corpus) (*Learner, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	p = p.withDefaults()
	if err := docs.Validate(); err != nil {
		return nil, fmt.Errorf("adlda: party %s: %w", id, err)
	}
	if docs.V > v {
		return nil, fmt.Errorf("adlda: party %s: corpus vocabulary of %d words, the federation's has %d", id, docs.V, v)
	}
	l := &Learner{p: p, v: v, id: id, seed: seed, docs: docs, z: make([]uint16, docs.NumTokens())}
	l.blocks = []int{0}
	n := 0
	for d := range docs.NumDocs() {
		n += docs.DocStart[d+1] - docs.DocStart[d]
		if n >= p.BlockSize {
			l.blocks = append(l.blocks, d+1)
			n = 0
		}
	}
	if last := l.blocks[len(l.blocks)-1]; last != docs.NumDocs() {
		l.blocks = append(l.blocks, docs.NumDocs())
	}
	for b := 0; b+1 < len(l.blocks); b++ {
		r := rng.Derive(seed, "adlda", "party", id, "init", "block", b)
		for i := docs.DocStart[l.blocks[b]]; i < docs.DocStart[l.blocks[b+1]]; i++ {
			l.z[i] = uint16(r.IntN(p.K))
		}
	}
	return l, nil
}

// counts returns the word-major counts of the current assignments.
func (l *Learner) counts() []int32 {
	k := l.p.K
	c := make([]int32, k*l.v)
	for i, w := range l.docs.Words {
		c[int(w)*k+int(l.z[i])]++
	}
	return c
}

// Learn implements fed.Learner. In the party's first round it sweeps
// against its own counts (the coordinator has none yet) and sends its
// counts; in every later round it sweeps against the broadcast global
// counts and sends the change of its counts.
func (l *Learner) Learn(round int, broadcast []byte) (fed.Step, error) {
	u, err := l.learn(round, broadcast)
	if err != nil {
		return fed.Step{}, err
	}
	return fed.Step{Payload: encodeCounts(l.p.K, l.v, u)}, nil
}

// learn sweeps and returns the update: the counts in the party's first
// round, their change afterwards.
func (l *Learner) learn(round int, broadcast []byte) ([]int32, error) {
	k := l.p.K
	g := make([]int32, k*l.v)
	if err := decodeCounts(broadcast, k, l.v, true, func(i int, x int32) { g[i] = x }); err != nil {
		return nil, fmt.Errorf("adlda: round %d: broadcast: %w", round, err)
	}
	first := l.local == nil
	if first {
		g = l.counts()
	}
	l.sweep(g)
	l.sweeps++
	now := l.counts()
	if first {
		l.local = now
		return now, nil
	}
	delta := make([]int32, len(now))
	for i := range now {
		delta[i] = now[i] - l.local[i]
	}
	l.local = now
	return delta, nil
}

// SumClip is the largest count or count change one party may contribute
// to one topic-word cell under secure aggregation: 2^21, so the sum of up
// to 1,000 parties fits a signed 32-bit ring. A party with more
// occurrences of one word refuses to mask its vector (an overflow error)
// rather than let the sum wrap.
const SumClip = 1 << 21

// sumSpec is AD-LDA's update as a vector of sums: the K × V counts (or
// their change), word-major, as integers.
func sumSpec(k, v int) fed.SumSpec { return fed.SumSpec{Len: k * v, Clip: SumClip} }

// SumSpec implements fed.SumLearner.
func (l *Learner) SumSpec() fed.SumSpec { return sumSpec(l.p.K, l.v) }

// LearnSum implements fed.SumLearner: the update of Learn as a vector,
// for secure aggregation. AD-LDA releases nothing private.
func (l *Learner) LearnSum(round int, broadcast []byte) ([]int64, []privacy.Event, error) {
	u, err := l.learn(round, broadcast)
	if err != nil {
		return nil, nil, err
	}
	out := make([]int64, len(u))
	for i, x := range u {
		out[i] = int64(x)
	}
	return out, nil, nil
}

// sweep runs one collapsed Gibbs sweep of every block against g.
func (l *Learner) sweep(g []int32) {
	k := l.p.K
	gk := make([]int64, k)
	for i, x := range g {
		gk[i%k] += int64(x)
	}
	nb := len(l.blocks) - 1
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(l.p.Workers, nb) {
		wg.Go(func() {
			s := newSweeper(k, l.v)
			for b := range next {
				l.sweepBlock(s, b, g, gk)
			}
		})
	}
	for b := range nb {
		next <- b
	}
	close(next)
	wg.Wait()
}

// sweeper is one worker's scratch: the block's changes D and the current
// document's topic counts.
type sweeper struct {
	dkw     []int32 // word-major
	dk      []int64
	touched []int
	cnt     []int32
	p       []float64
	src     *chacha8.Stream
}

func newSweeper(k, v int) *sweeper {
	return &sweeper{dkw: make([]int32, k*v), dk: make([]int64, k), cnt: make([]int32, k), p: make([]float64, k), src: chacha8.New([32]byte{})}
}

// sweepBlock samples the tokens of block b from the collapsed conditional
// with counts n = G + D, D the block's own changes.
func (l *Learner) sweepBlock(s *sweeper, b int, g []int32, gk []int64) {
	k := l.p.K
	alpha, beta := l.p.Alpha, l.p.Beta
	vb := float64(l.v) * beta
	s.src.Seed(rng.Key(l.seed, "adlda", "party", l.id, "sweep", l.sweeps, "block", b))
	r := rand.New(s.src)
	docs := l.docs
	for d := l.blocks[b]; d < l.blocks[b+1]; d++ {
		start, end := docs.DocStart[d], docs.DocStart[d+1]
		for _, t := range l.z[start:end] {
			s.cnt[t]++
		}
		for i := start; i < end; i++ {
			w := int(docs.Words[i])
			base := w * k
			cur := int(l.z[i])
			s.cnt[cur]--
			s.dkw[base+cur]--
			s.dk[cur]--
			var total float64
			for t := range k {
				nkw := float64(g[base+t] + s.dkw[base+t])
				nk := float64(gk[t] + s.dk[t])
				total += (float64(s.cnt[t]) + alpha) * max(nkw+beta, beta) / max(nk+vb, vb)
				s.p[t] = total
			}
			u := r.Float64() * total
			nt := k - 1
			for t := range k {
				if u < s.p[t] {
					nt = t
					break
				}
			}
			s.cnt[nt]++
			s.dkw[base+nt]++
			s.dk[nt]++
			s.touched = append(s.touched, base+cur, base+nt)
			l.z[i] = uint16(nt)
		}
		for _, t := range l.z[start:end] {
			s.cnt[t] = 0
		}
	}
	for _, j := range s.touched {
		s.dkw[j] = 0
	}
	s.touched = s.touched[:0]
	clear(s.dk)
}

// Model implements fed.Modeler: the party's local model from its own
// counts, φ_kw = (L_kw + β)/(L_k + Vβ), Vocab left nil for the caller.
func (l *Learner) Model() (*topic.Model, error) {
	m := countsModel(l.counts(), l.p, l.v)
	m.Prov.Seed = l.seed
	return m, nil
}

// MarshalBinary implements encoding.BinaryMarshaler: sweeps done, whether
// the counts were sent, and every token's topic.
func (l *Learner) MarshalBinary() ([]byte, error) {
	b := binary.AppendUvarint(nil, uint64(l.sweeps))
	sent := byte(0)
	if l.local != nil {
		sent = 1
	}
	b = append(b, sent)
	for _, t := range l.z {
		b = binary.LittleEndian.AppendUint16(b, t)
	}
	return b, nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (l *Learner) UnmarshalBinary(b []byte) error {
	s, n := binary.Uvarint(b)
	if n <= 0 || s > math.MaxInt32 || len(b) != n+1+2*len(l.z) {
		return fmt.Errorf("adlda: learner state of %d bytes does not fit %d tokens", len(b), len(l.z))
	}
	z := make([]uint16, len(l.z))
	for i := range z {
		z[i] = binary.LittleEndian.Uint16(b[n+1+2*i:])
		if int(z[i]) >= l.p.K {
			return fmt.Errorf("adlda: learner state: token %d has topic %d ≥ K = %d", i, z[i], l.p.K)
		}
	}
	l.z, l.sweeps = z, int(s)
	l.local = nil
	if b[n] == 1 {
		l.local = l.counts()
	}
	return nil
}
