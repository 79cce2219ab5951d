package synth

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedtopic/fedtopic/corpus"
)

// Structures of the topic-word matrix Φ that Generate can make.
const (
	// Dirichlet draws every row of Φ from a symmetric Dirichlet(Beta) over
	// the whole vocabulary: the textbook generative process.
	Dirichlet = "dirichlet"
	// Planted cuts the vocabulary into K contiguous blocks of (nearly) equal
	// size and gives topic k the words of block k, with weights drawn from a
	// flat Dirichlet; a share Noise of each topic's mass is spread evenly
	// over the whole vocabulary. Topics are disjoint when Noise is 0, which
	// makes them easy to tell apart and to match after training.
	Planted = "planted"
)

// Config describes a synthetic corpus. The zero value of every field means
// the default given in its comment.
type Config struct {
	K         int     `json:"k"`          // number of topics; default 10
	V         int     `json:"v"`          // vocabulary size; default 500
	Docs      int     `json:"docs"`       // number of documents; default 1000
	DocLen    float64 `json:"doc_len"`    // mean document length in tokens; default 50
	FixedLen  bool    `json:"fixed_len"`  // every document has round(DocLen) tokens instead of 1 + Poisson(DocLen − 1)
	Alpha     float64 `json:"alpha"`      // symmetric Dirichlet prior of θ_d; default 0.1
	Beta      float64 `json:"beta"`       // symmetric Dirichlet prior of φ_k for Structure Dirichlet; default 0.01
	Structure string  `json:"structure"`  // Dirichlet (default) or Planted
	Noise     float64 `json:"noise"`      // Planted only: share of each topic's mass spread over all words, in [0, 1); default 0
	SentLen   float64 `json:"sent_len"`   // mean sentence length (1 + Poisson(SentLen − 1)); 0 means no sentences
	WordsOnly bool    `json:"words_only"` // do not record the true token topics Z (saves memory on big corpora)
}

func (c Config) withDefaults() Config {
	if c.K == 0 {
		c.K = 10
	}
	if c.V == 0 {
		c.V = 500
	}
	if c.Docs == 0 {
		c.Docs = 1000
	}
	if c.DocLen == 0 {
		c.DocLen = 50
	}
	if c.Alpha == 0 {
		c.Alpha = 0.1
	}
	if c.Beta == 0 {
		c.Beta = 0.01
	}
	if c.Structure == "" {
		c.Structure = Dirichlet
	}
	return c
}

// Validate reports every problem with the configuration.
func (c Config) Validate() error {
	var errs []error
	if c.K < 0 {
		errs = append(errs, fmt.Errorf("synth: k = %d, want ≥ 1", c.K))
	}
	if c.V < 0 {
		errs = append(errs, fmt.Errorf("synth: v = %d, want ≥ 1", c.V))
	}
	if c.Docs < 0 {
		errs = append(errs, fmt.Errorf("synth: docs = %d, want ≥ 1", c.Docs))
	}
	if !(c.DocLen >= 0) || math.IsInf(c.DocLen, 0) {
		errs = append(errs, fmt.Errorf("synth: doc_len = %v, want a finite number ≥ 1", c.DocLen))
	} else if c.DocLen != 0 && c.DocLen < 1 {
		errs = append(errs, fmt.Errorf("synth: doc_len = %v, want ≥ 1", c.DocLen))
	}
	if !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0) {
		errs = append(errs, fmt.Errorf("synth: alpha = %v, want a finite number > 0", c.Alpha))
	}
	if !(c.Beta >= 0) || math.IsInf(c.Beta, 0) {
		errs = append(errs, fmt.Errorf("synth: beta = %v, want a finite number > 0", c.Beta))
	}
	switch c.Structure {
	case "", Dirichlet, Planted:
	default:
		errs = append(errs, fmt.Errorf("synth: structure = %q, want %q or %q", c.Structure, Dirichlet, Planted))
	}
	if !(c.Noise >= 0 && c.Noise < 1) {
		errs = append(errs, fmt.Errorf("synth: noise = %v, want a number in [0, 1)", c.Noise))
	}
	if !(c.SentLen >= 0) || math.IsInf(c.SentLen, 0) || (c.SentLen != 0 && c.SentLen < 1) {
		errs = append(errs, fmt.Errorf("synth: sent_len = %v, want 0 (no sentences) or a finite number ≥ 1", c.SentLen))
	}
	d := c.withDefaults()
	if d.Structure == Planted && d.K > 0 && d.V > 0 && d.V < d.K {
		errs = append(errs, fmt.Errorf("synth: planted structure needs v ≥ k, got v = %d, k = %d", d.V, d.K))
	}
	return errors.Join(errs...)
}

// Data is a synthetic corpus together with the parameters that generated it.
type Data struct {
	Corpus *corpus.Corpus
	K      int
	// Phi holds the true p(w|k) row-major, Phi[k*V+w].
	Phi []float64
	// Theta holds the true p(k|d) row-major, Theta[d*K+k].
	Theta []float64
	// Z holds the true topic of every token, aligned with Corpus.Words;
	// nil when Config.WordsOnly is set.
	Z []int32
}

