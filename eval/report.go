package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/topic"
)

// DefaultDiversityTopN is the number of top words per topic that topic
// diversity is computed on (Dieng et al. 2020 use 25).
const DefaultDiversityTopN = 25

// Config configures Evaluate. The zero value means the documented
// defaults.
type Config struct {
	// TopN is the number of top words per topic for UMass, NPMI and
	// embedding coherence; 0 means DefaultTopN.
	TopN int `json:"top_n"`
	// DiversityTopN is the number of top words per topic for topic
	// diversity; 0 means DefaultDiversityTopN.
	DiversityTopN int `json:"diversity_top_n"`
	// Infer configures the fold-in sampler that fits θ for perplexity.
	Infer topic.InferConfig `json:"infer"`
}

// Validate reports every invalid field of c, joined with errors.Join.
func (c Config) Validate() error {
	var errs []error
	if c.TopN < 0 || c.TopN == 1 {
		errs = append(errs, fmt.Errorf("eval: top_n = %d, want at least 2 (0 = %d)", c.TopN, DefaultTopN))
	}
	if c.DiversityTopN < 0 {
		errs = append(errs, fmt.Errorf("eval: diversity_top_n = %d, want at least 1 (0 = %d)", c.DiversityTopN, DefaultDiversityTopN))
	}
	errs = append(errs, c.Infer.Validate())
	return errors.Join(errs...)
}

// Data is what Evaluate measures a model on; every field is optional and a
// metric whose data is missing is left out of the Report. Corpora must be
// encoded with the model's vocabulary.
type Data struct {
	Test       *corpus.Corpus // held-out documents: perplexity
	Train      *corpus.Corpus // training documents: UMass coherence
	Reference  *corpus.Corpus // reference documents: NPMI
	Embeddings *Embeddings    // word vectors for the model's vocabulary: embedding coherence
	Planted    []float64      // planted K×V topics of synthetic data: recovery
}

// Report gathers the metrics of one model; it is what `fedtopic eval
// --json` prints. Metrics that were not computed are omitted.
type Report struct {
	Topics             int               `json:"topics"`
	Vocab              int               `json:"vocab"`
	Perplexity         *PerplexityResult `json:"perplexity,omitempty"`
	UMass              *Coherence        `json:"umass,omitempty"`
	NPMI               *Coherence        `json:"npmi,omitempty"`
	EmbeddingCoherence *Coherence        `json:"embedding_coherence,omitempty"`
	Diversity          float64           `json:"topic_diversity"`
	Recovery           *RecoveryResult   `json:"recovery,omitempty"`
	// Warnings are one-line sentences about what makes the numbers hard
	// to read (more topics than words, fewer words than TopN); callers add
	// their own, such as the share of the test set the vocabulary drops.
	Warnings []string `json:"warnings,omitempty"`
}

// Evaluate computes every metric of Report for which data is given, in a
// fixed order, and the topic diversity always. The result is
// deterministic given cfg.Infer.Seed.
func Evaluate(ctx context.Context, m *topic.Model, data Data, cfg Config) (Report, error) {
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	if err := m.Validate(); err != nil {
		return Report{}, fmt.Errorf("eval: %w", err)
	}
	if cfg.TopN == 0 {
		cfg.TopN = DefaultTopN
	}
	if cfg.DiversityTopN == 0 {
		cfg.DiversityTopN = DefaultDiversityTopN
	}
	rep := Report{Topics: m.K, Vocab: m.V, Diversity: Diversity(m.TopWordIDs(cfg.DiversityTopN))}
	if m.K > m.V {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"the model has more topics (K = %d) than vocabulary words (V = %d): topics must share their top words, so coherence and diversity say little; train with fewer topics or a larger vocabulary", m.K, m.V))
	}
	if cfg.TopN > m.V && (data.Train != nil || data.Reference != nil || data.Embeddings != nil) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"coherence pairs the top %d words of each topic, but the vocabulary has only %d: every topic is scored on all %d words", cfg.TopN, m.V, m.V))
	}
	if cfg.DiversityTopN >= m.V && m.K > 1 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"topic diversity counts the top %d words of each topic, but the vocabulary has only %d: every topic lists all of them, so diversity is 1/K = %.4f whatever the topics", cfg.DiversityTopN, m.V, 1/float64(m.K)))
	}
	top := m.TopWordIDs(cfg.TopN)
	if data.Test != nil {
		p, err := Perplexity(ctx, m, data.Test, cfg.Infer)
		if err != nil {
			return Report{}, err
		}
		rep.Perplexity = &p
	}
	if data.Train != nil {
		c, err := UMass(top, data.Train)
		if err != nil {
			return Report{}, err
		}
		rep.UMass = &c
	}
	if data.Reference != nil {
		c, err := NPMI(top, data.Reference)
		if err != nil {
			return Report{}, err
		}
		rep.NPMI = &c
	}
	if data.Embeddings != nil {
		c, err := EmbeddingCoherence(top, data.Embeddings)
		if err != nil {
			return Report{}, err
		}
		rep.EmbeddingCoherence = &c
	}
	if data.Planted != nil {
		r, err := Recovery(data.Planted, m.Phi, m.K, m.V)
		if err != nil {
			return Report{}, err
		}
		rep.Recovery = &r
	}
	return rep, nil
}

// WriteTable writes r as a table of metric, value and, for coherence, what
// the value is: the human-readable form of `fedtopic eval`. Warnings are
// not written; the caller shows them.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	g := func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
	row := func(name, value string, note ...string) {
		fmt.Fprintf(tw, "%s\t%s", name, value)
		for _, n := range note {
			fmt.Fprintf(tw, "\t%s", n)
		}
		fmt.Fprintln(tw)
	}
	row("topics", strconv.Itoa(r.Topics))
	row("vocabulary", strconv.Itoa(r.Vocab))
	if p := r.Perplexity; p != nil {
		row("perplexity", g(p.Perplexity))
		row("held-out log-likelihood", g(p.LogLikelihood))
		row("held-out tokens", strconv.Itoa(p.HeldOutTokens))
	}
	if c := r.UMass; c != nil {
		row("UMass coherence", g(c.Mean), c.perPair()+"; document counts from "+c.source())
	}
	if c := r.NPMI; c != nil {
		row("NPMI", g(c.Mean), c.perPair()+"; reference corpus "+c.source())
	}
	if c := r.EmbeddingCoherence; c != nil {
		row("embedding coherence", g(c.Mean), c.perPair())
	}
	row("topic diversity", g(r.Diversity))
	if rc := r.Recovery; rc != nil {
		row("recovered topics", fmt.Sprintf("%d of %d (Hellinger < %g)", rc.Recovered, len(rc.Assign), RecoveryThreshold))
		row("mean Hellinger distance", g(rc.Mean))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("eval: write table: %w", err)
	}
	return nil
}

// perPair says how c's mean is made, for WriteTable.
func (c *Coherence) perPair() string {
	pairs := c.TopN * (c.TopN - 1) / 2
	s := fmt.Sprintf("mean per pair of top-%d words (%d pairs per topic), averaged over topics", c.TopN, pairs)
	if pairs == 1 {
		s = fmt.Sprintf("score of the pair of top-%d words, averaged over topics", c.TopN)
	}
	if n := len(c.Unscored); n > 0 {
		s += fmt.Sprintf(" (%d unscored topics left out)", n)
	}
	return s
}

// source names the corpus c's counts come from, for WriteTable.
func (c *Coherence) source() string {
	return fmt.Sprintf("%s (%d documents; two words co-occur when one document holds both)", c.Corpus, c.Documents)
}
