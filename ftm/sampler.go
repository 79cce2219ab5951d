package ftm

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/internal/alias"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/parallel"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// chain is the private Metropolis–Hastings sampler of one party
// (FTM Algorithm 1, iFTM Algorithm 2; docs/methods.md): partially
// collapsed, θ integrated out and Φ explicit. Item i (a token, or a
// sentence for SentenceLDA) of document d has the target
//
//	π(z_i = k) ∝ (C_dk^(−i) + α) · exp(Σ_w n̂_iw · log φ_kw),
//
// where n̂_i is the item's privatized vector. Each of the MH steps of a
// sweep makes two proposals:
//
//   - the word proposal: a word w drawn uniformly from the item's proposal
//     words (derived from n̂_i; see store.appendProposal), then a topic
//     from q_w(t) = φ_tw/Σ_j φ_jw by an alias table; with the mixture
//     q(t) = (1/m)·Σ_w q_w(t) it is independent of the current topic s, so
//     the acceptance is min(1, π(t)q(s)/(π(s)q(t)));
//   - the document proposal: with probability n/(n + Kα) the topic of a
//     uniformly chosen item of the document (item i included, at s), else a
//     uniform topic, so q(t | s) ∝ C_dt^(−i) + [t = s] + α and for t ≠ s the
//     acceptance is min(1, exp(ℓ_i(t) − ℓ_i(s))), ℓ_i(k) = Σ_w n̂_iw log φ_kw.
//
// Both leave π invariant (TestChainStationary checks the chain against
// exact enumeration). All proposals of an item's sweep are drawn first —
// none depends on the current topic except through the document proposal's
// "item i itself", which is a move to the current topic and so no move — and
// ℓ_i is evaluated for the distinct proposed topics in a single pass over
// n̂_i, which is read once per sweep; the same pass order gives the same
// value of ℓ_i(k) however many topics are evaluated with it.
//
// After a sweep the topic-word statistic C_kw = Σ_{i: z_i = k} n̂_iw has
// been summed in integer grid steps, per worker, so the merge is exact
// and does not depend on which worker sampled which block. The next
// iteration draws φ_k ~ Dirichlet(C_k· + β) (Eq. 7).
type chain struct {
	k, v    int
	alpha   float64
	beta    float64
	steps   int
	workers int
	seed    uint64
	labels  []any // stream labels of this chain ("ftm", "party", p)
	st      *store
	z       []uint16
	phi     *phi
	c       []int64   // C_kw in grid steps at k*v+w, from the last sweep
	nk      []int64   // items per topic in the last sweep
	sub     []float64 // debiasing: expected noise mass per word of topic k; nil when off
	debias  float64   // expected noise mass per word and item (0: off)
	// debiasDraw applies the debiasing before the Dirichlet draws too,
	// not only to the local model.
	debiasDraw bool
	// narrow keeps the workers' partial counts in 32 bits: no sum of item
	// values can overflow them (store.valueBound < 2³¹), and they take half
	// the memory traffic.
	narrow bool
	sw     []*sweeper
}

// sweeper is the scratch space of one goroutine of a sweep.
type sweeper struct {
	src  *chacha8.Stream
	rd   *reader
	cnt  []int32   // C_d· of the document being sampled
	c    []int64   // this worker's part of C_kw (or of its change)
	c32  []int32   // the same in 32 bits, when every sum fits (narrow)
	nk   []int64   // this worker's part of the items per topic
	prop []int     // proposals of the current item: word, document per step
	cand []int     // distinct proposed topics, the current one first
	ll   []float64 // ℓ_i of each candidate
	_    [parallel.CacheGap]byte
}

// newChain returns a chain over the items of st with k topics; debias is
// the expected noise mass per word and item to subtract (0: none).
func newChain(st *store, k int, alpha, beta float64, steps, workers int, seed uint64, labels []any, debias float64) *chain {
	ch := &chain{
		k: k, v: st.v, alpha: alpha, beta: beta, steps: steps, workers: workers,
		seed: seed, labels: labels, st: st, debias: debias,
		z:   make([]uint16, st.numItems()),
		phi: newPhi(k, st.v, st.prop),
		c:   make([]int64, k*st.v),
		nk:  make([]int64, k),
	}
	ch.narrow = st.valueBound < math.MaxInt32
	for range workers {
		sw := &sweeper{
			src: chacha8.New([32]byte{}), rd: st.newReader(),
			cnt: parallel.Padded[int32](k), nk: parallel.Padded[int64](k),
			prop: parallel.Padded[int](2 * steps), cand: parallel.Padded[int](2*steps + 1)[:0], ll: parallel.Padded[float64](2*steps + 1),
		}
		if ch.narrow {
			sw.c32 = make([]int32, k*st.v)
		} else {
			sw.c = make([]int64, k*st.v)
		}
		ch.sw = append(ch.sw, sw)
	}
	return ch
}

