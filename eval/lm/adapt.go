package lm

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// DefaultSteps is the number of EM passes over the prefix after each word
// is appended to a History.
const DefaultSteps = 3

// DefaultLambda is the weight of the topic model in the FTM and iFTM
// papers' adapted language model (§4.5).
const DefaultLambda = 0.1

// History is the topic mixture P(z|C) of a document's prefix C, inferred
// by EM fold-in with the topics fixed and updated word by word (see the
// package documentation). It is not safe for concurrent use.
type History struct {
	m     *topic.Model
	steps int
	alpha []float64
	asum  float64
	theta []float64
	words []int32
	resp  []float64 // len(words)×K responsibilities
}

// NewHistory returns the empty history of a document under m, with steps
// EM passes (at least 1) after every word. The prior is m.Alpha, or 1/K
// per topic for a model without one (as topic.Infer).
func NewHistory(m *topic.Model, steps int) (*History, error) {
	if steps < 1 {
		return nil, fmt.Errorf("lm: history: %d EM steps, want at least 1", steps)
	}
	if err := checkTopics(m); err != nil {
		return nil, err
	}
	h := &History{m: m, steps: steps, alpha: make([]float64, m.K), theta: make([]float64, m.K)}
	for z := range m.K {
		h.alpha[z] = 1 / float64(m.K)
		if len(m.Alpha) == m.K && m.Alpha[z] > 0 {
			h.alpha[z] = m.Alpha[z]
		}
		h.asum += h.alpha[z]
	}
	h.Reset()
	return h, nil
}

// checkTopics reports whether m's Φ is K rows of V non-negative entries
// summing to 1 (within topic.RowSumTolerance); the vocabulary's words are
// not needed.
func checkTopics(m *topic.Model) error {
	if m.K < 1 || m.V < 1 || len(m.Phi) != m.K*m.V {
		return fmt.Errorf("lm: topic model of K = %d, V = %d with %d entries, want K, V ≥ 1 and K×V entries", m.K, m.V, len(m.Phi))
	}
	for z := range m.K {
		var s float64
		for _, p := range m.Row(z) {
			if !(p >= 0) || math.IsInf(p, 1) {
				return fmt.Errorf("lm: topic %d has an entry %v, want finite and ≥ 0", z, p)
			}
			s += p
		}
		if math.Abs(s-1) > topic.RowSumTolerance {
			return fmt.Errorf("lm: topic %d sums to %v, want 1", z, s)
		}
	}
	return nil
}

// Reset empties the history: θ = α/Σα.
func (h *History) Reset() {
	h.words, h.resp = h.words[:0], h.resp[:0]
	for z := range h.theta {
		h.theta[z] = h.alpha[z] / h.asum
	}
}

// Theta returns P(z|C), a view valid until the next Add or Reset.
func (h *History) Theta() []float64 { return h.theta }

// TopicProb returns Σ_z P(w|z)·P(z|C).
func (h *History) TopicProb(w int32) float64 {
	var p float64
	for z, t := range h.theta {
		p += t * h.m.Phi[z*h.m.V+int(w)]
	}
	return p
}

// Add appends w to the history and updates θ: the new word's
// responsibilities start from the current θ, then the EM passes run over
// the whole prefix.
func (h *History) Add(w int32) {
	if w < 0 || int(w) >= h.m.V {
		panic(fmt.Sprintf("lm: history: word %d outside the vocabulary of %d", w, h.m.V))
	}
	h.words = append(h.words, w)
	h.resp = append(h.resp, make([]float64, h.m.K)...)
	h.responsibilities(len(h.words) - 1)
	for range h.steps {
		h.mStep()
		for j := range h.words {
			h.responsibilities(j)
		}
	}
	h.mStep()
}

// responsibilities sets r_jz ∝ θ_z·φ_z,w_j; a word no topic gives mass
// keeps θ as its responsibilities.
func (h *History) responsibilities(j int) {
	k, v, w := h.m.K, h.m.V, int(h.words[j])
	r := h.resp[j*k : (j+1)*k]
	var s float64
	for z := range k {
		r[z] = h.theta[z] * h.m.Phi[z*v+w]
		s += r[z]
	}
	if s == 0 {
		copy(r, h.theta)
		return
	}
	for z := range r {
		r[z] /= s
	}
}

// mStep sets θ_z = (α_z + Σ_j r_jz)/(Σα + n).
func (h *History) mStep() {
	k := h.m.K
	n := float64(len(h.words))
	for z := range h.theta {
		s := h.alpha[z]
		for j := range h.words {
			s += h.resp[j*k+z]
		}
		h.theta[z] = s / (h.asum + n)
	}
}

