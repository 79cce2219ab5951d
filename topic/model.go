package topic

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Model is a trained topic model: the topic-word distributions Φ, the
// vocabulary they are indexed by, the hyperparameters and where the model
// came from.
type Model struct {
	// Phi holds p(w|k) row-major: Phi[k*V+w], K rows of V columns; each row
	// sums to 1.
	Phi   []float64
	K, V  int
	Vocab []string // len V; Vocab[w] is the word with id w
	// Alpha is the document-topic Dirichlet prior, one entry per topic
	// (symmetric priors repeat the same value).
	Alpha []float64
	Beta  float64 // symmetric topic-word Dirichlet prior
	Prov  Provenance
}

// Provenance records how a model was made, so a seed plus the recorded
// parameters reproduce it.
type Provenance struct {
	Method     string            `json:"method"`               // "lda", "slda", "ftm", ...
	Params     map[string]string `json:"params,omitempty"`     // method parameters as given on the command line
	Seed       uint64            `json:"seed"`                 // the run's seed
	Iterations int               `json:"iterations,omitempty"` // sampler iterations (per round, for federated runs)
	Rounds     int               `json:"rounds,omitempty"`     // federated rounds, 0 for centralized training
	Corpus     string            `json:"corpus,omitempty"`     // corpus description (file names, document and token counts)
	Created    string            `json:"created,omitempty"`    // RFC 3339 time of creation
	Version    string            `json:"version,omitempty"`    // fedtopic version that wrote the model
	Privacy    []PrivacySpend    `json:"privacy,omitempty"`    // privacy spent, one entry per party
}

// PrivacySpend is the privacy cost one party paid for a model, as reported
// by the accountant.
type PrivacySpend struct {
	Party   string  `json:"party"`
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	Unit    string  `json:"unit"` // privacy unit: "word occurrence", "document", ...
}

// Row returns p(·|k), a view into Phi.
func (m *Model) Row(k int) []float64 { return m.Phi[k*m.V : (k+1)*m.V] }

// RowSumTolerance is how far a row of Phi may sum from 1 and still be
// accepted by Validate. Rows drawn or normalized in float64 sum to 1 within
// V·2⁻⁵³, far inside it; rows written with fewer digits by another tool may
// need ReadJSON's renormalization.
const RowSumTolerance = 1e-6

// Validate reports every way m is not a well-formed model, joined with
// errors.Join: K and V at least 1, Phi of K×V finite non-negative entries
// whose rows sum to 1 within RowSumTolerance, V distinct non-empty valid
// UTF-8 words without line breaks, Alpha empty (unknown) or K finite
// positive entries, Beta finite and non-negative (0 when unknown), and
// finite non-negative privacy spends. A nil model is invalid.
func (m *Model) Validate() error {
	if m == nil {
		return errors.New("topic: nil model")
	}
	errs := m.problems()
	for i, err := range errs {
		errs[i] = fmt.Errorf("topic: %w", err)
	}
	return errors.Join(errs...)
}

// invalid is Validate without the package prefix, for errors that already
// say where they come from ("topic: load model m.ftm: ...").
func (m *Model) invalid() error {
	if m == nil {
		return errors.New("nil model")
	}
	return errors.Join(m.problems()...)
}

// problems lists what Validate reports.
func (m *Model) problems() []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if m.K < 1 {
		bad("K = %d, want at least 1", m.K)
	}
	if m.V < 1 {
		bad("V = %d, want at least 1", m.V)
	}
	if m.K >= 1 && m.V >= 1 {
		if len(m.Phi) != m.K*m.V {
			bad("Phi has %d entries, want K×V = %d×%d = %d", len(m.Phi), m.K, m.V, m.K*m.V)
		} else if err := checkRows(m.Phi, m.K, m.V); err != nil {
			errs = append(errs, err)
		}
	}
	if m.V >= 1 && len(m.Vocab) != m.V {
		bad("vocabulary has %d words, want V = %d", len(m.Vocab), m.V)
	}
	if err := checkVocab(m.Vocab); err != nil {
		errs = append(errs, err)
	}
	if len(m.Alpha) != 0 && len(m.Alpha) != m.K {
		bad("Alpha has %d entries, want K = %d (or none)", len(m.Alpha), m.K)
	}
	for k, a := range m.Alpha {
		if !(a > 0) || math.IsInf(a, 0) {
			bad("Alpha[%d] = %v, want finite and positive", k, a)
			break
		}
	}
	if !(m.Beta >= 0) || math.IsInf(m.Beta, 0) {
		bad("Beta = %v, want finite and non-negative", m.Beta)
	}
	for i, p := range m.Prov.Privacy {
		if !(p.Epsilon >= 0) || math.IsInf(p.Epsilon, 0) || !(p.Delta >= 0) || p.Delta >= 1 {
			bad("privacy spend %d (party %q): ε = %v, δ = %v, want finite ε ≥ 0 and 0 ≤ δ < 1", i, p.Party, p.Epsilon, p.Delta)
		}
	}
	return errs
}

// checkRows reports the first non-finite or negative entry of the k×v
// matrix phi and the first row that does not sum to 1.
func checkRows(phi []float64, k, v int) error {
	for t := range k {
		s := 0.0
		for w, x := range phi[t*v : (t+1)*v] {
			if !(x >= 0) || math.IsInf(x, 0) {
				return fmt.Errorf("Phi[%d][%d] = %v, want a finite non-negative probability", t, w, x)
			}
			s += x
		}
		if math.Abs(s-1) > RowSumTolerance {
			return fmt.Errorf("row %d of Phi sums to %v, want 1 (±%g)", t, s, RowSumTolerance)
		}
	}
	return nil
}

// checkVocab reports the first empty, duplicate, non-UTF-8 or multi-line
// word.
func checkVocab(vocab []string) error {
	seen := make(map[string]int, len(vocab))
	for w, s := range vocab {
		switch {
		case s == "":
			return fmt.Errorf("vocabulary word %d is empty", w)
		case !utf8.ValidString(s):
			return fmt.Errorf("vocabulary word %d (%q) is not valid UTF-8", w, s)
		case strings.ContainsAny(s, "\n\r"):
			return fmt.Errorf("vocabulary word %d (%q) contains a line break", w, s)
		}
		if prev, ok := seen[s]; ok {
			return fmt.Errorf("vocabulary word %q appears twice (ids %d and %d)", s, prev, w)
		}
		seen[s] = w
	}
	return nil
}
