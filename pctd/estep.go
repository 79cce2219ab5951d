package pctd

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// numShards is the number of fixed document ranges a party's E-step is cut
// into: each draws from its own stream and their sums merge in order, so
// the number of workers never changes the result.
const numShards = 8

// tiny keeps logarithms finite: log(max(x, tiny)).
const tiny = 1e-300

// em is one party's EM state: its units and the document-topic
// distributions θ_d (Eq. 7), which never leave the party.
type em struct {
	us     *units
	k, v   int
	theta  []float64 // D×K
	shards []int     // document offsets of the shards, len ≤ numShards+1
	alpha  float64   // Config.ThetaPrior: pseudo-count of every topic in θ_d
}

// newEM returns the state for us with K topics over V words and uniform
// θ_d.
func newEM(us *units, k, v int) *em {
	e := &em{us: us, k: k, v: v, theta: make([]float64, us.numDocs()*k)}
	for i := range e.theta {
		e.theta[i] = 1 / float64(k)
	}
	e.shards = []int{0}
	d := us.numDocs()
	per := (us.numUnits() + numShards - 1) / numShards
	next := per
	for doc := 0; doc < d; doc++ {
		if us.docUnit[doc+1] >= next && doc+1 < d {
			e.shards = append(e.shards, doc+1)
			next += per
		}
	}
	e.shards = append(e.shards, d)
	return e
}

// noise says how one iteration draws its noise.
type noise struct {
	variant string
	path    string
	std     float64 // per count (unit) or per entry of M_t (ssp); 0: none
	// stream returns the stream for one part of the iteration's noise.
	stream func(labels ...any) *rand.Rand
	// dropRemainder leaves out the projected remainder σ(I−P)ZCᵀ of the
	// fast path: a deliberately wrong path for the tests.
	dropRemainder bool
}

// shardOut is one shard's partial sums: M (V×K, word-major) and for the
// fast path G = Σ g_u r̂_uᵀ and H = Σ r̂_u r̂_uᵀ (K×K).
type shardOut struct {
	m, g, h []float64
}

// iterate runs one EM iteration's party half against the topics phi (K×V,
// rows distributions): the E-step of Eq. 5 with noise as nz says, θ_d
// updated by Eq. 7, and returns M_t of Eq. 10 (V×K, word-major).
func (e *em) iterate(ctx context.Context, phi []float64, nz noise, workers int) ([]float64, error) {
	k, v := e.k, e.v
	if len(phi) != k*v {
		panic(fmt.Sprintf("pctd: phi of %d entries for %d×%d", len(phi), k, v))
	}
	lt := make([]float64, v*k) // log φ, word-major
	for t := range k {
		for w := range v {
			lt[w*k+t] = math.Log(max(phi[t*v+w], tiny))
		}
	}
	fast := nz.variant == VariantUnit && nz.std > 0 && nz.path == PathFast
	literal := nz.variant == VariantUnit && nz.std > 0 && nz.path == PathLiteral
	var b, apinv []float64
	if fast {
		f, err := factor(gram(lt, v, k), k) // A = L·Lᵀ
		if err != nil {
			return nil, err
		}
		b, apinv = f.sqrt(nz.std), f.pinv()
	}
	outs := make([]shardOut, len(e.shards)-1)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(workers, 1))
	for s := range outs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ctx.Err() != nil {
				return
			}
			var r *rand.Rand
			if fast || literal {
				r = nz.stream("shard", s)
			}
			o := shardOut{m: make([]float64, v*k)}
			if fast {
				o.g, o.h = make([]float64, k*k), make([]float64, k*k)
			}
			e.shard(e.shards[s], e.shards[s+1], lt, &o, r, nz.std, b, literal)
			outs[s] = o
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := outs[0].m
	for _, o := range outs[1:] {
		for i, x := range o.m {
			m[i] += x
		}
	}
	switch {
	case fast:
		gs, hs := make([]float64, k*k), make([]float64, k*k)
		for _, o := range outs {
			for i := range gs {
				gs[i] += o.g[i]
				hs[i] += o.h[i]
			}
		}
		// Σ_u Ω_u r̂_uᵀ = Lᵀ(LLᵀ)⁺G + σ(I − P)·Z·Cᵀ with CCᵀ = H and
		// P = Lᵀ(LLᵀ)⁺L: add Lᵀ(LLᵀ)⁺(G − σ·L·Y) + σ·Y for Y = Z·Cᵀ.
		inner := gs
		if !nz.dropRemainder {
			fh, err := factor(hs, k)
			if err != nil {
				return nil, err
			}
			c := fh.sqrt(1)
			z := make([]float64, v*k)
			rz := nz.stream("remainder")
			for i := range z {
				z[i] = rz.NormFloat64()
			}
			y := mulNK(z, v, k, transpose(c, k), k) // Z·Cᵀ
			ly := mulTN(lt, v, k, y, k)             // L·Y (K×K)
			inner = make([]float64, k*k)
			for i := range inner {
				inner[i] = gs[i] - nz.std*ly[i]
			}
			for i := range m {
				m[i] += nz.std * y[i]
			}
		}
		proj := mulNK(lt, v, k, mulNK(apinv, k, k, inner, k), k)
		for i := range m {
			m[i] += proj[i]
		}
	case nz.variant == VariantSSP && nz.std > 0:
		r := nz.stream("ssp")
		for i := range m {
			m[i] += nz.std * r.NormFloat64()
		}
	}
	return m, nil
}

