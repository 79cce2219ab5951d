package lda

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/hugepage"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/topic"
)

// Gibbs is the exact collapsed Gibbs sampler of Griffiths and Steyvers,
// "Finding scientific topics", PNAS 101 (2004): θ and Φ integrated out,
// every topic drawn from its full conditional in O(K),
//
//	p(z_i = k | z_−i) ∝ (C_dk^(−i) + α)·(C_kw^(−i) + β)/(C_k^(−i) + Vβ),
//
// and for SentenceLDA the sentence-level conditional of Balikas, Amini and
// Clausel (SIGIR 2016), where a sentence s of words w_1..w_n takes topic k with
// probability ∝ (C_dk^(−s) + α)·Π_j (C_kw_j^(−s) + β + m_j)/Π_{j<n} (C_k^(−s) + Vβ + j),
// m_j counting earlier copies of w_j in s. It is the reference the MH sampler
// is tested against. Exact Gibbs updates are sequential, so it runs on one
// goroutine whatever cfg.Workers says.
type Gibbs struct {
	cfg       Config
	k, v      int
	words     []int32
	docStart  []int // items (tokens or sentences) of each document
	unitStart []int // tokens of each sentence (SentenceLDA), nil for LDA
	tokens    int
	z         []uint16
	nkw       []int32 // C_kw at nkw[w*K+k]
	nk        []int32
	iter      int
	cnt       []int32   // C_d· of the current document
	p         []float64 // cumulative weights
	seen      []int32   // copies of each word in the current sentence
}

// NewGibbs returns a collapsed Gibbs sampler for cfg.Model on c, with the
// same uniform initial topics as NewMH for the same seed and block size.
func NewGibbs(c *corpus.Corpus, cfg Config) (*Gibbs, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	slda := cfg.Model == ModelSLDA
	if err := checkCorpus(c, slda); err != nil {
		return nil, err
	}
	g := &Gibbs{
		cfg: cfg, k: cfg.K, v: c.V, words: c.Words, docStart: c.DocStart, tokens: c.NumTokens(),
		nkw: hugepage.Make[int32](cfg.K * c.V), nk: make([]int32, cfg.K),
		cnt: make([]int32, cfg.K), p: make([]float64, cfg.K),
	}
	if slda {
		g.docStart, g.unitStart = c.DocUnit, c.UnitStart
		g.seen = make([]int32, c.V)
	}
	g.z = make([]uint16, g.docStart[len(g.docStart)-1])
	blocks := makeBlocks(g.docStart, cfg.BlockSize)
	for b := 0; b+1 < len(blocks); b++ {
		r := rng.Derive(cfg.Seed, "lda", "init", b)
		for i := g.docStart[blocks[b]]; i < g.docStart[blocks[b+1]]; i++ {
			g.z[i] = uint16(r.Uint64N(uint64(g.k)))
		}
	}
	for i, t := range g.z {
		for _, w := range g.itemWords(i) {
			g.nkw[int(w)*g.k+int(t)]++
			g.nk[t]++
		}
	}
	return g, nil
}

// itemWords returns the words of item i: a token or a sentence.
func (g *Gibbs) itemWords(i int) []int32 {
	if g.unitStart == nil {
		return g.words[i : i+1]
	}
	return g.words[g.unitStart[i]:g.unitStart[i+1]]
}

// Run runs iterations sweeps, calling progress (if not nil) after each with
// the sweeps and tokens done in this call. Sweep t draws from
// rng.Derive(seed, "lda", "gibbs", t). ctx is checked every 1024 documents.
func (g *Gibbs) Run(ctx context.Context, iterations int, progress func(iter, tokensDone int)) error {
	for it := 1; it <= iterations; it++ {
		r := rng.Derive(g.cfg.Seed, "lda", "gibbs", g.iter)
		for d := 0; d+1 < len(g.docStart); d++ {
			if d%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("lda: iteration %d: %w", g.iter+1, err)
				}
			}
			g.sampleDoc(d, r)
		}
		g.iter++
		if progress != nil {
			progress(it, it*g.tokens)
		}
	}
	return nil
}

