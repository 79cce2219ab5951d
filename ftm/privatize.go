package ftm

import (
	"context"
	"encoding/binary"
	"fmt"
	"github.com/fedtopic/fedtopic/internal/parallel"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/privacy"
)

// entry is one non-zero entry of a privatized count vector: a word and its
// value in grid steps (value = s·unit).
type entry struct {
	w, s int32
}

// maxProposalWords caps the word proposal of a sentence at its largest
// entries.
const maxProposalWords = 16

// store holds a party's privatized items — tokens (LDA) or sentences
// (SentenceLDA) — in the form the sampler reads: each item's thresholded
// noisy count vector n̂_i, drawn once by privacy.ThresholdedLaplace from
// the stream of its document, and the item's proposal words, derived from
// n̂_i alone.
//
// The vectors of the first blocks, up to the memory budget, are kept in a
// compact encoding of about two bytes per entry; the vectors of the other
// blocks are drawn again from their documents' streams at every visit,
// which reproduces them bit for bit. Every computation the sampler makes
// reads an item only through its vector; the store keeps the words only to
// regenerate the vectors of documents beyond the budget.
type store struct {
	v        int
	unit     float64 // grid step: a value of s steps is s·unit
	docStart []int   // items of document d are [docStart[d], docStart[d+1])
	blocks   []int   // documents of block b are [blocks[b], blocks[b+1])

	// Inputs of regeneration: the corpus, and for sentences the token
	// offsets of every item.
	words     []int32
	itemStart []int // nil for tokens (item i is token i)

	mech   *privacy.ThresholdedLaplace // nil without noise
	noise  privacy.Indexed             // stream of document d: index d
	k0     int32                       // smallest surviving value, in steps
	stored int                         // blocks [0, stored) are kept encoded
	enc    [][]byte                    // enc[b]: the encoding of block b's items, b < stored

	// Proposal words: item i proposes from prop[propStart[i]:propStart[i+1]],
	// or from prop[i] alone when propStart is nil (tokens).
	prop      []int32
	propStart []int32

	entries int64 // total number of entries over all items
	// valueBound is Σ_i max_w n̂_iw in grid steps: no count of a topic and
	// word, and no change of one in a sweep, can exceed it.
	valueBound int64
}

// privatizeConfig is what newStore needs from Config.
type privatizeConfig struct {
	eps, tau    float64
	noNoise     bool
	mech        *privacy.ThresholdedLaplace // the mechanism, or nil to build it from eps and tau
	sentences   bool
	blockSize   int
	noiseMemory int64
	workers     int
}

