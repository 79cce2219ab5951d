package topic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/parallel"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// Default inference settings (see InferConfig).
const (
	DefaultInferSweeps = 40
	// InferBlockDocs is how many documents share one random stream. The
	// split into blocks is fixed, so the worker count never changes θ.
	InferBlockDocs = 256
)

// InferConfig configures fold-in inference of document-topic proportions θ
// with Φ fixed. The zero value means the documented defaults.
type InferConfig struct {
	// Sweeps is the number of Gibbs sweeps over each document; 0 means
	// DefaultInferSweeps.
	Sweeps int `json:"sweeps"`
	// BurnIn is the number of initial sweeps whose states are not averaged;
	// 0 means Sweeps/4. It must be less than Sweeps.
	BurnIn int `json:"burn_in"`
	// Alpha, if positive, replaces the model's α with a symmetric prior of
	// this value per topic. 0 uses the model's Alpha, or 1/K per topic (the
	// gensim and scikit-learn default) for a model without one.
	Alpha float64 `json:"alpha"`
	// Seed determines the random streams; documents in block b draw from
	// rng.Derive(Seed, "infer", b).
	Seed uint64 `json:"seed"`
	// Workers is the number of goroutines; 0 means runtime.GOMAXPROCS(0).
	// It changes only the speed, never the result.
	Workers int `json:"workers"`
}

// Validate reports every invalid field of c, joined with errors.Join.
func (c InferConfig) Validate() error {
	var errs []error
	if c.Sweeps < 0 {
		errs = append(errs, fmt.Errorf("topic: infer: sweeps = %d, want ≥ 0 (0 = %d)", c.Sweeps, DefaultInferSweeps))
	}
	if c.BurnIn < 0 {
		errs = append(errs, fmt.Errorf("topic: infer: burn-in = %d, want ≥ 0", c.BurnIn))
	}
	if c.Sweeps >= 0 && c.BurnIn > 0 && c.BurnIn >= c.withDefaults().Sweeps {
		errs = append(errs, fmt.Errorf("topic: infer: burn-in = %d, want fewer than the %d sweeps", c.BurnIn, c.withDefaults().Sweeps))
	}
	if !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0) {
		errs = append(errs, fmt.Errorf("topic: infer: alpha = %v, want finite and ≥ 0", c.Alpha))
	}
	if c.Workers < 0 {
		errs = append(errs, fmt.Errorf("topic: infer: workers = %d, want ≥ 0", c.Workers))
	}
	return errors.Join(errs...)
}