// key returns the stream key of one unit of work.
func (ch *chain) key(labels ...any) [32]byte {
	return rng.Key(ch.seed, append(append([]any(nil), ch.labels...), labels...)...)
}

// initUniform gives every item a uniform topic (block b of round r draws
// from the stream (labels, "round", r, "init", b)) and counts.
func (ch *chain) initUniform(ctx context.Context, round int) error {
	k := uint64(ch.k)
	blocks := ch.st.blocks
	err := parallel.Blocks(ctx, ch.workers, len(blocks)-1, func(w, b int) {
		src := ch.sw[w].src
		src.Seed(ch.key("round", round, "init", b))
		r := rand.New(src)
		for i := ch.st.docStart[blocks[b]]; i < ch.st.docStart[blocks[b+1]]; i++ {
			ch.z[i] = uint16(r.Uint64N(k))
		}
	})
	if err != nil {
		return err
	}
	return ch.sweep(ctx, round, 0, countOnly)
}

// reinit draws every item's topic from the word proposal of the current Φ
// alone (a proposal word chosen uniformly, then its column), as FTM does
// after the coordinator sends a composed local model. Block b of round r
// draws from (labels, "round", r, "reinit", b). It does not count: the next
// sweep does.
func (ch *chain) reinit(ctx context.Context, round int) error {
	blocks := ch.st.blocks
	return parallel.Blocks(ctx, ch.workers, len(blocks)-1, func(w, b int) {
		src := ch.sw[w].src
		src.Seed(ch.key("round", round, "reinit", b))
		for i := ch.st.docStart[blocks[b]]; i < ch.st.docStart[blocks[b+1]]; i++ {
			pw := ch.st.proposal(i)
			wd := pw[0]
			if len(pw) > 1 {
				wd = pw[uniformN(src, len(pw))]
			}
			ch.z[i] = uint16(ch.phi.drawProposal(src, wd))
		}
	})
}

// drawPhi draws Φ from the counts of the last sweep (debiased when
// debiasDraw is set).
func (ch *chain) drawPhi(ctx context.Context, round, iter int) error {
	var sub []float64
	if ch.debiasDraw {
		sub = ch.subtrahend()
	}
	return ch.phi.draw(ctx, ch.workers, ch.c, ch.st.unit, sub, ch.beta, ch.seed,
		append(append([]any(nil), ch.labels...), "round", round, "iter", iter))
}

// rebias returns rows (distributions) with the expected noise floor of this
// party's counts added back: r ↦ (1 − V·f)·r + f, where f = Σ_k n_k·m /
// Σ_k C_k is the share of each word in the noise mass of the last sweep's
// counts (m the noise mass per word and item). It undoes the debiasing of
// the local model for a composed model about to serve as Φ.
func (ch *chain) rebias(rows []float64) []float64 {
	var noise, total float64
	for t := 0; t < ch.k; t++ {
		noise += float64(ch.nk[t]) * ch.debias
		for _, x := range ch.c[t*ch.v : (t+1)*ch.v] {
			total += ch.st.unit * float64(x)
		}
	}
	if !(total > 0) {
		return rows
	}
	f := math.Min(noise/total, 1/float64(ch.v))
	out := make([]float64, len(rows))
	a := 1 - float64(ch.v)*f
	for i, x := range rows {
		out[i] = a*x + f
	}
	return out
}

// subtrahend returns the debiasing amounts per topic, nk·debias, or nil.
func (ch *chain) subtrahend() []float64 {
	if ch.debias == 0 {
		return nil
	}
	if ch.sub == nil {
		ch.sub = make([]float64, ch.k)
	}
	for t, n := range ch.nk {
		ch.sub[t] = float64(n) * ch.debias
	}
	return ch.sub
}

// Kinds of sweep.
const (
	countOnly   = iota // count the current topics; sample nothing
	sampleFull         // sample, then count every item afresh
	sampleDelta        // sample, and move the counts of the items that changed topic
)