// newStore privatizes every item of c once, in parallel over blocks of
// documents; document d draws from src's index d under the labels the
// caller gives (through noise), so the result does not depend on the
// number of workers or the storage budget.
func newStore(ctx context.Context, c *corpus.Corpus, pc privatizeConfig, noise privacy.Indexed) (*store, error) {
	st := &store{v: c.V, unit: 1, words: c.Words, noise: noise}
	if pc.sentences {
		st.docStart = c.DocUnit
		st.itemStart = c.UnitStart
	} else {
		st.docStart = c.DocStart
	}
	if !pc.noNoise {
		m := pc.mech
		if m == nil {
			var err error
			if m, err = newMechanism(pc.eps, pc.tau, c.V); err != nil {
				return nil, err
			}
		}
		if m.Config().Vocab != c.V {
			return nil, fmt.Errorf("ftm: privatize: mechanism for %d words, corpus of %d", m.Config().Vocab, c.V)
		}
		st.mech = m
		st.unit = m.Granularity()
		st.k0 = int32(math.Round(m.MinValue() / st.unit))
	}
	st.blocks = makeBlocks(st.docStart, pc.blockSize)
	nb := len(st.blocks) - 1
	// Decide which blocks to keep encoded from the expected size of their
	// encodings, so the decision is made before any noise is drawn.
	st.stored = 0
	var per float64 // expected bytes of an item's encoding
	if st.mech != nil && pc.noiseMemory > 0 {
		per = 2*st.mech.SurvivalProb()*float64(c.V) + 2
		var total float64
		for b := 0; b < nb; b++ {
			items := st.docStart[st.blocks[b+1]] - st.docStart[st.blocks[b]]
			total += per * float64(items)
			if total > float64(pc.noiseMemory) {
				break
			}
			st.stored = b + 1
		}
	}
	type blockOut struct {
		enc     []byte
		prop    []int32
		propLen []int32
		entries int64
		bound   int64
		_       [parallel.CacheGap]byte // neighbouring blocks run on different workers
	}
	outs := make([]blockOut, nb)
	rd := make([]*reader, pc.workers)
	for i := range rd {
		rd[i] = st.newReader()
	}
	err := parallel.Blocks(ctx, pc.workers, nb, func(w, b int) {
		r := rd[w]
		o := &outs[b]
		keep := b < st.stored
		if keep {
			// Sized for the expected encoding with 2% to spare, so that the
			// kept block is not copied while it grows.
			items := st.docStart[st.blocks[b+1]] - st.docStart[st.blocks[b]]
			o.enc = make([]byte, 0, int(1.02*per*float64(items))+64)
		}
		for d := st.blocks[b]; d < st.blocks[b+1]; d++ {
			r.openRegen(d)
			for i := st.docStart[d]; i < st.docStart[d+1]; i++ {
				es := r.regen(i)
				o.entries += int64(len(es))
				var top int32
				for _, e := range es {
					top = max(top, e.s)
				}
				o.bound += int64(top)
				if keep {
					o.enc = st.appendItem(o.enc, es)
				}
				n0 := len(o.prop)
				o.prop = st.appendProposal(o.prop, es)
				o.propLen = append(o.propLen, int32(len(o.prop)-n0))
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("ftm: privatize: %w", err)
	}
	n := st.docStart[len(st.docStart)-1]
	single := true
	for b := range outs {
		for _, l := range outs[b].propLen {
			if l != 1 {
				single = false
			}
		}
	}
	st.enc = make([][]byte, st.stored)
	var propStart []int32
	if !single {
		propStart = make([]int32, 1, n+1)
	}
	for b := range outs {
		o := &outs[b]
		if b < st.stored {
			st.enc[b] = slices.Clip(o.enc)
		}
		st.prop = append(st.prop, o.prop...)
		if !single {
			for _, l := range o.propLen {
				propStart = append(propStart, propStart[len(propStart)-1]+l)
			}
		}
		st.entries += o.entries
		st.valueBound += o.bound
		outs[b] = blockOut{}
	}
	st.propStart = propStart
	return st, nil
}

// newMechanism returns FTM's thresholded Laplace mechanism.
func newMechanism(eps, tau float64, v int) (*privacy.ThresholdedLaplace, error) {
	m, err := privacy.NewThresholdedLaplace(privacy.ThresholdedLaplaceConfig{Epsilon: eps, Threshold: tau, Vocab: v})
	if err != nil {
		return nil, fmt.Errorf("ftm: privatize: %w", err)
	}
	return m, nil
}

// noiseMass returns the expected value an entry with true count 0 adds to
// a privatized vector: q times the mean surviving value, (k₀ + a/(1−a))·g
// for the grid step g, the first surviving step k₀ and the geometric ratio
// a = e^(−ε·g) of the excess.
func noiseMass(m *privacy.ThresholdedLaplace) float64 {
	g := m.Granularity()
	a := math.Exp(-m.Config().Epsilon * g)
	return m.SurvivalProb() * (m.MinValue() + g*a/(1-a))
}

// numItems returns the number of items.
func (st *store) numItems() int { return st.docStart[len(st.docStart)-1] }

// proposal returns item i's proposal words.
func (st *store) proposal(i int) []int32 {
	if st.propStart == nil {
		return st.prop[i : i+1]
	}
	return st.prop[st.propStart[i]:st.propStart[i+1]]
}

// appendProposal appends the proposal words of an item with entries es
// (sorted by word): for a token its largest entry (the lowest word among
// ties) — one true word, so the single most likely one; for a sentence the
// entries above τ + ln(q·V)/ε, the value one noise entry per vector is
// expected to exceed, largest first, at most maxProposalWords and at least
// the largest entry. Without noise a sentence proposes its words.
func (st *store) appendProposal(dst []int32, es []entry) []int32 {
	if len(es) == 0 {
		// Only possible with a threshold so high that the true entries
		// vanish; any word is a valid proposal.
		return append(dst, 0)
	}
	if st.itemStart == nil {
		best := 0
		for j, e := range es {
			if e.s > es[best].s {
				best = j
			}
		}
		return append(dst, es[best].w)
	}
	cut := int32(1)
	if st.mech != nil {
		q := st.mech.SurvivalProb()
		eps := st.mech.Config().Epsilon
		c := st.mech.MinValue() + math.Log(math.Max(q*float64(st.v), 1))/eps
		cut = int32(math.Ceil(c / st.unit))
	}
	sel := make([]entry, 0, maxProposalWords)
	for _, e := range es {
		if e.s >= cut {
			sel = append(sel, e)
		}
	}
	if len(sel) == 0 {
		best := es[0]
		for _, e := range es {
			if e.s > best.s {
				best = e
			}
		}
		sel = append(sel, best)
	}
	slices.SortStableFunc(sel, func(a, b entry) int {
		if a.s != b.s {
			return int(b.s - a.s) // larger first; ties keep word order
		}
		return 0
	})
	if len(sel) > maxProposalWords {
		sel = sel[:maxProposalWords]
	}
	for _, e := range sel {
		dst = append(dst, e.w)
	}
	return dst
}

// appendItem appends the compact encoding of an item's entries (sorted by
// word, every value ≥ k0): the body's length in bytes as a uvarint, then
// per entry the gap to the previous word and the value's excess over k0,
// one byte each when below 255, else the byte 255 and a uvarint of the
// rest. At FTM's settings an entry takes two bytes (a gap of 255 words or
// an excess of 255 grid steps is rare), against eight as (int32, float32).
func (st *store) appendItem(dst []byte, es []entry) []byte {
	body := st.appendBody(nil, es)
	dst = binary.AppendUvarint(dst, uint64(len(body)))
	return append(dst, body...)
}

// appendBody appends the entries of an item without the length prefix.
func (st *store) appendBody(dst []byte, es []entry) []byte {
	prev := int32(-1)
	for _, e := range es {
		gap := uint64(e.w - prev - 1)
		prev = e.w
		if gap < 255 {
			dst = append(dst, byte(gap))
		} else {
			dst = binary.AppendUvarint(append(dst, 255), gap-255)
		}
		x := uint64(e.s - st.k0)
		if x < 255 {
			dst = append(dst, byte(x))
		} else {
			dst = binary.AppendUvarint(append(dst, 255), x-255)
		}
	}
	return dst
}

// bytes returns the memory the store holds beyond the corpus: the compact
// encodings and the proposal words.
func (st *store) bytes() int64 {
	return st.encoded() + 4*int64(len(st.prop)) + 4*int64(len(st.propStart))
}

// encoded returns the bytes of the kept encodings.
func (st *store) encoded() int64 {
	var n int64
	for _, b := range st.enc {
		n += int64(len(b))
	}
	return n
}

// reader reads items, in document order, for one goroutine: each as the
// body of its compact encoding (see appendItem), decoded from the store or
// drawn again and encoded into scratch space.
type reader struct {
	st     *store
	es     []entry
	pe     []privacy.Entry
	counts []privacy.Count
	body   []byte // scratch encoding of a regenerated item
	src    *chacha8.Stream
	r      *rand.Rand
	enc    []byte // remaining encoding of the open block (compact mode)
	redraw bool   // the open block is regenerated, not decoded
	_      [parallel.CacheGap]byte
}

func (st *store) newReader() *reader {
	src := chacha8.New([32]byte{})
	return &reader{st: st, src: src, r: rand.New(src)}
}

// openBlock prepares reading the items of block b from its first document.
func (r *reader) openBlock(b int) {
	st := r.st
	r.redraw = b >= st.stored
	if !r.redraw {
		r.enc = st.enc[b]
	}
}

// openDoc prepares reading the items of document d, which must be the next
// document of the open block.
func (r *reader) openDoc(d int) {
	if r.redraw {
		r.openRegen(d)
	}
}

// openRegen reseeds the stream of document d.
func (r *reader) openRegen(d int) {
	if r.st.mech != nil {
		r.st.noise.Seed(r.src, uint64(d))
	}
}

// next returns the encoded body of item i, the next item of the open
// document; the slice is valid until the next call.
func (r *reader) next(i int) []byte {
	if r.redraw {
		r.body = r.st.appendBody(r.body[:0], r.regen(i))
		return r.body
	}
	n, k := binary.Uvarint(r.enc)
	body := r.enc[k : k+int(n)]
	r.enc = r.enc[k+int(n):]
	return body
}

// decodeBody decodes an item's body into dst[:0].
func (st *store) decodeBody(dst []entry, body []byte) []entry {
	dst = dst[:0]
	w := int32(-1)
	for p := 0; p < len(body); {
		g := int32(body[p])
		p++
		if g == 255 {
			x, n := binary.Uvarint(body[p:])
			g, p = 255+int32(x), p+n
		}
		x := int32(body[p])
		p++
		if x == 255 {
			y, n := binary.Uvarint(body[p:])
			x, p = 255+int32(y), p+n
		}
		w += g + 1
		dst = append(dst, entry{w: w, s: st.k0 + x})
	}
	return dst
}

// regen draws item i's vector from the open document's stream (the
// vectors of a document are drawn in item order from one stream), or
// without noise returns its true counts.
func (r *reader) regen(i int) []entry {
	st := r.st
	es := r.es[:0]
	if st.itemStart == nil { // a token
		w := st.words[i]
		if st.mech == nil {
			r.es = append(es, entry{w: w, s: 1})
			return r.es
		}
		r.pe = st.mech.Draw(r.r, int(w), r.pe)
	} else {
		cs := r.counts[:0]
		for _, w := range st.words[st.itemStart[i]:st.itemStart[i+1]] {
			cs = append(cs, privacy.Count{Word: w, N: 1})
		}
		slices.SortFunc(cs, func(a, b privacy.Count) int { return int(a.Word - b.Word) })
		out := cs[:0]
		for _, c := range cs {
			if len(out) > 0 && out[len(out)-1].Word == c.Word {
				out[len(out)-1].N++
			} else {
				out = append(out, c)
			}
		}
		r.counts = cs
		if st.mech == nil {
			for _, c := range out {
				es = append(es, entry{w: c.Word, s: c.N})
			}
			r.es = es
			return es
		}
		r.pe = st.mech.DrawCounts(r.r, out, r.pe)
	}
	inv := 1 / st.unit
	for _, e := range r.pe {
		es = append(es, entry{w: e.Word, s: int32(float64(e.Value) * inv)})
	}
	r.es = es
	return es
}

// clipCorpus returns c with every document cut to at most maxTokens tokens
// (for sentences: to whole sentences while they fit, and at least the
// first sentence cut to the limit). It returns c itself when nothing is
// cut.
func clipCorpus(c *corpus.Corpus, maxTokens int, sentences bool) *corpus.Corpus {
	if maxTokens <= 0 {
		return c
	}
	long := false
	for d := 0; d < c.NumDocs(); d++ {
		if c.DocStart[d+1]-c.DocStart[d] > maxTokens {
			long = true
			break
		}
	}
	if !long {
		return c
	}
	out := &corpus.Corpus{V: c.V, DocStart: []int{0}, IDs: c.IDs, Labels: c.Labels, Sources: c.Sources, DocSource: c.DocSource}
	if sentences {
		out.UnitStart = []int{0}
		out.DocUnit = []int{0}
	}
	for d := 0; d < c.NumDocs(); d++ {
		if !sentences {
			doc := c.Doc(d)
			out.Words = append(out.Words, doc[:min(len(doc), maxTokens)]...)
		} else {
			first, end := c.DocUnits(d)
			n := 0
			for u := first; u < end; u++ {
				s := c.Unit(u)
				if n+len(s) > maxTokens {
					if n == 0 {
						s = s[:maxTokens]
					} else {
						break
					}
				}
				out.Words = append(out.Words, s...)
				n += len(s)
				out.UnitStart = append(out.UnitStart, len(out.Words))
			}
			out.DocUnit = append(out.DocUnit, len(out.UnitStart)-1)
		}
		out.DocStart = append(out.DocStart, len(out.Words))
	}
	return out
}
