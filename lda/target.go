package lda

// Target is the per-item likelihood of the partially collapsed MH sampler,
// the part that differs between plain LDA, SentenceLDA and FTM's privatized
// tokens. The sampler keeps one topic z_i per item i (a token, a sentence, a
// privatized token) and samples it from
//
//	π(z_i = k) ∝ (C_dk^(−i) + α) · exp(LogLik(Φ, i, k)),
//
// where C_dk counts the items of document d with topic k. Its word proposal
// picks one of ProposalWords(i) uniformly and then a topic from that word's
// column of Φ; the acceptance uses the exact mixture proposal density.
//
// A Target is called from several goroutines at once, each for different
// items, and must not change during a sweep.
type Target interface {
	// LogLik returns the log-likelihood of item i's words under topic k
	// with the topic-word matrix phi, up to a constant that does not depend
	// on k. It may be −Inf; it must not be NaN or +Inf.
	LogLik(phi *Phi, i, k int) float64
	// ProposalWords returns the words whose Φ columns, mixed with equal
	// weights, form the word proposal of item i; never empty. Repeating a
	// word gives it more weight. The sampler does not modify the slice.
	ProposalWords(i int) []int32
	// AddCounts adds item i's contribution to the topic-word statistic
	// from which the next Φ is drawn: for each word w of the item,
	// c.Add(k, w, n_iw).
	AddCounts(i, k int, c *Counts)
}

// Counts is the topic-word statistic C of a chain with a Target, stored
// word-major: C_kw is Data[w*K+k].
type Counts struct {
	K, V int
	Data []float64
}

// Add adds x to C_kw.
func (c *Counts) Add(k, w int, x float64) { c.Data[w*c.K+k] += x }

// At returns C_kw.
func (c *Counts) At(k, w int) float64 { return c.Data[w*c.K+k] }

// sentenceTarget is SentenceLDA's likelihood: item u is a sentence (unit)
// whose words all share one topic, so LogLik is Σ_{w ∈ u} log φ_kw, summed
// in log space so long sentences do not underflow. The word proposal mixes
// the columns of all the sentence's words.
type sentenceTarget struct {
	words     []int32
	unitStart []int
}

func (s *sentenceTarget) LogLik(phi *Phi, u, k int) float64 {
	row := phi.LogRow(k)
	var ll float64
	for _, w := range s.words[s.unitStart[u]:s.unitStart[u+1]] {
		ll += float64(row[w])
	}
	return ll
}

func (s *sentenceTarget) ProposalWords(u int) []int32 {
	return s.words[s.unitStart[u]:s.unitStart[u+1]]
}

func (s *sentenceTarget) AddCounts(u, k int, c *Counts) {
	for _, w := range s.words[s.unitStart[u]:s.unitStart[u+1]] {
		c.Data[int(w)*c.K+k]++
	}
}
