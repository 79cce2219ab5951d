package lda

import (
	"context"

	"github.com/fedtopic/fedtopic/internal/parallel"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// The collapsed kernel is approximate distributed LDA (AD-LDA; Newman,
// Asuncion, Smyth and Welling, "Distributed Algorithms for Topic Models",
// JMLR 10, 2009) with the O(1) Metropolis–Hastings proposals of LightLDA
// (Yuan et al., WWW 2015) in place of O(K) Gibbs draws. Each block of
// documents plays one AD-LDA processor: it starts from the global counts G of
// the iteration's start and sees its own changes D, so its tokens are drawn
// from the collapsed conditional
//
//	π(k) ∝ (C_dk^(−i) + α)·(n_kw^(−i) + β)/(n_k^(−i) + Vβ),  n = G + D,
//
// which ignores the other blocks' changes within the iteration: that is the
// AD-LDA approximation, and the reason this kernel is not exact. It mixes far
// faster than the partially collapsed kernel from a random start (a token's
// own count does not pin it to its topic), so MH chains run it for their
// first Config.BurnIn iterations, and Config.Sampler "adlda" runs it
// throughout — the conventional distributed baseline.
//
// Proposals: LightLDA's word proposal q_w(k) ∝ (G_kw + β)/(G_k + Vβ),
// drawn as a mixture of a sparse alias table over the topics with G_kw > 0
// (weights G_kw/(G_k + Vβ)) and one table shared by all words over all topics
// (weights β/(G_k + Vβ)), both built once per iteration; and the document
// proposal of the MH kernel. Both acceptances use the exact π above and the
// exact q, so within a block the kernel leaves π invariant.

// collapsedState is the per-iteration state of the collapsed kernel.
type collapsedState struct {
	nk         []int32      // G_k
	invNk      []float64    // 1/(G_k + Vβ)
	smooth     []aliasEntry // topic k with weight β/(G_k + Vβ)
	smoothLem  uint32
	smoothMass float64   // Σ_k β/(G_k + Vβ)
	mass       []float64 // Σ_k G_kw/(G_k + Vβ) per word
}

// collapsedWorker is the per-goroutine state of the collapsed kernel: the
// block's count changes D (word-major like nkw) and the entries it touched.
type collapsedWorker struct {
	dkw     []int32
	dk      []int32
	touched []int32
}

// prepareCollapsed builds the word-proposal tables from the current counts.
func (m *MH) prepareCollapsed(ctx context.Context) error {
	k, v := m.k, m.v
	cs := m.coll
	if cs == nil {
		cs = &collapsedState{nk: make([]int32, k), invNk: make([]float64, k), smooth: make([]aliasEntry, k), smoothLem: lemireBound(k), mass: make([]float64, v)}
		m.coll = cs
		for _, sw := range m.sweepers {
			sw.col = &collapsedWorker{dkw: make([]int32, k*v), dk: make([]int32, k)}
		}
	}
	clear(cs.nk)
	for w := 0; w < v; w++ {
		for t, c := range m.nkw[w*k : (w+1)*k] {
			cs.nk[t] += c
		}
	}
	vb := float64(v) * m.beta
	smooth := make([]float64, k)
	cs.smoothMass = 0
	for t, n := range cs.nk {
		cs.invNk[t] = 1 / (float64(n) + vb)
		smooth[t] = m.beta * cs.invNk[t]
		cs.smoothMass += smooth[t]
	}
	var ab aliasBuilder
	ab.build(cs.smooth, smooth, cs.smoothMass)
	p := m.phi
	nb := (v + phiBlock - 1) / phiBlock
	return parallel.Blocks(ctx, len(m.phiWorkers), nb, func(wi, b int) {
		pw := m.phiWorkers[wi]
		sp := p.sparse[b][:0]
		for w := b * phiBlock; w < min(v, (b+1)*phiBlock); w++ {
			if !p.propose[w] {
				continue
			}
			topics, weights := pw.topics[:0], pw.weights[:0]
			var mass float64
			for t, c := range m.nkw[w*k : (w+1)*k] {
				if c > 0 {
					x := float64(c) * cs.invNk[t]
					topics = append(topics, uint16(t))
					weights = append(weights, x)
					mass += x
				}
			}
			pw.topics, pw.weights = topics, weights
			off := len(sp)
			if mass > 0 {
				sp = pw.alias.buildSparse(sp, topics, weights, mass)
			}
			p.words[w] = wordTable{off: uint32(off), n: uint32(len(topics)), lemK: lemireBound(max(1, len(topics)))}
			cs.mass[w] = mass
		}
		p.sparse[b] = sp
	})
}

// sweepBlockCollapsed samples the tokens of block b with the collapsed
// kernel.
func (m *MH) sweepBlockCollapsed(sw *sweepWorker, blk int) {
	src := sw.src
	src.Seed(rng.Key(m.cfg.Seed, "lda", "adlda", m.iter, blk))
	cw, cs, p := sw.col, m.coll, m.phi
	k := m.k
	alpha, beta := m.alpha, m.beta
	vb := float64(m.v) * beta
	invAlpha := 1 / alpha
	kAlpha := float64(k) * alpha
	gkw, gk, dkw, dk := m.nkw, cs.nk[:k], cw.dkw, cw.dk[:k]
	invNk := cs.invNk[:k]
	cnt := sw.cnt[:k]
	for d := m.blocks[blk]; d < m.blocks[blk+1]; d++ {
		s, e := m.docStart[d], m.docStart[d+1]
		zd := m.z[s:e]
		wd := m.words[s:e]
		wd = wd[:len(zd)]
		for _, t := range zd {
			cnt[t]++
		}
		n := float64(len(zd))
		last := len(zd) - 1
		total := n + kAlpha
		for i, w := range wd {
			cur := int(zd[i])
			cnt[cur]--
			base := int(w) * k
			gw, dw := gkw[base:base+k], dkw[base:base+k]
			mass := cs.mass[w]
			// wordTerm returns (n_kw + β)/(n_k + Vβ) with the token
			// itself removed from topic cur.
			wordTerm := func(t int) float64 {
				self := 0.0
				if t == cur {
					self = 1
				}
				return (float64(gw[t]+dw[t]) - self + beta) / (float64(gk[t]+dk[t]) - self + vb)
			}
			// q returns the word proposal's unnormalised weight of t.
			q := func(t int) float64 { return (float64(gw[t]) + beta) * invNk[t] }
			for range m.cfg.MHSteps {
				y := src.Uint64()
				var t int
				if unit32(uint32(y))*(mass+cs.smoothMass) < mass {
					t = p.drawWordSrc(src, int(w))
				} else {
					t = drawSmooth(src, cs)
				}
				if t != cur {
					a := (float64(cnt[t]) + alpha) * wordTerm(t) * q(cur)
					b := (float64(cnt[cur]) + alpha) * wordTerm(cur) * q(t)
					if unit32(uint32(y>>32))*b < a {
						cur = m.move(cw, zd, i, base, cur, t)
					}
				}
				y = src.Uint64()
				u := unit32(uint32(y)) * total
				t = min(max(int((u-n)*invAlpha), 0), k-1)
				if u < n {
					t = int(zd[min(int(u), last)])
				}
				if t != cur {
					if unit32(uint32(y>>32))*wordTerm(cur) < wordTerm(t) {
						cur = m.move(cw, zd, i, base, cur, t)
					}
				}
			}
			cnt[cur]++
		}
		for _, t := range zd {
			cnt[t] = 0
		}
	}
	for _, j := range cw.touched {
		dkw[j] = 0
	}
	cw.touched = cw.touched[:0]
	clear(dk)
}

// drawSmooth draws a topic from the shared table of the smoothing part.
func drawSmooth(src interface{ Uint64() uint64 }, cs *collapsedState) int {
	for {
		if t, ok := drawAlias(cs.smooth, cs.smoothLem, src.Uint64()); ok {
			return t
		}
	}
}

// move reassigns token i of the current document from topic s to t in the
// block's view of the counts and returns t.
func (m *MH) move(cw *collapsedWorker, zd []uint16, i, base, s, t int) int {
	cw.dkw[base+s]--
	cw.dkw[base+t]++
	cw.dk[s]--
	cw.dk[t]++
	cw.touched = append(cw.touched, int32(base+s), int32(base+t))
	zd[i] = uint16(t)
	return t
}
