package privacy

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// PartitionSelectionConfig describes the private vocabulary round
// (docs/methods.md): each party releases the words whose noisy document
// frequency reaches a threshold. The zero value of MaxWordsPerDoc and Unit
// means their documented defaults.
type PartitionSelectionConfig struct {
	// Epsilon and Delta are the (ε, δ) of the whole selection; required,
	// δ > 0.
	Epsilon float64 `json:"epsilon"`
	Delta   float64 `json:"delta"`
	// MaxWordsPerDoc is l₀, the most distinct words one document may
	// contribute; documents with more contribute a uniform random subset of
	// l₀. Zero means 100.
	MaxWordsPerDoc int `json:"max_words_per_doc,omitempty"`
	// Unit names the privacy unit; zero means "document".
	Unit string `json:"unit,omitempty"`
}

// Validate reports every problem with c.
func (c PartitionSelectionConfig) Validate() error {
	var errs []error
	errs = append(errs, CheckEpsilon(c.Epsilon))
	if err := CheckDelta(c.Delta); err != nil {
		errs = append(errs, err)
	} else if c.Delta == 0 {
		errs = append(errs, fmt.Errorf("privacy: partition selection needs delta > 0: %w", ErrInvalidParameter))
	}
	if c.MaxWordsPerDoc < 0 || c.MaxWordsPerDoc > 1<<20 {
		errs = append(errs, fmt.Errorf("privacy: max words per document %d: must be in [1, 2^20] (0 for the default): %w", c.MaxWordsPerDoc, ErrInvalidParameter))
	}
	return errors.Join(errs...)
}

// Partition is one selected word and its noisy document frequency.
type Partition struct {
	Word  string `json:"word"`
	Count int64  `json:"count"`
}

// PartitionSelection is Laplace thresholding for partition selection
// (Korolova et al. 2009; Wilson et al. 2020; Desfontaines et al. 2022) on
// the integers: every word with document frequency c ≥ 1 gets c + Z, Z
// discrete Laplace with decay λ = ε/l₀ (rounded down), and is released with
// that noisy count iff c + Z ≥ T.
//
// Privacy, for neighbouring corpora that differ in one document (which
// touches at most l₀ words, each by one): on the words present in both, the
// noisy counts are a Laplace mechanism with L1 sensitivity l₀, so ε-DP; a
// word present only in the larger corpus has c = 1 there and is released
// with probability p₁ = P(Z ≥ T − 1) — the boundary mass P(Z = T − 1)
// included, since the comparison is ≥ — so the chance that any of them is
// released is δ(T) = 1 − (1 − p₁)^l₀. T is the smallest threshold with
// δ(T) ≤ δ, and the mechanism is (ε, δ)-DP. Safe for concurrent use.
type PartitionSelection struct {
	cfg       PartitionSelectionConfig
	lambda    float64
	threshold int64
	noise     *DiscreteLaplace
}

// NewPartitionSelection returns the mechanism c describes.
func NewPartitionSelection(c PartitionSelectionConfig) (*PartitionSelection, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("privacy: partition selection: %w", err)
	}
	if c.MaxWordsPerDoc == 0 {
		c.MaxWordsPerDoc = 100
	}
	if c.Unit == "" {
		c.Unit = "document"
	}
	lambda := quoDown(c.Epsilon, float64(c.MaxWordsPerDoc))
	noise, err := newDiscreteLaplace(lambda)
	if err != nil {
		return nil, fmt.Errorf("privacy: partition selection: %w", err)
	}
	p := &PartitionSelection{cfg: c, lambda: lambda, noise: noise}
	// Start from the continuous solution a^(T−1)/(1+a) = δ/l₀, then walk
	// to the smallest integer that satisfies the exact condition.
	a := math.Exp(-lambda)
	t := 1 + math.Ceil(math.Log(float64(c.MaxWordsPerDoc)/(c.Delta*(1+a)))/lambda)
	if t > 1<<52 {
		return nil, fmt.Errorf("privacy: partition selection: threshold %v is out of range for ε = %v, δ = %v, l0 = %d: %w", t, c.Epsilon, c.Delta, c.MaxWordsPerDoc, ErrInvalidParameter)
	}
	p.threshold = max(int64(t), 1)
	ok := func(t int64) bool { return thresholdDelta(lambda, c.MaxWordsPerDoc, t) <= c.Delta*(1-1e-9) }
	for p.threshold > 1 && ok(p.threshold-1) {
		p.threshold--
	}
	for !ok(p.threshold) {
		p.threshold++
	}
	return p, nil
}

