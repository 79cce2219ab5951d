package lda

import "math"

// jointLogLik returns the collapsed joint log-likelihood log p(w, z) of
// Griffiths and Steyvers (2004), Eq. 2 and 3: the Dirichlet-multinomial
// probability of the topic-word counts c (row-major K×V) under β plus that
// of each document's topic counts under α. For SentenceLDA z and docStart
// index sentences, so the document part counts sentences. Sums run in a fixed
// order.
func jointLogLik(c []float64, k, v int, cfg Config, z []uint16, docStart []int) float64 {
	beta, alpha := cfg.Beta, cfg.Alpha
	lgb, _ := math.Lgamma(beta)
	lgvb, _ := math.Lgamma(float64(v) * beta)
	var ll float64
	for t := 0; t < k; t++ {
		var n float64
		for _, x := range c[t*v : (t+1)*v] {
			if x != 0 {
				lg, _ := math.Lgamma(x + beta)
				ll += lg - lgb
				n += x
			}
		}
		lg, _ := math.Lgamma(n + float64(v)*beta)
		ll += lgvb - lg
	}
	lga, _ := math.Lgamma(alpha)
	lgka, _ := math.Lgamma(float64(k) * alpha)
	cnt := make([]int32, k)
	for d := 0; d+1 < len(docStart); d++ {
		zd := z[docStart[d]:docStart[d+1]]
		for _, t := range zd {
			cnt[t]++
		}
		for _, t := range zd {
			if n := cnt[t]; n != 0 {
				lg, _ := math.Lgamma(float64(n) + alpha)
				ll += lg - lga
				cnt[t] = 0
			}
		}
		lg, _ := math.Lgamma(float64(len(zd)) + float64(k)*alpha)
		ll += lgka - lg
	}
	return ll
}

// LogLikelihood returns the collapsed joint log-likelihood log p(w, z) of
// the current assignments (Griffiths and Steyvers 2004), the usual measure of
// a chain's progress. For a Target the word part uses its Counts.
func (m *MH) LogLikelihood() float64 {
	return jointLogLik(m.TopicWordCounts(), m.k, m.v, m.cfg, m.z, m.docStart)
}