// Adapted is the topic-adapted language model
// P(w|C) = λ·Σ_z P(w|z)·P(z|C) + (1 − λ)·P_ngram(w|C).
type Adapted struct {
	NGram  *NGram
	Topics *topic.Model
	Lambda float64
	Steps  int // EM passes per word of the history; 0 means DefaultSteps
}

// Validate reports every invalid field of a, joined with errors.Join.
func (a *Adapted) Validate() error {
	var errs []error
	if a.NGram == nil {
		errs = append(errs, errors.New("lm: adapted: no n-gram model"))
	}
	if a.Topics == nil {
		errs = append(errs, errors.New("lm: adapted: no topic model"))
	} else if a.NGram != nil && a.Topics.V != a.NGram.V() {
		errs = append(errs, fmt.Errorf("lm: adapted: topic model over %d words, n-gram model over %d", a.Topics.V, a.NGram.V()))
	}
	if err := checkLambda(a.Lambda); err != nil {
		errs = append(errs, err)
	}
	if a.Steps < 0 {
		errs = append(errs, fmt.Errorf("lm: adapted: %d EM steps, want ≥ 0 (0 = %d)", a.Steps, DefaultSteps))
	}
	return errors.Join(errs...)
}

func checkLambda(l float64) error {
	if !(l >= 0 && l < 1) {
		return fmt.Errorf("lm: λ = %v, want in [0, 1): the n-gram model keeps every word's probability above zero", l)
	}
	return nil
}

// Dist returns P(·|prefix) over the V words, where prefix is the
// document's words so far.
func (a *Adapted) Dist(prefix []int32) ([]float64, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	steps := a.Steps
	if steps == 0 {
		steps = DefaultSteps
	}
	h, err := NewHistory(a.Topics, steps)
	if err != nil {
		return nil, err
	}
	for _, w := range prefix {
		h.Add(w)
	}
	out := make([]float64, a.NGram.V())
	for w := range out {
		out[w] = a.Lambda*h.TopicProb(int32(w)) + (1-a.Lambda)*a.NGram.Prob(prefix, int32(w))
	}
	return out, nil
}

// Score is the held-out per-word perplexity of one λ.
type Score struct {
	Lambda        float64 `json:"lambda"`
	LogLikelihood float64 `json:"log_likelihood"` // Σ log P(w_i|w_<i), nats
	Perplexity    float64 `json:"perplexity"`     // exp(−LogLikelihood/Tokens)
	Tokens        int     `json:"tokens"`
}

// Evaluate scores every token of docs given the words of its document
// before it, under the n-gram model adapted by topics with each weight of
// lambdas (λ = 0 is the n-gram model alone; topics may be nil when every λ
// is 0). steps is the number of EM passes per word (0 = DefaultSteps).
// The scores are in the order of lambdas.
func Evaluate(ctx context.Context, ng *NGram, topics *topic.Model, docs *corpus.Corpus, lambdas []float64, steps int) ([]Score, error) {
	if len(lambdas) == 0 {
		return nil, errors.New("lm: evaluate: no λ")
	}
	needTopics := false
	for _, l := range lambdas {
		if err := checkLambda(l); err != nil {
			return nil, err
		}
		needTopics = needTopics || l > 0
	}
	if docs.V != ng.V() {
		return nil, fmt.Errorf("lm: evaluate: documents over %d words, n-gram model over %d", docs.V, ng.V())
	}
	var h *History
	if needTopics {
		a := Adapted{NGram: ng, Topics: topics, Lambda: lambdas[0], Steps: steps}
		if err := a.Validate(); err != nil {
			return nil, err
		}
		if steps == 0 {
			steps = DefaultSteps
		}
		var err error
		if h, err = NewHistory(topics, steps); err != nil {
			return nil, err
		}
	}
	out := make([]Score, len(lambdas))
	for i, l := range lambdas {
		out[i].Lambda = l
	}
	var buf [3]int32
	for d := range docs.NumDocs() {
		if d%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("lm: evaluate: %w", err)
			}
		}
		doc := docs.Doc(d)
		if h != nil {
			h.Reset()
		}
		for i, w := range doc {
			if w < 0 || int(w) >= ng.V() {
				return nil, fmt.Errorf("lm: evaluate: document %d, token %d: word id %d outside the vocabulary of %d", d, i, w, ng.V())
			}
			pn := ng.prob(ng.context(doc[:i], buf[:0]), w)
			var pt float64
			if h != nil {
				pt = h.TopicProb(w)
				h.Add(w)
			}
			for j, l := range lambdas {
				out[j].LogLikelihood += math.Log(l*pt + (1-l)*pn)
				out[j].Tokens++
			}
		}
	}
	if out[0].Tokens == 0 {
		return nil, errors.New("lm: evaluate: no token to score")
	}
	for j := range out {
		out[j].Perplexity = math.Exp(-out[j].LogLikelihood / float64(out[j].Tokens))
	}
	return out, nil
}