// sampleDoc resamples every item of document d.
func (g *Gibbs) sampleDoc(d int, r *rand.Rand) {
	k := g.k
	alpha, beta := g.cfg.Alpha, g.cfg.Beta
	vb := float64(g.v) * beta
	zd := g.z[g.docStart[d]:g.docStart[d+1]]
	for _, t := range zd {
		g.cnt[t]++
	}
	for i := range zd {
		item := g.docStart[d] + i
		words := g.itemWords(item)
		cur := int(zd[i])
		g.cnt[cur]--
		for _, w := range words {
			g.nkw[int(w)*k+cur]--
		}
		g.nk[cur] -= int32(len(words))
		var sum float64
		if g.unitStart == nil {
			col := g.nkw[int(words[0])*k : int(words[0])*k+k]
			for t := range k {
				sum += (float64(g.cnt[t]) + alpha) * (float64(col[t]) + beta) / (float64(g.nk[t]) + vb)
				g.p[t] = sum
			}
		} else {
			sum = g.sentenceWeights(words, alpha, beta, vb)
		}
		u := r.Float64() * sum
		t := 0
		for t < k-1 && g.p[t] <= u {
			t++
		}
		zd[i] = uint16(t)
		g.cnt[t]++
		for _, w := range words {
			g.nkw[int(w)*k+t]++
		}
		g.nk[t] += int32(len(words))
	}
	for _, t := range zd {
		g.cnt[t] = 0
	}
}

// sentenceWeights fills g.p with the cumulative unnormalised conditional of
// a sentence, computed in log space and scaled by its maximum, and returns
// the total.
func (g *Gibbs) sentenceWeights(words []int32, alpha, beta, vb float64) float64 {
	k := g.k
	lp := g.p
	for t := range k {
		lp[t] = math.Log(float64(g.cnt[t]) + alpha)
	}
	for j, w := range words {
		m := float64(g.seen[w])
		g.seen[w]++
		col := g.nkw[int(w)*k : int(w)*k+k]
		for t := range k {
			lp[t] += math.Log(float64(col[t])+beta+m) - math.Log(float64(g.nk[t])+vb+float64(j))
		}
	}
	for _, w := range words {
		g.seen[w] = 0
	}
	top := math.Inf(-1)
	for _, x := range lp {
		top = max(top, x)
	}
	var sum float64
	for t, x := range lp {
		sum += math.Exp(x - top)
		lp[t] = sum
	}
	return sum
}

// Iteration returns the number of sweeps done so far.
func (g *Gibbs) Iteration() int { return g.iter }

// Assignments returns the topic of every item (token, or sentence for
// SentenceLDA) as a read-only view.
func (g *Gibbs) Assignments() []uint16 { return g.z }

// DocTopicCounts returns C_d·: how many items of document d have each topic.
func (g *Gibbs) DocTopicCounts(d int) []int32 {
	return docTopicCounts(g.z[g.docStart[d]:g.docStart[d+1]], g.k)
}

// TopicWordCounts returns C_kw, row-major K×V.
func (g *Gibbs) TopicWordCounts() []float64 {
	c := make([]float64, g.k*g.v)
	for w := 0; w < g.v; w++ {
		for t := 0; t < g.k; t++ {
			c[t*g.v+w] = float64(g.nkw[w*g.k+t])
		}
	}
	return c
}

// Model returns the posterior-mean estimate φ_kw = (C_kw + β)/(C_k + Vβ)
// with α, β and provenance filled in and Vocab left nil.
func (g *Gibbs) Model() *topic.Model {
	return g.modelOf(posteriorPhi(g.nkw, g.k, g.v, 1, g.cfg.Beta), 1)
}

// newSum returns an empty sum of the chain's posterior means, made on one
// goroutine like the chain.
func (g *Gibbs) newSum() *posteriorSum { return newPosteriorSum(g.k, g.v, 1, g.cfg.Beta) }

// addState adds the posterior mean of Φ given the current counts to ps.
func (g *Gibbs) addState(ps *posteriorSum) { addState(ps, g.nkw) }

// modelOf returns the model of phi, an average over the chain's last
// average states.
func (g *Gibbs) modelOf(phi []float64, average int) *topic.Model {
	return newModel(phi, g.k, g.v, g.cfg, g.iter, average)
}

// LogLikelihood returns the collapsed joint log-likelihood log p(w, z).
func (g *Gibbs) LogLikelihood() float64 {
	return jointLogLik(g.TopicWordCounts(), g.k, g.v, g.cfg, g.z, g.docStart)
}