// sweep samples every item once with the current Φ (or only counts) and
// leaves C and the items per topic in ch.c and ch.nk. A sampleDelta sweep
// needs ch.c and ch.nk to match the topics before it: it reads an item's
// vector again only to move it between two rows of C when the item changed
// topic, which after burn-in is a few percent of the items. Block b of
// round r, iteration it draws from the stream (labels, "round", r,
// "sweep", it, b).
func (ch *chain) sweep(ctx context.Context, round, iter int, mode int) error {
	for _, sw := range ch.sw {
		clear(sw.c)
		clear(sw.c32)
		clear(sw.nk)
	}
	blocks := ch.st.blocks
	err := parallel.Blocks(ctx, ch.workers, len(blocks)-1, func(w, b int) {
		var key [32]byte
		if mode != countOnly {
			key = ch.key("round", round, "sweep", iter, b)
		}
		ch.sweepBlock(ch.sw[w], b, key, mode)
	})
	if err != nil {
		return err
	}
	// Merge the workers' counts or changes (integers: exact in any
	// order), topics in parallel.
	k, v := ch.k, ch.v
	_ = parallel.Blocks(context.Background(), ch.workers, k, func(_, t int) {
		row := ch.c[t*v : (t+1)*v]
		if mode != sampleDelta {
			clear(row)
		}
		for _, sw := range ch.sw {
			if ch.narrow {
				for w, x := range sw.c32[t*v : (t+1)*v] {
					row[w] += int64(x)
				}
			} else {
				for w, x := range sw.c[t*v : (t+1)*v] {
					row[w] += x
				}
			}
		}
	})
	for t := range ch.nk {
		if mode != sampleDelta {
			ch.nk[t] = 0
		}
		for _, sw := range ch.sw {
			ch.nk[t] += sw.nk[t]
		}
	}
	return nil
}

// sweepBlock samples (or only counts) the items of block b.
func (ch *chain) sweepBlock(sw *sweeper, b int, key [32]byte, mode int) {
	st := ch.st
	rd := sw.rd
	rd.openBlock(b)
	sw.src.Seed(key)
	v := ch.v
	cnt := sw.cnt
	kAlpha := float64(ch.k) * ch.alpha
	for d := st.blocks[b]; d < st.blocks[b+1]; d++ {
		rd.openDoc(d)
		s, e := st.docStart[d], st.docStart[d+1]
		zd := ch.z[s:e]
		for _, t := range zd {
			cnt[t]++
		}
		n := float64(len(zd))
		for j := range zd {
			body := rd.next(s + j)
			old := int(zd[j])
			cur := old
			if mode != countOnly {
				cnt[cur]--
				cur = ch.sampleItem(sw, body, st.proposal(s+j), zd, j, cur, n, n+kAlpha)
				zd[j] = uint16(cur)
				cnt[cur]++
			}
			k0 := int64(st.k0)
			switch {
			case mode != sampleDelta && ch.narrow:
				scatter(body, k0, sw.c32[cur*v:(cur+1)*v], nil)
				sw.nk[cur]++
			case mode != sampleDelta:
				scatter(body, k0, sw.c[cur*v:(cur+1)*v], nil)
				sw.nk[cur]++
			case cur != old && ch.narrow:
				scatter(body, k0, sw.c32[cur*v:(cur+1)*v], sw.c32[old*v:(old+1)*v])
				sw.nk[cur]++
				sw.nk[old]--
			case cur != old:
				scatter(body, k0, sw.c[cur*v:(cur+1)*v], sw.c[old*v:(old+1)*v])
				sw.nk[cur]++
				sw.nk[old]--
			}
		}
		for _, t := range zd {
			cnt[t] = 0
		}
	}
}

// scatter adds an item's vector (encoded body, values k0 + excess) to row
// add and, unless sub is nil, subtracts it from row sub, in grid steps.
func scatter[T int32 | int64](body []byte, k0 int64, add, sub []T) {
	w := -1
	var x float64
	for p := 0; p+1 < len(body); {
		if g, y := body[p], body[p+1]; g != 255 && y != 255 {
			w, x, p = w+int(g)+1, float64(y), p+2
		} else {
			w, x, p = nextEscaped(body, p, w)
		}
		s := T(k0 + int64(x))
		add[w] += s
		if sub != nil {
			sub[w] -= s
		}
	}
}

