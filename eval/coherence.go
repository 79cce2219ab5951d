package eval

import (
	"fmt"
	"math"
	"strings"

	"github.com/fedtopic/fedtopic/corpus"
)

// DefaultTopN is the number of top words per topic that coherence is
// computed on unless configured otherwise (Mimno et al. 2011 and most
// later work use 10).
const DefaultTopN = 10

// Window names how co-occurrence is counted: two words co-occur when one
// document contains both, wherever they stand in it (no sliding window).
const Window = "document"

// Coherence is a topic-quality score per topic and its mean. For every
// measure a topic's score is the mean over the pairs of its top words (not
// their sum), and Mean is the mean over topics, so that scores compare
// across values of TopN.
type Coherence struct {
	// Mean is the mean of PerTopic over the scored topics.
	Mean float64 `json:"mean"`
	// PerTopic holds each topic's score, the mean over its scored word
	// pairs; 0 for unscored topics.
	PerTopic []float64 `json:"per_topic"`
	// TopN is the number of top words per topic that were paired: a topic
	// has TopN(TopN−1)/2 pairs.
	TopN int `json:"top_n"`
	// Corpus names the corpus the document counts come from, by its input
	// files (corpus.Corpus.Sources, comma-separated); empty for embedding
	// coherence, which counts nothing.
	Corpus string `json:"corpus,omitempty"`
	// Documents is the number of documents of Corpus counted: those with
	// at least one word of the model's vocabulary.
	Documents int `json:"documents,omitempty"`
	// Window is how co-occurrence is counted (the constant Window);
	// empty for embedding coherence.
	Window string `json:"window,omitempty"`
	// Unscored lists the topics with no scorable word pair, left out of
	// Mean (for example, no top word has an embedding).
	Unscored []int `json:"unscored,omitempty"`
	// SkippedPairs counts the word pairs that could not be scored and were
	// left out of their topic's score.
	SkippedPairs int `json:"skipped_pairs,omitempty"`
}

// CorpusName names c for reports: its input files, comma-separated, or
// "unnamed corpus" when it records none.
func CorpusName(c *corpus.Corpus) string {
	if len(c.Sources) == 0 {
		return "unnamed corpus"
	}
	return strings.Join(c.Sources, ", ")
}

// counted fills the fields that say where the counts of a co-occurrence
// measure come from.
func (c *Coherence) counted(topics [][]int32, f *docFreqs, from *corpus.Corpus) {
	c.TopN = topN(topics)
	c.Corpus = CorpusName(from)
	c.Documents = f.docs
	c.Window = Window
}

// topN returns the length of the longest topic list.
func topN(topics [][]int32) int {
	n := 0
	for _, t := range topics {
		n = max(n, len(t))
	}
	return n
}

// finish fills Mean from PerTopic, leaving out the unscored topics.
func (c *Coherence) finish() {
	s, n := 0.0, 0
	j := 0
	for k, x := range c.PerTopic {
		if j < len(c.Unscored) && c.Unscored[j] == k {
			j++
			continue
		}
		s += x
		n++
	}
	if n > 0 {
		c.Mean = s / float64(n)
	}
}

// docFreqs holds the document frequencies of the topics' top words in a
// corpus and the co-document frequencies of the pairs of words that share a
// topic.
type docFreqs struct {
	docs  int
	slot  []int32          // slot[w]: index of word w among the top words, or −1
	df    []int            // df[i]: documents containing top word i
	pairs map[uint64]int32 // pairKey(i, j) → index into co
	co    []int            // documents containing both words of a pair
}

// pairKey is the map key of the unordered pair of top-word slots i, j.
func pairKey(i, j int32) uint64 {
	if i > j {
		i, j = j, i
	}
	return uint64(i)<<32 | uint64(uint32(j))
}

// countDocFreqs counts, in one pass over c, how many documents contain
// each top word of topics and each pair of top words that share a topic.
// Memory is O(V + K·N²) for K topics of N words, whatever the corpus size;
// time is O(tokens + Σ_d Σ_{w in d} partners(w)), where partners(w) is the
// number of top words sharing a topic with w (N−1 per topic w is in).
func countDocFreqs(topics [][]int32, c *corpus.Corpus) (*docFreqs, error) {
	f := &docFreqs{docs: c.NumDocs(), slot: make([]int32, c.V), pairs: make(map[uint64]int32)}
	for w := range f.slot {
		f.slot[w] = -1
	}
	n := int32(0)
	for k, top := range topics {
		for _, w := range top {
			if w < 0 || int(w) >= c.V {
				return nil, fmt.Errorf("topic %d: word id %d outside the corpus vocabulary [0, %d)", k, w, c.V)
			}
			if f.slot[w] < 0 {
				f.slot[w] = n
				n++
			}
		}
	}
	// partners[i] lists (j, pair index) for the words j > i sharing a
	// topic with word i, so that each pair is counted once per document.
	type partner struct{ j, pair int32 }
	partners := make([][]partner, n)
	for _, top := range topics {
		for a := range top {
			for b := range a {
				i, j := f.slot[top[a]], f.slot[top[b]]
				if i == j {
					continue
				}
				key := pairKey(i, j)
				if _, ok := f.pairs[key]; ok {
					continue
				}
				p := int32(len(f.pairs))
				f.pairs[key] = p
				lo, hi := min(i, j), max(i, j)
				partners[lo] = append(partners[lo], partner{hi, p})
			}
		}
	}
	f.df = make([]int, n)
	f.co = make([]int, len(f.pairs))
	seen := make([]int, n) // seen[i] = 1 + last document containing word i
	var present []int32
	for d := range f.docs {
		present = present[:0]
		for i, w := range c.Doc(d) {
			if w < 0 || int(w) >= c.V {
				return nil, fmt.Errorf("%s token %d: word id %d outside the vocabulary [0, %d)", docName(c, d), i, w, c.V)
			}
			if s := f.slot[w]; s >= 0 && seen[s] != d+1 {
				seen[s] = d + 1
				f.df[s]++
				present = append(present, s)
			}
		}
		for _, s := range present {
			for _, p := range partners[s] {
				if seen[p.j] == d+1 {
					f.co[p.pair]++
				}
			}
		}
	}
	return f, nil
}

