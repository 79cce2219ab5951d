package fednmf

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// critic is the shape of the MI critic T_θ(x, y) over a document's column
// x ∈ ℝ^V and its topic weights y ∈ ℝ^K:
//
//	h₁ = relu(W1x·x + W1y·y + b1)   (Hidden1 units)
//	h₂ = relu(W2·h₁ + b2)            (Hidden2 units)
//	T  = w3·h₂ + b3
//
// θ is one flat slice, in this order: W1x as V rows of Hidden1 (row w is
// word w's column of the first layer, so a sparse x reads only its words'
// rows), W1y as K rows of Hidden1, b1, W2 as Hidden2 rows of Hidden1, b2,
// w3, b3. The first layer is linear in (x, y), so W1x·x is computed once
// per document and W1y·y once per topic vector, and a pair (x_j, y_j')
// only adds the two: the B² pairs of a batch cost B²·Hidden1·Hidden2, not
// B²·(V+K)·Hidden1.
type critic struct{ v, k int }

func (c critic) offW1y() int { return c.v * Hidden1 }
func (c critic) offB1() int  { return c.offW1y() + c.k*Hidden1 }
func (c critic) offW2() int  { return c.offB1() + Hidden1 }
func (c critic) offB2() int  { return c.offW2() + Hidden2*Hidden1 }
func (c critic) offW3() int  { return c.offB2() + Hidden2 }
func (c critic) offB3() int  { return c.offW3() + Hidden2 }

// size returns the number of parameters in θ.
func (c critic) size() int { return c.offB3() + 1 }

// criticSize returns the number of parameters of the critic for V words
// and K topics.
func criticSize(v, k int) int { return critic{v, k}.size() }

// init fills theta with PyTorch's default initialization of a linear
// layer: weights and biases uniform in ±1/√fan_in.
func (c critic) init(r *rand.Rand, theta []float64) {
	fill := func(s []float64, fanIn int) {
		b := 1 / math.Sqrt(float64(fanIn))
		for i := range s {
			s[i] = (2*r.Float64() - 1) * b
		}
	}
	fill(theta[:c.offW2()], c.v+c.k)
	fill(theta[c.offW2():c.offW3()], Hidden1)
	fill(theta[c.offW3():], Hidden2)
}

// smileWork holds one batch's activations and gradients; reused across
// batches of at most its capacity.
type smileWork struct {
	b        int
	ax, ay   []float64  // B×Hidden1: W1x·x_j, and W1y·y_j + b1
	h1       []float64  // B²×Hidden1: relu(ax_j + ay_j')
	h2       []float64  // B²×Hidden2: relu(W2·h1 + b2), then its gradient
	t, gt    []float64  // B²: T and ∂Î/∂T
	dax, day []float64  // B×Hidden1
	gSmall   []float64  // ∂Î/∂θ without W1x (from W1y on)
	w2t      []float64  // Hidden1×Hidden2: W2 transposed
	w2p, w2q []float64  // the assembly's W2ᵀ and W2 in panels (packPanels)
	gw2t     []float64  // Hidden1×Hidden2: ∂Î/∂W2 transposed
	dz1      []float64  // B²×Hidden1: ∂Î/∂z1
	act      []int32    // B²×Hidden1: pair p's active units (h1 > 0) from act[p·Hidden1]
	nAct     []int32    // B²: the number of pair p's active units
	tv       []float64  // pairsForward's scratch
	ul       []int32    // pairsForward's and pairsBackward's scratch
	mask     []uint16   // pairsBackward's scratch
	kern     pairKernel // the form of the pair layers
}