// sampleItem runs the MH steps of item j of a document (topics zd, n items,
// n + Kα total proposal mass) whose encoded vector is body, from topic cur,
// with the document's counts excluding the item in sw.cnt; it returns the
// new topic.
func (ch *chain) sampleItem(sw *sweeper, body []byte, pw []int32, zd []uint16, j, cur int, n, total float64) int {
	src := sw.src
	p := ch.phi
	k, alpha := ch.k, ch.alpha
	prop := sw.prop
	cand := append(sw.cand[:0], cur)
	for s := 0; s < ch.steps; s++ {
		w := pw[0]
		if len(pw) > 1 {
			w = pw[uniformN(src, len(pw))]
		}
		tw := p.drawProposal(src, w)
		cand = addCandidate(cand, tw)
		td := -1 // the item itself: a move to the current topic
		if u := unit(src.Uint64()) * total; u < n {
			if q := int(u); q != j {
				td = int(zd[q])
			}
		} else {
			td = min(int((u-n)/alpha), k-1)
		}
		if td >= 0 {
			cand = addCandidate(cand, td)
		}
		prop[2*s], prop[2*s+1] = tw, td
	}
	sw.cand = cand
	if len(cand) == 1 {
		return cur
	}
	ll := sw.ll[:len(cand)]
	ch.logLiks(body, cand, ll)
	cnt := sw.cnt
	llCur := ll[0]
	for s := 0; s < ch.steps; s++ {
		if t := prop[2*s]; t != cur {
			llT := ll[candidateIndex(cand, t)]
			r := (float64(cnt[t]) + alpha) / (float64(cnt[cur]) + alpha) *
				p.mixture(pw, cur) / p.mixture(pw, t)
			if accept(src, r, llT, llCur) {
				cur, llCur = t, llT
			}
		}
		if t := prop[2*s+1]; t >= 0 && t != cur {
			llT := ll[candidateIndex(cand, t)]
			if accept(src, 1, llT, llCur) {
				cur, llCur = t, llT
			}
		}
	}
	return cur
}

// addCandidate appends t to cand unless it is there.
func addCandidate(cand []int, t int) []int {
	for _, c := range cand {
		if c == t {
			return cand
		}
	}
	return append(cand, t)
}

// candidateIndex returns the index of t in cand, which holds it.
func candidateIndex(cand []int, t int) int {
	for i, c := range cand {
		if c == t {
			return i
		}
	}
	panic("ftm: topic without a likelihood")
}

// accept decides a Metropolis–Hastings move whose acceptance ratio is
// r·exp(llT − llCur). A move out of a state of probability zero (llCur =
// −Inf) is taken whenever the new state has positive probability.
func accept(src *chacha8.Stream, r, llT, llCur float64) bool {
	if math.IsInf(llCur, -1) {
		return !math.IsInf(llT, -1)
	}
	r *= math.Exp(llT - llCur)
	return r >= 1 || unit(src.Uint64()) < r
}

// logLiks sets ll[c] = ℓ(cand[c]) = Σ_e n̂_e · log φ_{cand[c], w_e} for the
// encoded vector body, decoding it once for up to three topics at a time;
// each sum runs in entry order, so a topic's value does not depend on the
// other candidates.
func (ch *chain) logLiks(body []byte, cand []int, ll []float64) {
	v := ch.v
	lr := ch.phi.logRow
	u := ch.st.unit
	k0 := float64(ch.st.k0)
	for c := 0; c < len(cand); {
		switch len(cand) - c {
		case 1:
			ll[c] = u * sum1(body, k0, lr[cand[c]*v:(cand[c]+1)*v])
			c++
		case 2:
			a, b := sum2(body, k0, lr[cand[c]*v:(cand[c]+1)*v], lr[cand[c+1]*v:(cand[c+1]+1)*v])
			ll[c], ll[c+1] = u*a, u*b
			c += 2
		default:
			a, b, d := sum3(body, k0, lr[cand[c]*v:(cand[c]+1)*v], lr[cand[c+1]*v:(cand[c+1]+1)*v], lr[cand[c+2]*v:(cand[c+2]+1)*v])
			ll[c], ll[c+1], ll[c+2] = u*a, u*b, u*d
			c += 3
		}
	}
}