// transpose returns the transpose of a K×K row-major matrix.
func transpose(a []float64, k int) []float64 {
	out := make([]float64, k*k)
	for i := range k {
		for j := range k {
			out[j*k+i] = a[i*k+j]
		}
	}
	return out
}

// shard runs the E-step over documents [d0, d1): for every unit, r̂_u of
// Eq. 5 (with noise per the path), accumulated into o, and θ_d of Eq. 7.
func (e *em) shard(d0, d1 int, lt []float64, o *shardOut, r *rand.Rand, std float64, b []float64, literal bool) {
	k, v, us := e.k, e.v, e.us
	s := make([]float64, k)
	logTheta := make([]float64, k)
	acc := make([]float64, k)
	var xi, gu, dense []float64
	if o.g != nil {
		xi, gu = make([]float64, k), make([]float64, k)
	}
	if literal {
		dense = make([]float64, v)
	}
	for d := d0; d < d1; d++ {
		th := e.theta[d*k : (d+1)*k]
		for t := range k {
			logTheta[t] = math.Log(max(th[t], tiny))
			acc[t] = 0
		}
		for u := us.docUnit[d]; u < us.docUnit[d+1]; u++ {
			ws, cs := us.w[us.start[u]:us.start[u+1]], us.c[us.start[u]:us.start[u+1]]
			copy(s, logTheta)
			switch {
			case literal:
				// N̂_u = N_u + Ω_u over the whole vocabulary (Eq. 4).
				for w := range dense {
					dense[w] = std * r.NormFloat64()
				}
				for i, w := range ws {
					dense[w] += cs[i]
				}
				for w, x := range dense {
					row := lt[w*k : (w+1)*k]
					for t := range k {
						s[t] += x * row[t]
					}
				}
			default:
				for i, w := range ws {
					c, row := cs[i], lt[int(w)*k:(int(w)+1)*k]
					for t := range k {
						s[t] += c * row[t]
					}
				}
				if o.g != nil {
					// g_u = L·Ω_u ~ N(0, σ²LLᵀ), drawn as B·ξ_u.
					for t := range xi {
						xi[t] = r.NormFloat64()
					}
					for t := range k {
						var x float64
						row := b[t*k : (t+1)*k]
						for j, z := range xi {
							x += row[j] * z
						}
						gu[t] = x
						s[t] += x
					}
				}
			}
			softmax(s)
			if literal {
				for w, x := range dense {
					row := o.m[w*k : (w+1)*k]
					for t := range k {
						row[t] += x * s[t]
					}
				}
			} else {
				for i, w := range ws {
					c, row := cs[i], o.m[int(w)*k:(int(w)+1)*k]
					for t := range k {
						row[t] += c * s[t]
					}
				}
			}
			if o.g != nil {
				for t := range k {
					gt, rt := gu[t], s[t]
					grow, hrow := o.g[t*k:(t+1)*k], o.h[t*k:(t+1)*k]
					for j := range k {
						grow[j] += gt * s[j]
						hrow[j] += rt * s[j]
					}
				}
			}
			for t := range k {
				acc[t] += s[t]
			}
		}
		var sum float64
		for _, x := range acc {
			sum += x
		}
		if sum > 0 {
			for t := range k {
				th[t] = (acc[t] + e.alpha) / (sum + float64(k)*e.alpha)
			}
		}
	}
}

// softmax replaces s by exp(s)/Σexp(s), computed stably.
func softmax(s []float64) {
	top := math.Inf(-1)
	for _, x := range s {
		top = max(top, x)
	}
	var sum float64
	for i, x := range s {
		s[i] = math.Exp(x - top)
		sum += s[i]
	}
	for i := range s {
		s[i] /= sum
	}
}