// Generate draws a corpus from the generative process described by cfg,
// using r as its only source of randomness. Document d has ID "doc<d>" and
// the label "topic<k>" of its largest θ_dk. With cfg.SentLen > 0 the corpus
// carries sentence boundaries (UnitStart, DocUnit).
func Generate(cfg Config, r *rand.Rand) (*Data, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	k, v := cfg.K, cfg.V
	phi := make([]float64, k*v)
	switch cfg.Structure {
	case Dirichlet:
		for t := 0; t < k; t++ {
			dirichlet(phi[t*v:(t+1)*v], cfg.Beta, r)
		}
	case Planted:
		for t := 0; t < k; t++ {
			lo, hi := t*v/k, (t+1)*v/k
			row := phi[t*v : (t+1)*v]
			dirichlet(row[lo:hi], 1, r)
			for w := range row {
				row[w] = (1-cfg.Noise)*row[w] + cfg.Noise/float64(v)
			}
		}
	}
	phiCDF := make([]float64, k*v)
	for t := 0; t < k; t++ {
		cumulate(phiCDF[t*v:(t+1)*v], phi[t*v:(t+1)*v])
	}

	c := &corpus.Corpus{V: v, DocStart: make([]int, 1, cfg.Docs+1), IDs: make([]string, cfg.Docs), Labels: make([]string, cfg.Docs)}
	sentences := cfg.SentLen > 0
	if sentences {
		c.UnitStart = []int{0}
		c.DocUnit = make([]int, 1, cfg.Docs+1)
	}
	d := &Data{Corpus: c, K: k, Phi: phi, Theta: make([]float64, cfg.Docs*k)}
	docLen := distuv.Poisson{Lambda: cfg.DocLen - 1, Src: r}
	sentLen := distuv.Poisson{Lambda: cfg.SentLen - 1, Src: r}
	thetaCDF := make([]float64, k)
	for doc := 0; doc < cfg.Docs; doc++ {
		theta := d.Theta[doc*k : (doc+1)*k]
		dirichlet(theta, cfg.Alpha, r)
		cumulate(thetaCDF, theta)
		n := int(math.Round(cfg.DocLen))
		if !cfg.FixedLen {
			n = 1 + int(poisson(docLen))
		}
		for i := 0; i < n; {
			m := 1
			if sentences && cfg.SentLen > 1 {
				m = 1 + int(poisson(sentLen))
			}
			m = min(m, n-i)
			z := draw(thetaCDF, r) // one topic per sentence, or per token without sentences
			for j := 0; j < m; j++ {
				c.Words = append(c.Words, int32(draw(phiCDF[z*v:(z+1)*v], r)))
				if !cfg.WordsOnly {
					d.Z = append(d.Z, int32(z))
				}
			}
			i += m
			if sentences {
				c.UnitStart = append(c.UnitStart, len(c.Words))
			}
		}
		c.DocStart = append(c.DocStart, len(c.Words))
		if sentences {
			c.DocUnit = append(c.DocUnit, len(c.UnitStart)-1)
		}
		c.IDs[doc] = fmt.Sprintf("doc%d", doc)
		c.Labels[doc] = fmt.Sprintf("topic%d", argmax(theta))
	}
	return d, nil
}

// poisson draws from p, guarding against the degenerate rate 0 for which
// gonum's sampler is not defined.
func poisson(p distuv.Poisson) float64 {
	if p.Lambda <= 0 {
		return 0
	}
	return p.Rand()
}

// dirichlet fills dst with a draw from the symmetric Dirichlet(a) by
// normalising independent Gamma(a, 1) draws.
func dirichlet(dst []float64, a float64, r *rand.Rand) {
	g := distuv.Gamma{Alpha: a, Beta: 1, Src: r}
	for {
		var sum float64
		for i := range dst {
			dst[i] = g.Rand()
			sum += dst[i]
		}
		// With a tiny a every draw can underflow to 0 (probability about
		// (1e-3)^len(dst) at a = 0.01); draw again rather than divide by 0.
		if sum > 0 {
			for i := range dst {
				dst[i] /= sum
			}
			return
		}
	}
}

// cumulate writes the running sums of p into cdf.
func cumulate(cdf, p []float64) {
	var s float64
	for i, x := range p {
		s += x
		cdf[i] = s
	}
}

// draw returns an index i with probability proportional to its share of
// the cumulative sums cdf.
func draw(cdf []float64, r *rand.Rand) int {
	u := r.Float64() * cdf[len(cdf)-1]
	i := sort.SearchFloat64s(cdf, u)
	// SearchFloat64s finds the first cdf[i] ≥ u; skip zero-mass entries
	// whose running sum equals u exactly.
	for i < len(cdf)-1 && cdf[i] <= u {
		i++
	}
	return i
}

func argmax(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}