func newSmileWork(c critic, b int) *smileWork {
	bb := padPairs(b * b)
	return &smileWork{b: b,
		ax: make([]float64, b*Hidden1), ay: make([]float64, b*Hidden1),
		h1: make([]float64, bb*Hidden1), h2: make([]float64, bb*Hidden2),
		t: make([]float64, bb), gt: make([]float64, bb),
		dax: make([]float64, b*Hidden1), day: make([]float64, b*Hidden1),
		gSmall: make([]float64, c.size()-c.offW1y()),
		w2t:    make([]float64, Hidden1*Hidden2), gw2t: make([]float64, Hidden1*Hidden2),
		w2p: make([]float64, Hidden1*Hidden2), w2q: make([]float64, Hidden1*Hidden2),
		dz1: make([]float64, bb*Hidden1),
		act: make([]int32, bb*Hidden1), nAct: make([]int32, bb),
		tv:   make([]float64, 4*pairGroup),
		ul:   make([]int32, max(pairGroup/pairQuad*(Hidden1+1), chunkListsLen(pairGroup, Hidden2))),
		mask: make([]uint16, pairGroup*Hidden2/16),
		kern: pairKernelFor(Hidden1, Hidden2),
	}
}

// pairGroup is the number of pairs the second layer's kernels take at a
// time (a multiple of pairQuad): the group's h1 and the blocks of its h2
// the assembly goes over stay in the first-level cache.
const pairGroup = 64

// padPairs returns n rounded up to a multiple of pairQuad: the assembly
// takes pairs four at a time, and the pairs past B² have h1 = 0
// and ∂Î/∂T = 0, so they add exactly nothing to the gradients.
func padPairs(n int) int { return (n + pairQuad - 1) / pairQuad * pairQuad }

func general(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data[:rows*cols]}
}

