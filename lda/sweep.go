package lda

import (
	"math"
	"slices"
	"unsafe"

	"github.com/fedtopic/fedtopic/internal/alias"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/prefetch"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// The MH steps of one item i with current topic s in document d, target
// π(k) ∝ (C_dk^(−i) + α)·L_i(k) (L_i(k) = φ_kw for a token of word w):
//
//   - Word proposal q_w(t) ∝ φ_tw over the topics of w's table (those with
//     φ_tw ≥ cut_w, see proposalCut), independent of s, so the acceptance
//     is min(1, π(t)q(s) / (π(s)q(t))), which for a token is
//     (C_dt^(−i) + α)/(C_ds^(−i) + α) when s is in the table and 0 when it
//     is not. For a Target with proposal words w_1..w_m, q is the mixture
//     (1/m)·Σ_j q_{w_j} and enters the ratio exactly.
//   - Document proposal q(t | s) ∝ C_dt^(−i) + [t = s] + α: pick one of
//     the document's n items uniformly (item i included, at s) with
//     probability n/(n + Kα) and take its topic, else a uniform topic. The
//     reverse move has q(s | t) ∝ C_ds^(−i) + α, so for t ≠ s the count
//     factors cancel and the acceptance is min(1, L_i(t)/L_i(s)).
//
// Each of the cfg.MHSteps steps makes one word proposal and one document
// proposal. Both kernels leave π invariant; TestMHStationary checks it
// against exact enumeration.

// unit maps a 64-bit word to a uniform float64 in [0, 1) on a 2⁻⁵³ grid.
func unit(x uint64) float64 { return float64(x>>11) * 0x1p-53 }

// firstAbove returns the index of the first of the running sums ps (non-
// decreasing, not negative, held as their bits) that exceeds u ≥ 0, or
// len(ps) when none does. It counts the sums at most u with integer
// arithmetic — the bits of non-negative floats order like them — where a
// branch on each comparison would be mispredicted.
func firstAbove(ps []uint64, u float64) int {
	ub := math.Float64bits(u)
	j := 0
	for _, x := range ps {
		j += int((x - ub - 1) >> 63)
	}
	return j
}

// unit32 maps 32 bits to a uniform float64 in [0, 1) on a 2⁻³² grid.
func unit32(x uint32) float64 { return float64(x) * 0x1p-32 }

// sweepBlockLDA samples the tokens of block b with the plain-LDA loop:
// documents of at most Config.ExactLen tokens by exact draws (exactDoc),
// longer ones by MH steps. The MH loop has no
// interface calls, no atomic operations, doc-topic counts in a K-vector
// built per document, and no data-dependent branches — acceptances are
// conditional moves — so the processor can overlap the cache misses of
// successive tokens instead of losing them to mispredictions. A step draws
// three 64-bit words: the word proposal's slot (high half) and coin (low
// half); the word acceptance (low half) and the document proposal (high
// half); and the document acceptance. Uniforms on a 2⁻³² grid move a
// probability by less than 2⁻³².
func (m *MH) sweepBlockLDA(sw *sweepWorker, blk int) {
	src := sw.src
	src.Seed(rng.Key(m.cfg.Seed, "lda", "sweep", m.iter, blk))
	k := m.k
	alpha := m.alpha
	invAlpha := 1 / alpha
	kAlpha := float64(k) * alpha
	steps := m.cfg.MHSteps
	col, words, sparse := m.phi.col, m.phi.words, m.phi.sparse
	cnt := sw.cnt[:k]
	exactLen := m.cfg.ExactLen
	end := m.docStart[m.blocks[blk+1]]
	spread := m.wordsAhead
	per := 3 * steps
	var ring []uint64
	if spread {
		ring = sw.mhRing(per)
	}
	for d := m.blocks[blk]; d < m.blocks[blk+1]; d++ {
		s, e := m.docStart[d], m.docStart[d+1]
		zd := m.z[s:e]
		wd := m.words[s:e]
		wd = wd[:len(zd)]
		if len(zd) <= exactLen {
			ah := m.withNext(m.aheadOf(s, end), d, m.blocks[blk+1], exactLen)
			m.phi.exactDoc(src, zd, wd, alpha, ah, cnt, &sw.dt)
			continue
		}
		for _, t := range zd {
			cnt[t]++
		}
		n := float64(len(zd))
		last := len(zd) - 1
		total := n + kAlpha
		ah := m.aheadOf(s, end)
		// When the columns are too long for prefetchToken to take in
		// whole, the steps' words are drawn mhDrawAhead tokens ahead, into
		// ring, and the lines the steps will read prefetched from them
		// (see mhDrawAhead).
		if spread {
			for j := range min(mhDrawAhead, len(zd)) {
				m.drawAhead(src, ring, per, zd, wd, j, total, n)
			}
		}
		for i, w := range wd {
			m.phi.prefetchToken(ah, i)
			if spread {
				if j := i + mhDrawAhead; j < len(zd) {
					m.drawAhead(src, ring, per, zd, wd, j, total, n)
				}
				if j := i + 1; j < len(zd) {
					m.phi.prefetchWordProposals(ring[(j&mhRingMask)*per:][:per], int(wd[j]))
				}
			}
			cur := int(zd[i])
			cnt[cur]--
			base := int(w) * k
			cw := col[base : base+k]
			wt := words[w]
			tw := sparse[int(w)/phiBlock][wt.off : wt.off+wt.n]
			n64, lem, cut := uint64(wt.n), wt.lemK, wt.cut
			var r []uint64
			if spread {
				r = ring[(i&mhRingMask)*per:][:per]
			}
			for st := range steps {
				// Word proposal: slot from the high half, coin from the
				// low half. The proposal is ∝ φ_tw on the table's topics,
				// so the acceptance is (C_dt^(−i)+α)/(C_ds^(−i)+α) when cur
				// is in the table and 0 when it is not. When t is cur,
				// accepting changes nothing.
				var x, y, u3 uint64
				if spread {
					x, y, u3 = r[3*st], r[3*st+1], r[3*st+2]
				} else {
					x = src.Uint64()
				}
				mm := (x >> 32) * n64
				for uint32(mm) < lem {
					x = src.Uint64()
					mm = (x >> 32) * n64
				}
				en := tw[mm>>32]
				t := int(en.alias)
				if uint32(x) < en.thresh {
					t = int(en.topic)
				}
				if !spread {
					y, u3 = src.Uint64(), src.Uint64()
				}
				a, b := float64(cnt[t])+alpha, float64(cnt[cur])+alpha
				if unit32(uint32(y))*b < a && cw[cur] >= cut {
					cur = t
				}
				zd[i] = uint16(cur)
				// Document proposal: a uniform position among the n items
				// (item i at cur) or, past n, a uniform topic; accept with
				// φ_tw/φ_sw.
				u := unit32(uint32(y>>32)) * total
				tDoc := int(zd[min(int(u), last)])
				tPrior := min(max(int((u-n)*invAlpha), 0), k-1)
				t = tPrior
				if u < n {
					t = tDoc
				}
				if unit(u3)*float64(cw[cur]) < float64(cw[t]) {
					cur = t
				}
				zd[i] = uint16(cur)
			}
			cnt[cur]++
		}
		for _, t := range zd {
			cnt[t] = 0
		}
	}
}

// mhDrawAhead is how many tokens ahead of the one it samples the MH loop
// of a long document draws a token's words, and mhRingMask+1 the tokens
// whose words it holds: the token sampled and the mhDrawAhead after it.
//
// A step's reads land at random in Φ and the proposal tables: the table
// entry at the word proposal's slot, and the column entries at the two
// proposals' topics. Their addresses follow from the step's words, so
// drawing those words ahead lets the loop prefetch the reads: when it
// samples token i, it draws the words of token i + mhDrawAhead and
// prefetches its table entries and the column entries at its document
// proposals' topics (drawAhead; a proposal among the document's tokens
// takes the topic the token has then), and reads the table entries of
// token i + 1 to prefetch the column entries at its word proposals' topics
// (prefetchWordProposals). Tokens take the stream's words in the same
// order as when each drew its own, so the chain is the same. Only a slot
// rejected by Lemire's method (probability below n/2³² for a table of n
// entries) draws its next word later, when its token is sampled, and the
// chain then continues on other words. On the kernel's documentation
// (bench/kernel_docs.py, K = 1000, one worker) MH iterations with MH steps
// everywhere ran 1.29–1.43× as fast (4 alternated pairs), and 1.00–1.11×
// with the default ExactLen. Where the columns fit prefetchToken whole
// (K ≤ 160) the steps draw their words themselves: at K = 50 the words
// in the ring, even unprefetched, ran 0.77–0.98× as fast (6 pairs).
const (
	mhDrawAhead = 2
	mhRingMask  = 3
)

// mhRing returns the worker's ring of drawn words, per for each of
// mhRingMask+1 tokens.
func (sw *sweepWorker) mhRing(per int) []uint64 {
	n := (mhRingMask + 1) * per
	if len(sw.ring) < n {
		sw.ring = make([]uint64, n)
	}
	return sw.ring[:n]
}

// drawAhead draws the words of the MH steps of token j of a long document
// (zd, wd: its topics and words; n tokens, total = n + Kα) into ring, and
// prefetches the proposal-table entries at its word proposals' slots and
// the column entries at its document proposals' topics.
func (m *MH) drawAhead(src *chacha8.Stream, ring []uint64, per int, zd []uint16, wd []int32, j int, total, n float64) {
	r := ring[(j&mhRingMask)*per:][:per]
	for i := range r {
		r[i] = src.Uint64()
	}
	p := m.phi
	k := m.k
	w := int(wd[j])
	wt := &p.words[w]
	tw := p.sparse[w/phiBlock][wt.off : wt.off+wt.n]
	col := p.col[w*k : (w+1)*k]
	last := len(zd) - 1
	for st := 0; st < per; st += 6 {
		// Two steps a call: the second repeats the first when it is the
		// last step.
		st2 := min(st+3, per-3)
		slot := func(x uint64) unsafe.Pointer { return unsafe.Pointer(&tw[((x>>32)*uint64(wt.n))>>32]) }
		topic := func(y uint64) unsafe.Pointer {
			u := unit32(uint32(y>>32)) * total
			t := min(max(int((u-n)/m.alpha), 0), k-1)
			if u < n {
				t = int(zd[min(int(u), last)])
			}
			return unsafe.Pointer(&col[t])
		}
		prefetch.Lines(slot(r[st]), slot(r[st2]), topic(r[st+1]), topic(r[st2+1]))
	}
}

// prefetchWordProposals prefetches, from the drawn words r of a token of
// word w (see drawAhead, which prefetched the table entries), the column
// entries at its word proposals' topics.
func (p *Phi) prefetchWordProposals(r []uint64, w int) {
	k := p.K
	wt := &p.words[w]
	tw := p.sparse[w/phiBlock][wt.off : wt.off+wt.n]
	col := p.col[w*k : (w+1)*k]
	topic := func(x uint64) unsafe.Pointer {
		en := tw[((x>>32)*uint64(wt.n))>>32]
		t := en.alias
		if uint32(x) < en.thresh {
			t = en.topic
		}
		return unsafe.Pointer(&col[t])
	}
	for st := 0; st < len(r); st += 12 {
		a := topic(r[st])
		b, c, d := a, a, a
		if st+3 < len(r) {
			b = topic(r[st+3])
		}
		if st+6 < len(r) {
			c = topic(r[st+6])
		}
		if st+9 < len(r) {
			d = topic(r[st+9])
		}
		prefetch.Lines(a, b, c, d)
	}
}

// sweepBlockTarget samples the items of block b through the Target.
func (m *MH) sweepBlockTarget(sw *sweepWorker, blk int) {
	src := sw.src
	src.Seed(rng.Key(m.cfg.Seed, "lda", "sweep", m.iter, blk))
	k := m.k
	alpha := m.alpha
	kAlpha := float64(k) * alpha
	p := m.phi
	tg := m.target
	cnt := sw.cnt[:k]
	for d := m.blocks[blk]; d < m.blocks[blk+1]; d++ {
		s, e := m.docStart[d], m.docStart[d+1]
		zd := m.z[s:e]
		for _, t := range zd {
			cnt[t]++
		}
		n := float64(len(zd))
		total := n + kAlpha
		for i := range zd {
			item := s + i
			cur := int(zd[i])
			cnt[cur]--
			llCur := tg.LogLik(p, item, cur)
			pw := tg.ProposalWords(item)
			for range m.cfg.MHSteps {
				// Word proposal from the mixture of the proposal words'
				// columns.
				w := int(pw[0])
				if len(pw) > 1 {
					w = int(pw[uniformN(src, len(pw))])
				}
				t := p.drawWordSrc(src, w)
				if t != cur {
					llT := tg.LogLik(p, item, t)
					r := (float64(cnt[t]) + alpha) / (float64(cnt[cur]) + alpha) *
						math.Exp(llT-llCur) * p.mixture(pw, cur) / p.mixture(pw, t)
					if r >= 1 || unit(src.Uint64()) < r {
						cur, llCur = t, llT
						zd[i] = uint16(t)
					}
				}
				// Document proposal.
				u := unit(src.Uint64()) * total
				if u < n {
					t = int(zd[int(u)])
				} else {
					t = min(int((u-n)/alpha), k-1)
				}
				if t != cur {
					llT := tg.LogLik(p, item, t)
					r := math.Exp(llT - llCur)
					if r >= 1 || unit(src.Uint64()) < r {
						cur, llCur = t, llT
						zd[i] = uint16(t)
					}
				}
			}
			cnt[cur]++
		}
		for _, t := range zd {
			cnt[t] = 0
		}
	}
}

// mixture returns Σ_{w ∈ words} q_w(k), proportional to the mixture word
// proposal's probability of topic k.
func (p *Phi) mixture(words []int32, k int) float64 {
	var q float64
	for _, w := range words {
		q += p.proposalProb(int(w), k)
	}
	return q
}

// uniformN returns a uniform integer in [0, n) for 0 < n < 2³², by
// Lemire's multiply-shift method with rejection.
func uniformN(src *chacha8.Stream, n int) int {
	bound := alias.LemireBound(n)
	for {
		m := (src.Uint64() >> 32) * uint64(n)
		if uint32(m) >= bound {
			return int(m >> 32)
		}
	}
}

// drawWordSrc draws a topic from w's proposal table.
func (p *Phi) drawWordSrc(src *chacha8.Stream, w int) int {
	for {
		if t, ok := p.drawWord(w, src.Uint64()); ok {
			return t
		}
	}
}

// exactDoc replaces the topic of every token of one document, in order, by
// an exact draw from its conditional given Φ,
//
//	π(k) ∝ (C_dk^(−i) + α)·φ_kw = Σ_{j≠i} [z_j = k]·φ_kw + α·φ_kw,
//
// a mixture of a document part and a prior part α·φ_kw. The document part
// is summed over the other tokens, one term φ_{z_j w} each, in a document
// of fewer than exactListLen tokens, and over the document's distinct
// topics, C_dk^(−i)·φ_kw each, in a longer one (dt, with their counts in
// cnt, which must be all zero on entry and are again on return). The prior
// part is the word's proposal table (mass M_w) plus the entries left out of
// it (mass R_w), drawn by a scan of the column in the order R_w was summed
// in (finishBlock): the topics t with t%8 = 0 in topic order, then those
// with t%8 = 1, and so on, so the scan's running sum ends exactly at R_w.
// One uniform u on a 2⁻⁵³ grid picks the part and the topic: in the
// document part, the first term whose running sum exceeds u, found without
// a branch to mispredict (firstAbove) — on WordNet glosses (K = 50, from
// random topics) that made MH iterations 1.02–1.51× as fast (median of 8
// alternated pairs 1.18). The table draws one more 64-bit word. A word
// whose column is all zero (beyond the reach of a Dirichlet draw) leaves
// the topic unchanged: its conditional is 0 everywhere. While it samples
// token i it prefetches the columns and tables of the tokens ahead (see
// ahead).
func (p *Phi) exactDoc(src *chacha8.Stream, zd []uint16, wd []int32, alpha float64, ah ahead, cnt []int32, dt *docTopics) {
	k := p.K
	// terms are the topics of the document part's terms: the tokens' own,
	// or the distinct ones with room for one new topic per token, listed
	// without a branch (see docTopics.count).
	list := len(zd) >= exactListLen
	terms, n := zd, len(zd)
	if list {
		dt.count(zd, cnt)
		n = len(dt.topics)
		terms = slices.Grow(dt.topics, len(zd))
		terms = terms[:cap(terms)]
	}
	sums := slices.Grow(dt.sums[:0], len(terms))[:len(terms)]
	listed := dt.listed
	// When a column is too long for prefetchToken to take in whole (see
	// columnSpan), the reads of the document part at the document's topics
	// would miss the caches: prefetch those entries of the columns
	// prefetchAhead/2 tokens ahead.
	// The next document's first tokens are prefetched while this one's
	// last are sampled, when the sweep passes it in ah.
	spread := uintptr(k)*unsafe.Sizeof(p.col[0]) > maxWholeColumn
	if spread {
		for _, w := range wd[:min(prefetchAhead/2, len(wd))] {
			prefetch.Entries32(unsafe.Pointer(&p.col[int(w)*k]), terms[:n])
		}
	}
	for i, w := range wd {
		p.prefetchToken(ah, i)
		if j := i + prefetchAhead/2; spread {
			if j < len(wd) {
				prefetch.Entries32(unsafe.Pointer(&p.col[int(wd[j])*k]), terms[:n])
			} else if j -= len(wd); j < len(ah.nextW) {
				prefetch.Entries32(unsafe.Pointer(&p.col[int(ah.nextW[j])*k]), ah.nextZ)
			}
		}
		base := int(w) * k
		cw := p.col[base : base+k]
		cur := zd[i]
		// ps[j]: the document part's running sum up to term j, with token
		// i left out. Over the tokens, token i's sum repeats the one
		// before, so it is never drawn.
		ps := sums[:n]
		var dm float64
		if list {
			cnt[cur]--
			for j, t := range terms[:n] {
				dm += float64(cnt[t]) * float64(cw[t])
				ps[j] = math.Float64bits(dm)
			}
		} else {
			for j, t := range zd[:i] {
				dm += float64(cw[t])
				ps[j] = math.Float64bits(dm)
			}
			ps[i] = math.Float64bits(dm)
			for j, t := range zd[i+1:] {
				dm += float64(cw[t])
				ps[i+1+j] = math.Float64bits(dm)
			}
		}
		wt := &p.words[w]
		tm, rm := wt.mass, wt.rest
		u := unit(src.Uint64()) * (dm + alpha*(tm+rm))
		switch {
		case u < dm:
			cur = terms[firstAbove(ps, u)]
		case tm+rm == 0:
			// All-zero column: π is 0 everywhere; keep the topic.
		default:
			if v := (u-dm)/alpha - tm; v < 0 || rm == 0 {
				cur = uint16(p.drawWordSrc(src, int(w)))
			} else {
				pick, _ := scanRest(cw, wt.cut, v)
				cur = uint16(pick)
			}
		}
		zd[i] = cur
		if list {
			cnt[cur]++
			terms[n] = cur
			n += int(1 - listed[cur])
			listed[cur] = 1
		}
	}
	dt.sums = sums
	if list {
		dt.topics = terms[:n]
		dt.clear(cnt)
	}
}

// exactListLen is the length from which exactDoc sums a document's part
// over its distinct topics instead of its tokens. Fewer terms outweigh the
// upkeep of the list and the counts in longer documents only: on GCIDE's
// entries (bench/gcide_entries.py, K = 50, one worker) 8 and 32 made MH
// iterations 0.95–1.05× and 0.77–1.00× as fast as 16 (4 alternated pairs
// each); in CPU profiles of two rounds, exactDoc took 2.71/2.37 s from 16,
// 2.76/2.74 s from 24, 2.68/3.02 s from 32 and 3.33/3.66 s with tokens
// only, and on WordNet's glosses 1.36/1.42, 1.58/1.82, 1.50/1.62 and
// 1.44/1.53 s.
const exactListLen = 16

// scanRest returns the first topic, in the order of R_w (see exactDoc),
// among the entries of the column cw left out of its table (0 < y < cut) at
// which their running sum exceeds v, or the last one when none does, and
// the sum of all of them, which is R_w to the bit.
func scanRest(cw []float32, cut float32, v float64) (pick int, total float64) {
	pick = -1
	for j := range 8 {
		var part float64 // the lane's entries, added in topic order
		for t := j; t < len(cw); t += 8 {
			y := cw[t]
			if y >= cut || y == 0 {
				continue
			}
			part += float64(y)
			pick = t
			if v < total+part {
				return pick, total + part
			}
		}
		total += part
	}
	return pick, total
}

// ahead holds the words and topics of a document's following tokens, from
// prefetchAhead/2 positions after its first token on to the end of its
// block, across document boundaries: entry i is the token whose proposal
// table the sampler prefetches while it samples the document's token i,
// and entry i + prefetchAhead/2 the one whose column it prefetches.
type ahead struct {
	w []int32
	z []uint16

	// The words and topics of the next document in the block, when it is
	// short enough for exactDoc, which prefetches its first tokens' reads.
	nextW []int32
	nextZ []uint16
}

// aheadOf returns the ahead of the document starting at position s, in a
// block that ends at position end: other blocks' topics may be changing
// under other workers.
func (m *MH) aheadOf(s, end int) ahead {
	j := min(s+prefetchAhead/2, end)
	a := ahead{z: m.z[j:end]}
	if m.words != nil {
		a.w = m.words[j:end]
	}
	return a
}

// withNext returns ah with the next document, d+1, when it is in the
// block (which ends before document blockEnd) and has at most maxLen
// tokens: the samplers prefetch its first reads while d's last tokens are
// sampled.
func (m *MH) withNext(ah ahead, d, blockEnd, maxLen int) ahead {
	if d+1 < blockEnd {
		e, ne := m.docStart[d+1], m.docStart[d+2]
		if ne-e <= maxLen {
			ah.nextW, ah.nextZ = m.words[e:ne], m.z[e:ne]
		}
	}
	return ah
}

// prefetchToken prefetches, while token i of a document is sampled with Φ
// fixed, the proposal table of the token prefetchAhead/2 positions on and
// the column and table header (with the masses) of the one prefetchAhead
// on.
func (p *Phi) prefetchToken(ah ahead, i int) {
	if i >= len(ah.w) {
		return
	}
	t0, t1, t2 := p.tableLines(int(ah.w[i]))
	j := i + prefetchAhead/2
	if j >= len(ah.w) {
		prefetch.Lines(t0, t1, t2, t0)
		return
	}
	k := p.K
	w := int(ah.w[j])
	col, n := columnSpan(p.col[w*k:(w+1)*k], int(ah.z[j]))
	hdr := unsafe.Pointer(&p.words[w])
	prefetch.Token(col, n, col, n, t0, t1, t2, hdr, hdr, hdr)
}
