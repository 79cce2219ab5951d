package fedlda

import (
	"math/rand/v2"

	"github.com/fedtopic/fedtopic/internal/alias"
)

// phiView is the broadcast model as the users' samplers read it.
type phiView struct {
	k, v int
	// phiT holds φ_kw word-major: phiT[w*K+k], so a token reads one row.
	phiT []float64
	// words holds, for the MH sampler, one alias table over the K topics
	// per word w, drawing k with probability φ_kw / Σ_k' φ_k'w (the word
	// proposal); nil for Gibbs.
	words []alias.Entry
	lem   uint32 // alias.LemireBound(K)
}

// newPhiView computes φ_kw = (n_kw + β)/(n_k + Vβ) from topic-major counts
// n, and the MH word proposal's alias tables when mh is set.
func newPhiView(n []uint32, k, v int, beta float64, mh bool) *phiView {
	p := &phiView{k: k, v: v, phiT: make([]float64, k*v)}
	p.fill(n, beta, mh)
	return p
}

// fill recomputes p from the counts n.
func (p *phiView) fill(n []uint32, beta float64, mh bool) {
	k, v := p.k, p.v
	vb := float64(v) * beta
	for t := range k {
		var nk float64
		for _, x := range n[t*v : (t+1)*v] {
			nk += float64(x)
		}
		inv := 1 / (nk + vb)
		for w, x := range n[t*v : (t+1)*v] {
			p.phiT[w*k+t] = (float64(x) + beta) * inv
		}
	}
	if !mh {
		p.words = nil
		return
	}
	if len(p.words) != k*v {
		p.words = make([]alias.Entry, k*v)
	}
	p.lem = alias.LemireBound(k)
	var b alias.Builder
	for w := range v {
		row := p.phiT[w*k : (w+1)*k]
		var s float64
		for _, x := range row {
			s += x
		}
		b.Build(p.words[w*k:(w+1)*k], row, s)
	}
}

// phi returns φ as K rows of V.
func (p *phiView) rows() [][]float64 {
	out := make([][]float64, p.k)
	for t := range out {
		out[t] = make([]float64, p.v)
		for w := range p.v {
			out[t][w] = p.phiT[w*p.k+t]
		}
	}
	return out
}

// userState is one user's document and topics during a sweep: words, the
// topics it has reported (z, noTopic where none yet), and the scratch the
// samplers work in.
type userState struct {
	words []int32
	z     []uint16 // reported topics (the user's committed state)
	zNew  []uint16 // topics after this iteration's re-sampling
	cnt   []int32  // topic counts of zNew (tokens with a topic)
	p     []float64
	na    int // tokens of zNew with a topic
}

// initUniform draws every token's first topic uniformly: the first
// iteration's assignments.
func (u *userState) initUniform(r *rand.Rand, k int) {
	for j := range u.words {
		u.zNew[j] = uint16(r.IntN(k))
	}
}

// startSweep copies z to zNew and counts its topics.
func (u *userState) startSweep() {
	clear(u.cnt)
	u.na = 0
	for j, t := range u.z {
		u.zNew[j] = t
		if t != noTopic {
			u.cnt[t]++
			u.na++
		}
	}
}

// gibbs re-samples every token from its full conditional with φ fixed,
// p(z_j = k | z_¬j) ∝ (n_dk^¬j + α)·φ_kw, in token order (one collapsed
// Gibbs sweep of the document).
func (u *userState) gibbs(r *rand.Rand, phi *phiView, alpha float64) {
	u.startSweep()
	k := phi.k
	p := u.p[:k]
	for j, w := range u.words {
		if s := u.zNew[j]; s != noTopic {
			u.cnt[s]--
			u.na--
		}
		row := phi.phiT[int(w)*k : int(w)*k+k]
		var sum float64
		for t, f := range row {
			sum += (float64(u.cnt[t]) + alpha) * f
			p[t] = sum
		}
		x := r.Float64() * sum
		t := 0
		for t < k-1 && p[t] <= x {
			t++
		}
		u.zNew[j] = uint16(t)
		u.cnt[t]++
		u.na++
	}
}

// mh re-samples every token by steps Metropolis–Hastings steps targeting
// the same conditional as gibbs, each step a word proposal q ∝ φ_·w (alias
// table, O(1)) and a document proposal q ∝ n_dk + α (a random token's
// topic or, with weight Kα, a uniform topic; O(1)). A token without a
// topic starts its chain at a word-proposal draw.
func (u *userState) mh(r *rand.Rand, phi *phiView, alpha float64, steps int) {
	u.startSweep()
	k := phi.k
	ka := float64(k) * alpha
	n := len(u.words)
	for j, w := range u.words {
		tab := phi.words[int(w)*k : int(w)*k+k]
		row := phi.phiT[int(w)*k : int(w)*k+k]
		s := int(u.zNew[j])
		if s == noTopic {
			s = drawAlias(r, tab, phi.lem)
			u.na++
		} else {
			u.cnt[s]--
		}
		// u.cnt is now n_dk^¬j; u.zNew[j] holds the chain's state s so the
		// document proposal sees token j at s.
		u.zNew[j] = uint16(s)
		for range steps {
			// Word proposal: the ratio is (n_t^¬j + α)/(n_s^¬j + α).
			if t := drawAlias(r, tab, phi.lem); t != s {
				a := (float64(u.cnt[t]) + alpha) / (float64(u.cnt[s]) + alpha)
				if a >= 1 || r.Float64() < a {
					s = t
					u.zNew[j] = uint16(s)
				}
			}
			// Document proposal q(t | s) ∝ n_t^¬j + [t = s] + α: the ratio
			// reduces to φ_tw/φ_sw.
			t := -1
			for t < 0 {
				x := r.Float64() * (float64(n) + ka)
				if x >= float64(n) {
					t = min(int((x-float64(n))/alpha), k-1)
				} else if z := u.zNew[min(int(x), n-1)]; z != noTopic {
					t = int(z)
				}
			}
			if t != s {
				a := row[t] / row[s]
				if a >= 1 || r.Float64() < a {
					s = t
					u.zNew[j] = uint16(s)
				}
			}
		}
		u.cnt[s]++
	}
}

// drawAlias draws from an alias table of len(tab) slots.
func drawAlias(r *rand.Rand, tab []alias.Entry, lem uint32) int {
	for {
		if k, ok := alias.Draw(tab, lem, r.Uint64()); ok {
			return k
		}
	}
}
