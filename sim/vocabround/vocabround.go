package vocabround

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
)

// Name is the algorithm's name in run records.
const Name = "vocab-selection"

// Defaults of Params, used where a field is zero.
const (
	DefaultMaxWords   = 1 << 20
	DefaultMaxWordLen = 256
)

// Params configure the selection.
type Params struct {
	// Selection is the partition selection each party runs: its (ε, δ),
	// l₀ (MaxWordsPerDoc) and privacy unit.
	Selection privacy.PartitionSelectionConfig `json:"selection"`
	// MaxWords bounds the words one party may release (and the size of the
	// vocabulary); default 2^20.
	MaxWords int `json:"max_words,omitempty"`
	// MaxWordLen bounds a word's length in bytes; default 256.
	MaxWordLen int `json:"max_word_len,omitempty"`
}

func (p Params) withDefaults() Params {
	if p.MaxWords == 0 {
		p.MaxWords = DefaultMaxWords
	}
	if p.MaxWordLen == 0 {
		p.MaxWordLen = DefaultMaxWordLen
	}
	return p
}

// Validate reports every problem with p.
func (p Params) Validate() error {
	var errs []error
	if err := p.Selection.Validate(); err != nil {
		errs = append(errs, err)
	}
	if p.MaxWords < 0 {
		errs = append(errs, fmt.Errorf("vocabround: max_words = %d < 0", p.MaxWords))
	}
	if p.MaxWordLen < 0 {
		errs = append(errs, fmt.Errorf("vocabround: max_word_len = %d < 0", p.MaxWordLen))
	}
	return errors.Join(errs...)
}

// encode joins sorted words with newlines.
func encode(words []string) []byte { return []byte(strings.Join(words, "\n")) }

// Decode checks and splits a release or a broadcast vocabulary: words of
// valid UTF-8 without newlines, at most MaxWordLen bytes each, strictly
// increasing, at most MaxWords of them. Errors name positions, never words.
func Decode(b []byte, p Params) ([]string, error) {
	p = p.withDefaults()
	if len(b) == 0 {
		return nil, nil
	}
	if n := bytes.Count(b, []byte{'\n'}) + 1; n > p.MaxWords {
		return nil, fmt.Errorf("vocabround: %d words > %d", n, p.MaxWords)
	}
	words := strings.Split(string(b), "\n")
	for i, w := range words {
		switch {
		case w == "":
			return nil, fmt.Errorf("vocabround: word %d is empty", i)
		case len(w) > p.MaxWordLen:
			return nil, fmt.Errorf("vocabround: word %d is %d bytes long (> %d)", i, len(w), p.MaxWordLen)
		case !utf8.ValidString(w):
			return nil, fmt.Errorf("vocabround: word %d is not valid UTF-8", i)
		case i > 0 && w <= words[i-1]:
			return nil, fmt.Errorf("vocabround: word %d is out of order or repeated", i)
		}
	}
	return words, nil
}

// Algorithm is the vocabulary round's coordinator half and validator. Its
// learners are built from a party's raw words with NewLearner, not from an
// encoded corpus, so the descriptor has no NewLearner.
var Algorithm = fed.Algorithm{
	Name: Name,
	NewAggregator: func(s fed.Setup) (fed.Aggregator, error) {
		p, err := params(s)
		return &Aggregator{p: p}, err
	},
	NewValidator: func(s fed.Setup) (fed.Validator, error) {
		p, err := params(s)
		return Validator{p: p}, err
	},
}

func params(s fed.Setup) (Params, error) {
	var p Params
	dec := json.NewDecoder(bytes.NewReader(s.Params))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("vocabround: parameters: %w", err)
	}
	if err := p.Validate(); err != nil {
		return p, err
	}
	return p.withDefaults(), nil
}

// Validator checks releases and sizes them.
type Validator struct{ p Params }

// CheckUpdate implements fed.Validator.
func (v Validator) CheckUpdate(round int, payload []byte) error {
	_, err := Decode(payload, v.p)
	return err
}

// MaxUpdateSize implements fed.Validator.
func (v Validator) MaxUpdateSize() int { return v.p.MaxWords * (v.p.MaxWordLen + 1) }

// MaxBroadcastSize implements fed.Validator.
func (v Validator) MaxBroadcastSize() int { return v.MaxUpdateSize() }

// Learner releases one party's selected words.
type Learner struct {
	p    Params
	sel  *privacy.PartitionSelection
	docs [][]string
	r    *rand.Rand
}

// NewLearner returns the party half over docs (each document a list of its
// words; repeats allowed), drawing noise from r.
func NewLearner(p Params, docs [][]string, r *rand.Rand) (*Learner, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sel, err := privacy.NewPartitionSelection(p.Selection)
	if err != nil {
		return nil, err
	}
	return &Learner{p: p.withDefaults(), sel: sel, docs: docs, r: r}, nil
}

// Plan implements fed.Planner: one partition selection.
func (l *Learner) Plan(round int) ([]privacy.Event, error) {
	return []privacy.Event{l.sel.Event()}, nil
}

// Learn implements fed.Learner: the selected words, sorted, at most
// MaxWords of them (words too long to be released are never candidates).
func (l *Learner) Learn(round int, broadcast []byte) (fed.Step, error) {
	docs := make([][]string, len(l.docs))
	for i, d := range l.docs {
		docs[i] = slices.DeleteFunc(slices.Clone(d), func(w string) bool {
			return w == "" || len(w) > l.p.MaxWordLen || strings.ContainsRune(w, '\n') || !utf8.ValidString(w)
		})
	}
	parts, ev := l.sel.Select(l.r, docs)
	if len(parts) > l.p.MaxWords {
		return fed.Step{}, fmt.Errorf("vocabround: %d words selected, more than max_words = %d", len(parts), l.p.MaxWords)
	}
	words := make([]string, len(parts))
	for i, p := range parts {
		words[i] = p.Word
	}
	return fed.Step{Payload: encode(words), Spent: []privacy.Event{ev}}, nil
}

// Aggregator takes the union of the releases.
type Aggregator struct {
	p     Params
	vocab []string
}

// Init implements fed.Aggregator: an empty first broadcast.
func (a *Aggregator) Init() (fed.Step, error) { return fed.Step{}, nil }

// Aggregate implements fed.Aggregator: the sorted union, and done.
func (a *Aggregator) Aggregate(round int, updates []fed.Update) (fed.Step, error) {
	var all []string
	for _, u := range updates {
		w, err := Decode(u.Payload, a.p)
		if err != nil {
			return fed.Step{}, fmt.Errorf("vocabround: party %s: %w", u.ID, err)
		}
		all = append(all, w...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) > a.p.MaxWords {
		return fed.Step{}, fmt.Errorf("vocabround: union of %d words > max_words = %d", len(all), a.p.MaxWords)
	}
	if len(all) == 0 {
		return fed.Step{}, errors.New("vocabround: no party released any word: raise ε or δ, or use a shared vocabulary file")
	}
	a.vocab = all
	return fed.Step{Payload: encode(all), Done: true}, nil
}

// Vocabulary returns the selected vocabulary after the round.
func (a *Aggregator) Vocabulary() []string { return slices.Clone(a.vocab) }

// MarshalBinary implements encoding.BinaryMarshaler.
func (a *Aggregator) MarshalBinary() ([]byte, error) { return encode(a.vocab), nil }

// UnmarshalBinary implements encoding.BinaryUnmarshaler.
func (a *Aggregator) UnmarshalBinary(b []byte) error {
	w, err := Decode(b, a.p)
	a.vocab = w
	return err
}