// The loops below decode an item's entries inline: the common entry is two
// plain bytes (gap, value in steps above k0); an escaped one is decoded by
// nextEscaped.

// nextEscaped decodes the entry at body[p:] after word w, with an escaped
// gap or value: it returns the entry's word, its value in steps above k0,
// and the position after it.
func nextEscaped(body []byte, p, w int) (int, float64, int) {
	g := int(body[p])
	p++
	if g == 255 {
		x, n := binary.Uvarint(body[p:])
		g, p = 255+int(x), p+n
	}
	x := float64(body[p])
	p++
	if x == 255 {
		y, n := binary.Uvarint(body[p:])
		x, p = 255+float64(y), p+n
	}
	return w + g + 1, x, p
}

// sum1 returns Σ_e s_e·r[w_e] over the entries of body (values in steps).
func sum1(body []byte, k0 float64, r []float32) float64 {
	var a float64
	w := -1
	var x float64
	for p := 0; p+1 < len(body); {
		if g, y := body[p], body[p+1]; g != 255 && y != 255 {
			w, x, p = w+int(g)+1, float64(y), p+2
		} else {
			w, x, p = nextEscaped(body, p, w)
		}
		a += (k0 + x) * float64(r[w])
	}
	return a
}

// sum2 is sum1 for two rows in one pass.
func sum2(body []byte, k0 float64, r0, r1 []float32) (float64, float64) {
	var a0, a1 float64
	w := -1
	var x float64
	for p := 0; p+1 < len(body); {
		if g, y := body[p], body[p+1]; g != 255 && y != 255 {
			w, x, p = w+int(g)+1, float64(y), p+2
		} else {
			w, x, p = nextEscaped(body, p, w)
		}
		s := k0 + x
		a0 += s * float64(r0[w])
		a1 += s * float64(r1[w])
	}
	return a0, a1
}

// sum3 is sum1 for three rows in one pass.
func sum3(body []byte, k0 float64, r0, r1, r2 []float32) (float64, float64, float64) {
	var a0, a1, a2 float64
	w := -1
	var x float64
	for p := 0; p+1 < len(body); {
		if g, y := body[p], body[p+1]; g != 255 && y != 255 {
			w, x, p = w+int(g)+1, float64(y), p+2
		} else {
			w, x, p = nextEscaped(body, p, w)
		}
		s := k0 + x
		a0 += s * float64(r0[w])
		a1 += s * float64(r1[w])
		a2 += s * float64(r2[w])
	}
	return a0, a1, a2
}

// rows returns the local model M̂_p: row k is C_k· (debiased when asked)
// plus β, divided by its sum — the topic-normalized counts, smoothed like
// the posterior mean of φ_k so that no word has probability zero (β is
// negligible against the noise mass of privatized counts).
func (ch *chain) rows() []float64 {
	k, v := ch.k, ch.v
	out := make([]float64, k*v)
	sub := ch.subtrahend()
	for t := 0; t < k; t++ {
		row := out[t*v : (t+1)*v]
		var s float64
		for w, x := range ch.c[t*v : (t+1)*v] {
			y := ch.st.unit * float64(x)
			if sub != nil {
				y = math.Max(0, y-sub[t])
			}
			row[w] = y + ch.beta
			s += row[w]
		}
		for w := range row {
			row[w] /= s
		}
	}
	return out
}

// unit maps a 64-bit word to a uniform float64 in [0, 1) on a 2⁻⁵³ grid.
func unit(x uint64) float64 { return float64(x>>11) * 0x1p-53 }

// uniformN returns a uniform integer in [0, n) for 0 < n < 2³² by Lemire's
// multiply-shift method with rejection.
func uniformN(src *chacha8.Stream, n int) int {
	bound := alias.LemireBound(n)
	for {
		m := (src.Uint64() >> 32) * uint64(n)
		if uint32(m) >= bound {
			return int(m >> 32)
		}
	}
}

// makeBlocks cuts the documents into blocks of whole documents holding at
// least size items each (the last may hold fewer); an empty corpus is one
// empty block.
func makeBlocks(docStart []int, size int) []int {
	blocks := []int{0}
	d := len(docStart) - 1
	for i := 1; i <= d; i++ {
		if docStart[i]-docStart[blocks[len(blocks)-1]] >= size || i == d {
			blocks = append(blocks, i)
		}
	}
	if d == 0 {
		blocks = append(blocks, 0)
	}
	return blocks
}