// smile returns the SMILE estimate (Eq. 2) on the batch of documents cols
// of a, with topic vectors y (B×K row-major, row j for cols[j]):
//
//	Î = (1/B)·Σ_j T(x_j, y_j) − log( 1/(B(B−1)) · Σ_{j≠j'} clip(e^T(x_j, y_j'), e^−τ, e^τ) ).
//
// It leaves ∂Î/∂θ in ws (apply it with ascend) and writes ∂Î/∂y into gy
// (B×K) unless gy is nil. The gradient of the clipped terms is zero where
// the clip is active. Needs B ≥ 2.
//
// With js set, the gradient left is instead that of the Jensen–Shannon
// bound Î_JS = (1/B)·Σ_j −softplus(−T_jj) − 1/(B(B−1))·Σ_{j≠j'} softplus(T_jj'),
// as Song and Ermon's SMILE code trains its critic: the gradient of Eq. 2
// rewards T on the positive pairs without bound (the clip caps only the
// shuffled pairs), so following it drives T and H to overflow. The value
// returned is Eq. 2's either way; jsValue is Î_JS.
func (c critic) smile(theta []float64, a *Matrix, cols []int, y []float64, tau float64, ws *smileWork, gy []float64, js bool) (val, jsValue float64) {
	b := len(cols)
	if b < 2 || b > ws.b {
		panic("fednmf: smile: batch size outside [2, workspace]")
	}
	bb := b * b
	w1y := theta[c.offW1y():c.offB1()]
	b1 := theta[c.offB1():c.offW2()]
	w2 := theta[c.offW2():c.offB2()]
	b2 := theta[c.offB2():c.offW3()]
	w3 := theta[c.offW3():c.offB3()]
	b3 := theta[c.offB3()]

	// First layer: once per document and once per topic vector.
	ax, ay := ws.ax[:b*Hidden1], ws.ay[:b*Hidden1]
	clear(ax)
	for j, d := range cols {
		rows, vals := a.Col(d)
		dst := ax[j*Hidden1 : (j+1)*Hidden1]
		for i, w := range rows {
			src := theta[int(w)*Hidden1 : (int(w)+1)*Hidden1]
			x := vals[i]
			for u := range dst {
				dst[u] += x * src[u]
			}
		}
	}
	for j := range b {
		copy(ay[j*Hidden1:(j+1)*Hidden1], b1)
	}
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, general(b, c.k, y), general(c.k, Hidden1, w1y), 1, general(b, Hidden1, ay))

	// Pairs: p = j·B + j' pairs document j with topic vector j'. The
	// units relu leaves active (about half) are listed in act: the plain-Go
	// second layer reads only theirs. The assembly runs over np ≥ B² pairs,
	// the last np − B² zero.
	np := bb
	if ws.kern != pairGo {
		np = padPairs(bb)
	}
	h1 := ws.h1[:np*Hidden1]
	clear(h1[bb*Hidden1:])
	act, nAct := ws.act[:np*Hidden1], ws.nAct[:np]
	clear(nAct[bb:])
	for j := range b {
		xa := ax[j*Hidden1 : (j+1)*Hidden1]
		for jj := range b {
			p := j*b + jj
			ya := ay[jj*Hidden1 : (jj+1)*Hidden1]
			dst := h1[p*Hidden1 : (p+1)*Hidden1]
			if ws.kern != pairGo {
				// The assembly runs over every unit: no lists.
				for u := range dst {
					dst[u] = max(xa[u]+ya[u], 0)
				}
				continue
			}
			list := act[p*Hidden1 : (p+1)*Hidden1]
			n := 0
			for u := range dst {
				v := max(xa[u]+ya[u], 0)
				dst[u] = v
				list[n] = int32(u)
				if v > 0 {
					n++
				}
			}
			nAct[p] = int32(n)
		}
	}
	// Second layer and T, pair by pair: h2 = relu(b2 + Σ_u h1_u·W2(:, u))
	// over the active u, T = w3·h2 + b3.
	w2t := ws.w2t
	for o := range Hidden2 {
		for u := range Hidden1 {
			w2t[u*Hidden2+o] = w2[o*Hidden1+u]
		}
	}
	w2f, w2b := w2t, w2t // W2ᵀ for the forward kernel, W2 for the backward
	if ws.kern != pairGo {
		packPanels(ws.w2p, w2t, Hidden1, Hidden2, ws.kern.panel())
		packPanels(ws.w2q, w2, Hidden2, Hidden1, ws.kern.panel())
		w2f, w2b = ws.w2p, ws.w2q
	}
	h2 := ws.h2[:np*Hidden2]
	t := ws.t[:np]
	for p := range t {
		t[p] = b3
	}
	for p := 0; p < np; p += pairGroup {
		e := min(p+pairGroup, np)
		pairsForward(ws.kern, w2f, h1[p*Hidden1:e*Hidden1], act[p*Hidden1:e*Hidden1], nAct[p:e], b2, w3, h2[p*Hidden2:e*Hidden2], t[p:e], ws.tv, ws.ul)
	}
	t = t[:bb]

	// Value and ∂Î/∂T.
	var pos float64
	lse := math.Inf(-1)
	for j := range b {
		pos += t[j*b+j]
		for jj := range b {
			if jj != j {
				lse = logAddExp(lse, clip(t[j*b+jj], tau))
			}
		}
	}
	pos /= float64(b)
	val = pos - (lse - math.Log(float64(b*(b-1))))
	gt := ws.gt[:np]
	clear(gt[bb:])
	gt = gt[:bb]
	nb, nn := float64(b), float64(b*(b-1))
	for j := range b {
		for jj := range b {
			p := j*b + jj
			switch {
			case js && jj == j:
				jsValue -= softplus(-t[p]) / nb
				gt[p] = sigmoid(-t[p]) / nb
			case js:
				jsValue -= softplus(t[p]) / nn
				gt[p] = -sigmoid(t[p]) / nn
			case jj == j:
				gt[p] = 1 / float64(b)
			case t[p] > -tau && t[p] < tau:
				gt[p] = -math.Exp(t[p] - lse)
			default:
				gt[p] = 0
			}
		}
	}

	// Backward.
	g := ws.gSmall
	clear(g)
	base := c.offW1y()
	gw1y := g[c.offW1y()-base : c.offB1()-base]
	gb1 := g[c.offB1()-base : c.offW2()-base]
	gw2 := g[c.offW2()-base : c.offB2()-base]
	gb2 := g[c.offB2()-base : c.offW3()-base]
	gw3 := g[c.offW3()-base : c.offB3()-base]
	var gb3 float64
	for _, v := range gt {
		gb3 += v
	}
	g[c.offB3()-base] = gb3
	// Pair by pair: ∂Î/∂w3 = Σ_p ∂Î/∂T_p·h2_p, ∂Î/∂z2 = ∂Î/∂T·w3 ⊙ [h2 > 0]
	// (h2 becomes it), ∂Î/∂b2 = Σ_p ∂Î/∂z2_p, ∂Î/∂W2 = Σ_p ∂Î/∂z2_p ⊗ h1_p
	// and ∂Î/∂z1 = (∂Î/∂z2 · W2) ⊙ [h1 > 0], the last two over the active
	// units only.
	gw2t := ws.gw2t
	clear(gw2t)
	dz1 := ws.dz1[:np*Hidden1]
	clear(dz1)
	gt = ws.gt[:np]
	for p := 0; p < np; p += pairGroup {
		e := min(p+pairGroup, np)
		pairsBackward(ws.kern, w2b, w2t, gw2t, h1[p*Hidden1:e*Hidden1], act[p*Hidden1:e*Hidden1], nAct[p:e], h2[p*Hidden2:e*Hidden2], gt[p:e], w3, gw3, gb2, dz1[p*Hidden1:e*Hidden1], ws.mask, ws.ul)
	}
	for o := range Hidden2 {
		for u := range Hidden1 {
			gw2[o*Hidden1+u] = gw2t[u*Hidden2+o]
		}
	}
	dax, day := ws.dax[:b*Hidden1], ws.day[:b*Hidden1]
	clear(dax)
	clear(day)
	for j := range b {
		xa := dax[j*Hidden1 : (j+1)*Hidden1]
		for jj := range b {
			src := dz1[(j*b+jj)*Hidden1 : (j*b+jj+1)*Hidden1]
			ya := day[jj*Hidden1 : (jj+1)*Hidden1]
			for u, v := range src {
				xa[u] += v
				ya[u] += v
			}
		}
	}
	for j := range b {
		for u, v := range day[j*Hidden1 : (j+1)*Hidden1] {
			gb1[u] += v
		}
	}
	blas64.Gemm(blas.Trans, blas.NoTrans, 1, general(b, c.k, y), general(b, Hidden1, day), 0, general(c.k, Hidden1, gw1y))
	if gy != nil {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1, general(b, Hidden1, day), general(c.k, Hidden1, w1y), 0, general(b, c.k, gy))
	}
	return val, jsValue
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// ascend adds step·∂Î/∂θ, left in ws by the last smile call on the same
// batch, to theta. W1x's gradient is sparse: only the rows of the batch's
// words change.
func (c critic) ascend(theta []float64, a *Matrix, cols []int, ws *smileWork, step float64) {
	for j, d := range cols {
		rows, vals := a.Col(d)
		src := ws.dax[j*Hidden1 : (j+1)*Hidden1]
		for i, w := range rows {
			dst := theta[int(w)*Hidden1 : (int(w)+1)*Hidden1]
			s := step * vals[i]
			for u := range dst {
				dst[u] += s * src[u]
			}
		}
	}
	rest := theta[c.offW1y():]
	for i, v := range ws.gSmall {
		rest[i] += step * v
	}
}

func clip(t, tau float64) float64 { return min(max(t, -tau), tau) }

func logAddExp(x, y float64) float64 {
	if math.IsInf(x, -1) {
		return y
	}
	if x < y {
		x, y = y, x
	}
	return x + math.Log1p(math.Exp(y-x))
}