// pair returns D(a), D(b) and D(a, b) for top words a and b of one topic.
func (f *docFreqs) pair(a, b int32) (da, db, dab int) {
	sa, sb := f.slot[a], f.slot[b]
	da, db = f.df[sa], f.df[sb]
	if sa == sb {
		return da, db, da
	}
	return da, db, f.co[f.pairs[pairKey(sa, sb)]]
}

// UMass returns the UMass coherence of each topic on corpus c (Mimno et
// al. 2011; the measure of the PC-TD paper): for the topic's words
// v_1, …, v_M in rank order, the mean over the M(M−1)/2 pairs l < m of
//
//	log((D(v_m, v_l) + 1) / D(v_l)),
//
// where D counts the documents of c containing the word(s). A topic's score
// is the mean over its pairs, as gensim's CoherenceModel("u_mass") and
// Palmetto report it; Mimno et al. write the sum, which is M(M−1)/2 times
// the mean. It is ≤ 0 up to the +1 smoothing of Mimno et al. (gensim adds
// 10⁻¹² to the joint probability instead) and more negative for less
// coherent topics; Mean is the mean over topics. c is normally the
// training corpus, where every top word occurs; a pair whose conditioning
// word v_l never occurs in c is skipped, counted in SkippedPairs and left
// out of its topic's mean. topics lists word ids in rank order
// (topic.Model.TopWordIDs) and must use c's vocabulary.
func UMass(topics [][]int32, c *corpus.Corpus) (Coherence, error) {
	f, err := countDocFreqs(topics, c)
	if err != nil {
		return Coherence{}, fmt.Errorf("eval: UMass: %w", err)
	}
	res := Coherence{PerTopic: make([]float64, len(topics))}
	for k, top := range topics {
		scored := 0
		for m := 1; m < len(top); m++ {
			for l := range m {
				_, dl, dml := f.pair(top[m], top[l])
				if dl == 0 {
					res.SkippedPairs++
					continue
				}
				res.PerTopic[k] += math.Log(float64(dml+1) / float64(dl))
				scored++
			}
		}
		if scored == 0 {
			res.Unscored = append(res.Unscored, k)
			continue
		}
		res.PerTopic[k] /= float64(scored)
	}
	res.counted(topics, f, c)
	res.finish()
	return res, nil
}

// NPMI returns the normalized pointwise mutual information of each topic on
// the reference corpus ref (Bouma 2009; Lau et al. 2014): the mean over the
// pairs of the topic's words of
//
//	NPMI(a, b) = log(P(a, b) / (P(a) P(b))) / −log P(a, b),
//
// with probabilities estimated by document co-occurrence (Window), P(a) =
// D(a)/N and P(a, b) = D(a, b)/N for the N documents of ref. Conventions at the limits: a pair that never
// co-occurs (including a word absent from ref) scores −1, the limit as
// P(a, b) → 0; a pair present in every document scores 1. Scores lie in
// [−1, 1]; Mean is the average over topics. topics lists word ids in rank
// order (topic.Model.TopWordIDs) and must use ref's vocabulary.
func NPMI(topics [][]int32, ref *corpus.Corpus) (Coherence, error) {
	f, err := countDocFreqs(topics, ref)
	if err != nil {
		return Coherence{}, fmt.Errorf("eval: NPMI: %w", err)
	}
	if f.docs == 0 {
		return Coherence{}, fmt.Errorf("eval: NPMI: the reference corpus has no documents")
	}
	n := float64(f.docs)
	res := Coherence{PerTopic: make([]float64, len(topics))}
	for k, top := range topics {
		s, pairs := 0.0, 0
		for i := 1; i < len(top); i++ {
			for j := range i {
				da, db, dab := f.pair(top[i], top[j])
				pairs++
				switch {
				case dab == 0:
					s += -1
				case dab == f.docs:
					s += 1
				default:
					pab := float64(dab) / n
					s += math.Log(pab/(float64(da)/n*float64(db)/n)) / -math.Log(pab)
				}
			}
		}
		if pairs == 0 {
			res.Unscored = append(res.Unscored, k)
			continue
		}
		res.PerTopic[k] = s / float64(pairs)
	}
	res.counted(topics, f, ref)
	res.finish()
	return res, nil
}

// Diversity returns the topic diversity of Dieng et al. (2020): the number
// of distinct words among all topics' top words divided by the total number
// of top words listed (25·K for the usual top 25). It is 1 when no two
// topics share a top word and 1/K when all topics list the same words.
// It returns 0 for no words.
func Diversity(topics [][]int32) float64 {
	seen := make(map[int32]bool)
	total := 0
	for _, top := range topics {
		for _, w := range top {
			seen[w] = true
		}
		total += len(top)
	}
	if total == 0 {
		return 0
	}
	return float64(len(seen)) / float64(total)
}
