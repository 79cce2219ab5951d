package fednmf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
)

// initSweeps is the number of HALS sweeps that fit a client's H to the
// W of the first round it is sampled in (see doc.go: the paper does not
// say how H starts).
const initSweeps = 10

// Learner is FedNMF's client half. A round it is not sampled in, it
// answers idle; a round it is sampled in, it runs E local epochs of
// mini-batch SGD from the broadcast W (and critic θ) and sends the change
// of W (and θ) — clipped to norm S under DP-FedAvg — with its document
// count (omitted under DP). Its H never leaves it.
type Learner struct {
	cfg   Config
	id    string
	seed  uint64
	sh    shape
	c     *client
	ready bool // H has been fitted to a W
	n     int  // parties in the federation
}

// NewLearner returns party's half for its documents docs, whose word ids
// index s.Vocab.
func NewLearner(s fed.Setup, party int, docs *corpus.Corpus) (*Learner, error) {
	cfg, err := ParseConfig(s.Params)
	if err != nil {
		return nil, err
	}
	if party < 0 || party >= len(s.Parties) {
		return nil, fmt.Errorf("fednmf: party %d outside [0, %d)", party, len(s.Parties))
	}
	if docs == nil {
		return nil, errors.New("fednmf: nil corpus")
	}
	if docs.V != len(s.Vocab) {
		return nil, fmt.Errorf("fednmf: party %s: corpus over %d words, vocabulary of %d", s.Parties[party], docs.V, len(s.Vocab))
	}
	cfg = cfg.WithDefaults()
	a, err := NewMatrix(docs, cfg.Features)
	if err != nil {
		return nil, fmt.Errorf("fednmf: party %s: %w", s.Parties[party], err)
	}
	return &Learner{cfg: cfg, id: s.Parties[party], seed: s.Seed, sh: shapeOf(cfg, len(s.Vocab)), c: newClient(cfg, a), n: len(s.Parties)}, nil
}

func shapeOf(cfg Config, v int) shape {
	cfg = cfg.WithDefaults()
	s := shape{k: cfg.K, v: v}
	if cfg.MILambda > 0 {
		s.p = criticSize(v, cfg.K)
	}
	return s
}

// Plan implements fed.Planner: under DP-FedAvg every round releases one
// subsampled Gaussian per client, sampled or not (Config.RoundEvent at the
// document level); without DP, nothing noised.
func (l *Learner) Plan(round int) ([]privacy.Event, error) {
	if ev, ok := l.cfg.RoundEvent(UnitDocument); ok {
		return []privacy.Event{ev}, nil
	}
	return nil, nil
}

// Learn implements fed.Learner. With distributed noise (DP-FedAvg and
// secure_threshold) it refuses: the party's share of the noise must not
// leave it without secure aggregation.
func (l *Learner) Learn(round int, b []byte) (fed.Step, error) {
	if l.cfg.distributed() {
		return fed.Step{}, fmt.Errorf("fednmf: party %s: round %d: %w", l.id, round, errClearDistributed(l.cfg))
	}
	return l.learn(round, b)
}

// learn is one round of the client: the update and its events.
func (l *Learner) learn(round int, b []byte) (fed.Step, error) {
	spent, _ := l.Plan(round)
	msg, err := decodeBroadcast(b, l.sh)
	if err != nil {
		return fed.Step{}, fmt.Errorf("fednmf: party %s: round %d: %w", l.id, round, err)
	}
	switch msg.kind {
	case kindSkip:
		return fed.Step{Payload: encodeIdle(), Spent: spent}, nil
	case kindFinal:
		return fed.Step{}, fmt.Errorf("fednmf: party %s: round %d: %w: the final model came as a round's broadcast", l.id, round, errCodec)
	}
	x := msg.x
	nw := l.sh.v * l.sh.k
	w, theta := make([]float64, nw), make([]float64, l.sh.p)
	copy(w, x[:nw])
	copy(theta, x[nw:])
	if !l.ready {
		fitH(l.c.a, w, l.sh.k, l.c.h, initSweeps, 0)
		l.ready = true
	}
	l.c.epochs(rng.Derive(l.seed, "fednmf", "party", l.id, "round", round), w, theta, l.cfg.LocalEpochs)
	delta := make([]float64, len(x))
	for i := range nw {
		delta[i] = w[i] - x[i]
	}
	for i := range theta {
		delta[nw+i] = theta[i] - x[nw+i]
	}
	for _, d := range delta {
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return fed.Step{}, fmt.Errorf("fednmf: party %s: round %d: local SGD diverged (W or θ is no longer finite): lower lr (now %g)", l.id, round, l.cfg.LR)
		}
	}
	docs := l.c.a.N
	if l.cfg.DP() {
		clipTo(delta, l.cfg.Clip)
		docs = 0
	}
	return fed.Step{Payload: encodeUpdate(l.sh, docs, delta), Spent: spent}, nil
}

// learnerMagic starts a Learner's binary state.
const learnerMagic = "fednmf-learner/1\x00"

// MarshalBinary implements encoding.BinaryMarshaler: whether H was fitted
// and H itself, so that a restarted client goes on from it.
func (l *Learner) MarshalBinary() ([]byte, error) {
	b := append([]byte(learnerMagic), 0)
	if l.ready {
		b[len(b)-1] = 1
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(len(l.c.h)))
	return appendFloats(b, l.c.h), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (l *Learner) UnmarshalBinary(b []byte) error {
	if len(b) < len(learnerMagic)+9 || string(b[:len(learnerMagic)]) != learnerMagic {
		return errors.New("fednmf: learner state: wrong header")
	}
	b = b[len(learnerMagic):]
	ready := b[0] == 1
	n := binary.LittleEndian.Uint64(b[1:])
	if n != uint64(len(l.c.h)) || len(b[9:]) != 8*len(l.c.h) {
		return fmt.Errorf("fednmf: learner state: H of %d entries, want %d", n, len(l.c.h))
	}
	for i := range l.c.h {
		x := math.Float64frombits(binary.LittleEndian.Uint64(b[9+8*i:]))
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return fmt.Errorf("fednmf: learner state: H entry %d is not finite and non-negative", i)
		}
		l.c.h[i] = x
	}
	l.ready = ready
	return nil
}