// withDefaults returns c with zero fields replaced by their defaults.
func (c InferConfig) withDefaults() InferConfig {
	if c.Sweeps == 0 {
		c.Sweeps = DefaultInferSweeps
	}
	if c.BurnIn == 0 {
		c.BurnIn = c.Sweeps / 4
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	return c
}

// Infer estimates θ for every document of docs with Φ fixed, by fold-in
// collapsed Gibbs sampling: each token's topic is resampled from
// p(z = k) ∝ (C_dk + α_k) · φ_kw, where C_dk counts the document's other
// tokens assigned to k. The first sweep assigns tokens in order, each given
// the ones before it; after cfg.BurnIn sweeps the state of every sweep is
// averaged, θ_dk = mean over kept sweeps of (C_dk + α_k) / (N_d + Σα).
//
// The result is row-major D×K: θ_dk at d·K + k, each row summing to 1. A
// document with no tokens, and tokens of words that every topic gives zero
// probability, contribute nothing, so an empty document gets θ = α/Σα.
// Word ids must lie in [0, V); docs should be encoded with m.Vocab.
//
// Documents are processed in fixed blocks of InferBlockDocs, each with its
// own stream rng.Derive(cfg.Seed, "infer", block), so the result depends
// only on m, docs and cfg, not on cfg.Workers. Besides θ, Infer holds the
// columns of Φ for the distinct words docs use (at most K·V floats), so
// each token's loop reads K contiguous values. m must be valid (Load and
// ReadJSON guarantee it); Infer panics if Phi's shape disagrees with K and
// V.
func (m *Model) Infer(ctx context.Context, docs *corpus.Corpus, cfg InferConfig) ([]float64, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if m.K < 1 || m.V < 1 || len(m.Phi) != m.K*m.V || (len(m.Alpha) != 0 && len(m.Alpha) != m.K) {
		panic(fmt.Sprintf("topic: infer: model shape K = %d, V = %d, len(Phi) = %d, len(Alpha) = %d", m.K, m.V, len(m.Phi), len(m.Alpha)))
	}
	k := m.K
	alpha := make([]float64, k)
	for t := range alpha {
		switch {
		case cfg.Alpha > 0:
			alpha[t] = cfg.Alpha
		case len(m.Alpha) == k:
			alpha[t] = m.Alpha[t]
		default:
			alpha[t] = 1 / float64(k)
		}
	}
	cols, index, err := m.columns(docs)
	if err != nil {
		return nil, err
	}
	smooth := smoothing(cols, alpha)
	nd := docs.NumDocs()
	theta := make([]float64, nd*k)
	nblocks := (nd + InferBlockDocs - 1) / InferBlockDocs
	workers := max(1, min(cfg.Workers, nblocks))
	folds := make([]*foldIn, workers) // scratch of each worker, made on first use
	err = parallel.Blocks(ctx, workers, nblocks, func(w, b int) {
		if folds[w] == nil {
			folds[w] = newFoldIn(k, alpha, cols, smooth, cfg)
		}
		f := folds[w]
		f.r = rng.Derive(cfg.Seed, "infer", b)
		for d := b * InferBlockDocs; d < min(nd, (b+1)*InferBlockDocs); d++ {
			f.doc(docs.Doc(d), index, theta[d*k:(d+1)*k])
		}
	})
	if err != nil {
		return nil, fmt.Errorf("topic: infer: %w", err)
	}
	return theta, nil
}

// columns checks the word ids of docs and gathers the columns of Φ for the
// words they use: index[w] is the compact id of word w (−1 if unused) and
// cols[j·K + k] = φ_k,w for the word w with compact id j. A word that every
// topic gives zero probability gets compact id −2.
func (m *Model) columns(docs *corpus.Corpus) (cols []float64, index []int32, err error) {
	index = make([]int32, m.V)
	for w := range index {
		index[w] = -1
	}
	nd := docs.NumDocs()
	var used []int32
	for d := range nd {
		for i, w := range docs.Doc(d) {
			if w < 0 || int(w) >= m.V {
				name := fmt.Sprintf("document %d", d)
				if d < len(docs.IDs) && docs.IDs[d] != "" {
					name = fmt.Sprintf("document %d (%s)", d, docs.IDs[d])
				}
				return nil, nil, fmt.Errorf("topic: infer: %s token %d: word id %d outside the model's vocabulary [0, %d)", name, i, w, m.V)
			}
			if index[w] == -1 {
				index[w] = int32(len(used))
				used = append(used, w)
			}
		}
	}
	k := m.K
	cols = make([]float64, 0, len(used)*k)
	next := int32(0)
	for _, w := range used {
		s := 0.0
		for t := range k {
			s += m.Phi[t*m.V+int(w)]
		}
		if s == 0 {
			index[w] = -2
			continue
		}
		index[w] = next
		next++
		for t := range k {
			cols = append(cols, m.Phi[t*m.V+int(w)])
		}
	}
	return cols, index, nil
}

// foldIn is one worker's scratch space for fold-in Gibbs sampling.
//
// The conditional p(z = t) ∝ (C_dt + α_t)·φ_tw splits into a document part
// C_dt·φ_tw, non-zero only for the topics the document currently uses
// (kept in nz), and a smoothing part α_t·φ_tw whose total smooth[j] is
// fixed per word. A draw costs O(|nz|), plus O(log K) when it lands in the
// smoothing part, where a binary search over precomputed cumulative sums
// costs O(log K) — the sparse decomposition of Yao, Mimno and McCallum,
// "Efficient methods for topic model inference on streaming document
// collections", KDD 2009. It samples the exact conditional.
type foldIn struct {
	k        int
	alpha    []float64
	alphaSum float64
	cols     []float64 // φ columns of the used words, K each
	smooth   []float64 // smooth[j·K + t] = Σ_{t' ≤ t} α_t'·φ_t',w for compact word id j
	sweeps   int
	burnIn   int
	cnt, acc []float64 // C_d· of the current state; its sum over kept sweeps
	nz       []int32   // topics with cnt > 0, in no particular order
	pos      []int32   // pos[t]: index of t in nz
	cum      []float64 // cumulative document-part masses over nz
	words    []int32   // compact ids of the document's usable tokens
	z        []int32   // topic of each usable token
	r        *rand.Rand
}

func newFoldIn(k int, alpha, cols, smooth []float64, cfg InferConfig) *foldIn {
	s := 0.0
	for _, a := range alpha {
		s += a
	}
	return &foldIn{
		k: k, alpha: alpha, alphaSum: s, cols: cols, smooth: smooth, sweeps: cfg.Sweeps, burnIn: cfg.BurnIn,
		cnt: make([]float64, k), acc: make([]float64, k), pos: make([]int32, k),
		nz: make([]int32, 0, k), cum: make([]float64, k),
	}
}

// smoothing returns, for every used word, the cumulative sums over topics
// of α_t·φ_t,w, K per word; the last is the smoothing part's total.
func smoothing(cols, alpha []float64) []float64 {
	k := len(alpha)
	out := make([]float64, len(cols))
	for j := 0; j < len(cols); j += k {
		s := 0.0
		for t, p := range cols[j : j+k] {
			s += alpha[t] * p
			out[j+t] = s
		}
	}
	return out
}

// doc samples one document and writes its θ estimate to theta.
func (f *foldIn) doc(doc []int32, index []int32, theta []float64) {
	f.words = f.words[:0]
	for _, w := range doc {
		if j := index[w]; j >= 0 {
			f.words = append(f.words, j)
		}
	}
	n := len(f.words)
	f.z = append(f.z[:0], make([]int32, n)...)
	clear(f.cnt)
	clear(f.acc)
	f.nz = f.nz[:0]
	k := f.k
	alpha, cnt, cum := f.alpha[:k], f.cnt[:k], f.cum[:k]
	for s := range f.sweeps {
		for i, j := range f.words {
			if s > 0 {
				if t := f.z[i]; cnt[t] == 1 {
					cnt[t] = 0
					f.remove(t)
				} else {
					cnt[t]--
				}
			}
			col := f.cols[int(j)*k : int(j)*k+k]
			mass := 0.0
			for q, t := range f.nz {
				mass += cnt[t] * col[t]
				cum[q] = mass
			}
			sm := f.smooth[int(j)*k : int(j)*k+k]
			u := f.r.Float64() * (mass + sm[k-1])
			var t int32
			if u < mass {
				q := 0
				for cum[q] <= u {
					q++
				}
				t = f.nz[q]
			} else {
				// Smoothing part: the first topic whose cumulative α_t·φ_tw
				// exceeds the remainder (binary search; topics of zero mass
				// repeat their predecessor's sum and are never chosen).
				u -= mass
				lo, hi := 0, k-1
				for lo < hi {
					mid := int(uint(lo+hi) >> 1)
					if sm[mid] > u {
						hi = mid
					} else {
						lo = mid + 1
					}
				}
				t = int32(lo)
			}
			if cnt[t] == 0 {
				f.pos[t] = int32(len(f.nz))
				f.nz = append(f.nz, t)
			}
			cnt[t]++
			f.z[i] = t
		}
		if s >= f.burnIn {
			for _, t := range f.nz {
				f.acc[t] += cnt[t]
			}
		}
	}
	kept := float64(f.sweeps - f.burnIn)
	den := float64(n) + f.alphaSum
	for t := range theta {
		theta[t] = (f.acc[t]/kept + alpha[t]) / den
	}
}

// remove deletes topic t from nz by moving the last entry into its place.
func (f *foldIn) remove(t int32) {
	i, last := f.pos[t], f.nz[len(f.nz)-1]
	f.nz[i] = last
	f.pos[last] = i
	f.nz = f.nz[:len(f.nz)-1]
}
