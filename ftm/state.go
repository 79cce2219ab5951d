package ftm

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/privacy"
)

// learnerMagic starts a Learner's binary state.
const learnerMagic = "fedtopic-ftm-learner/1\x00"

// learnerMeta is the part of a Learner's state that is not its local model.
type learnerMeta struct {
	Party   string          `json:"party"`
	Round   int             `json:"round"`
	Charged bool            `json:"charged"`
	Spent   []privacy.Event `json:"spent,omitempty"`
	Noise   []byte          `json:"noise,omitempty"` // the noise source's state
	Rows    int             `json:"rows"`            // values of the local model that follow
}

// MarshalBinary implements encoding.BinaryMarshaler, so that a party
// restarted from its state directory resumes without a second release: the
// state holds whether the privatization has been charged, the events
// charged, the latest local model, and the noise source, from which the
// restored Learner regenerates exactly the privatized vectors it released
// (the source of a SecureNoise run holds its secret key; the engine keeps
// the state in the party's own state directory, with mode 0600). The
// topics of the chain are not kept: every round after the first starts them
// afresh from the coordinator's composed model.
func (l *Learner) MarshalBinary() ([]byte, error) {
	meta := learnerMeta{Party: l.id, Round: l.round, Charged: l.charged, Spent: l.spent, Rows: len(l.local)}
	if l.noise != nil {
		b, err := l.noise.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("ftm: learner state: %w", err)
		}
		meta.Noise = b
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, fmt.Errorf("ftm: learner state: %w", err)
	}
	out := make([]byte, 0, len(learnerMagic)+4+len(mb)+8*len(l.local))
	out = append(out, learnerMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(mb)))
	out = append(out, mb...)
	for _, x := range l.local {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(x))
	}
	return out, nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. It restores the
// state MarshalBinary wrote into a Learner just built by NewLearner with the
// same setup, party and corpus, before its first Learn; a state of another
// party, of another model size or of another kind of noise is an error.
func (l *Learner) UnmarshalBinary(b []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("ftm: learner state of party %s: "+format, append([]any{l.id}, args...)...)
	}
	if l.st != nil || l.round != 0 {
		return bad("the learner has already learned round %d", l.round)
	}
	if len(b) < len(learnerMagic)+4 || string(b[:len(learnerMagic)]) != learnerMagic {
		return bad("not an FTM learner's state (wrong header)")
	}
	b = b[len(learnerMagic):]
	n := binary.LittleEndian.Uint32(b)
	b = b[4:]
	if uint64(n) > uint64(len(b)) {
		return bad("truncated: header of %d bytes, %d left", n, len(b))
	}
	var meta learnerMeta
	if err := json.Unmarshal(b[:n], &meta); err != nil {
		return bad("header: %v", err)
	}
	b = b[n:]
	switch {
	case meta.Party != l.id:
		return bad("it belongs to party %q", meta.Party)
	case meta.Round < 1:
		return bad("round %d; want at least 1", meta.Round)
	case meta.Rows != 0 && meta.Rows != l.k*len(l.vocab):
		return bad("local model of %d values; want %d topics × %d words", meta.Rows, l.k, len(l.vocab))
	case len(b) != 8*meta.Rows:
		return bad("local model of %d values in %d bytes", meta.Rows, len(b))
	case (meta.Noise != nil) != (l.noise != nil):
		return bad("noise source saved: %v; this configuration draws noise: %v", meta.Noise != nil, l.noise != nil)
	case meta.Charged && l.mech != nil && len(meta.Spent) == 0:
		return bad("charged, but no spend recorded")
	}
	for i, e := range meta.Spent {
		if err := e.Validate(); err != nil {
			return bad("spend %d: %v", i, err)
		}
	}
	var noise *privacy.Source
	if meta.Noise != nil {
		noise = new(privacy.Source)
		if err := noise.UnmarshalBinary(meta.Noise); err != nil {
			return bad("%v", err)
		}
		if noise.Seeded() != l.noise.Seeded() {
			return bad("its noise is %s; this configuration's is %s", kindOf(noise), kindOf(l.noise))
		}
	}
	var local []float64 // nil before the first round's model
	if meta.Rows > 0 {
		local = make([]float64, meta.Rows)
		for i := range local {
			local[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
	}
	l.round, l.charged, l.spent, l.local = meta.Round, meta.Charged, meta.Spent, local
	if noise != nil {
		l.noise = noise
	}
	return nil
}

// kindOf names the kind of a noise source.
func kindOf(s *privacy.Source) string {
	if s.Seeded() {
		return "seeded"
	}
	return "secure"
}