// PartitionDelta returns δ(T) = 1 − (1 − P(Z ≥ T−1))^l₀ for the discrete
// Laplace Z with decay ε/l₀: the δ of Laplace thresholding at integer
// threshold T (keep iff noisy count ≥ T), boundary mass included.
func PartitionDelta(eps float64, l0 int, threshold int64) float64 {
	return thresholdDelta(quoDown(eps, float64(l0)), l0, threshold)
}

func thresholdDelta(lambda float64, l0 int, threshold int64) float64 {
	a := math.Exp(-lambda)
	m := threshold - 1 // a new word needs 1 + Z ≥ T, i.e. Z ≥ m
	var p1 float64
	if m >= 1 {
		p1 = math.Exp(-lambda*float64(m)) / (1 + a)
	} else {
		p1 = 1 - math.Exp(-lambda*float64(1-m))/(1+a)
	}
	return -math.Expm1(float64(l0) * math.Log1p(-p1))
}

// Threshold returns T: a word is released iff its noisy count is ≥ T.
func (p *PartitionSelection) Threshold() int64 { return p.threshold }

// Config returns the configuration with defaults filled in.
func (p *PartitionSelection) Config() PartitionSelectionConfig { return p.cfg }

// Event returns the Event of one selection.
func (p *PartitionSelection) Event() Event {
	return Event{Mechanism: MechanismPartitionSelection, Epsilon: p.cfg.Epsilon, Delta: p.cfg.Delta, Sensitivity: float64(p.cfg.MaxWordsPerDoc), Unit: p.cfg.Unit, Count: 1}
}

// Keep draws the noisy count of a word with document frequency count ≥ 1
// and reports whether it reaches the threshold. The caller must have capped
// every document's contribution at l₀ distinct words.
func (p *PartitionSelection) Keep(r *rand.Rand, count int64) (noisy int64, keep bool) {
	noisy = count + p.noise.Sample(r)
	return noisy, noisy >= p.threshold
}

// Select runs the selection over docs (each a list of words, repeats
// allowed) and returns the released words in increasing order with their
// noisy counts, and the Event of the release.
func (p *PartitionSelection) Select(r *rand.Rand, docs [][]string) ([]Partition, Event) {
	l0 := p.cfg.MaxWordsPerDoc
	df := make(map[string]int64)
	var distinct []string
	for _, doc := range docs {
		distinct = append(distinct[:0], doc...)
		slices.Sort(distinct)
		distinct = slices.Compact(distinct)
		if len(distinct) > l0 { // uniform l₀-subset: partial Fisher–Yates
			for i := 0; i < l0; i++ {
				j := i + r.IntN(len(distinct)-i)
				distinct[i], distinct[j] = distinct[j], distinct[i]
			}
			distinct = distinct[:l0]
		}
		for _, w := range distinct {
			df[w]++
		}
	}
	words := make([]string, 0, len(df))
	for w := range df {
		words = append(words, w)
	}
	slices.Sort(words) // noise is drawn in word order, never map order
	br := bitReader{r: r}
	var out []Partition
	for _, w := range words {
		if n := df[w] + p.noise.sample(&br); n >= p.threshold {
			out = append(out, Partition{Word: w, Count: n})
		}
	}
	return out, p.Event()
}
