package accountant

import (
	"fmt"
	"math"

	"github.com/fedtopic/fedtopic/privacy"
)

// RDP is a Rényi-DP accountant (Mironov 2017): it keeps the composed
// mechanisms' Rényi divergence curves ε(α), which add up under composition,
// and converts the total to (ε, δ) with the improved conversion of Balle et
// al. (2020, "Hypothesis Testing Interpretations and Rényi Differential
// Privacy", Theorem 21; also Canonne, Kamath and Steinke 2020):
//
//	ε = min_α  ε(α) + log((α−1)/α) − (log δ + log α)/(α−1),
//
// the minimum taken over a fixed grid of orders. Every order gives a valid
// bound, so the search may stop early without risk: Epsilon scans the grid
// coarsely (every √n-th order) and then every order around the best one —
// the exact grid minimum whenever the bound is unimodal in α, as it is for
// these curves, in about 2√n evaluations instead of n.
//
// It is the general fallback: Gaussian releases alone are reported exactly
// by GDP instead (Compose chooses). Not safe for concurrent use.
type RDP struct {
	orders []float64
	rho    float64 // Gaussian part: ε(α) = α·rho
	terms  []rdpTerm
	sub    bool // a subsampled Gaussian is present: only integer orders are finite
}

// rdpTerm is one non-linear curve, count times.
type rdpTerm struct {
	curve func(alpha float64) float64
	count float64
}

// DefaultOrders returns the order grid 1.001, 1.002, …, 100. The fine steps near 1 matter for large ε; orders are never 1 itself,
// where the conversion is undefined (TF-Privacy issue 166).
func DefaultOrders() []float64 {
	o := make([]float64, 0, 99000)
	for i := 1001; i <= 100000; i++ {
		o = append(o, float64(i)/1000)
	}
	return o
}

// NewRDP returns an empty accountant over orders (nil means
// DefaultOrders()); every order must be finite and above 1, in increasing
// order.
func NewRDP(orders []float64) (*RDP, error) {
	if orders == nil {
		orders = DefaultOrders()
	}
	if len(orders) == 0 {
		return nil, fmt.Errorf("accountant: rdp: no orders: %w", privacy.ErrInvalidParameter)
	}
	for i, a := range orders {
		if math.IsNaN(a) || math.IsInf(a, 0) || a <= 1 {
			return nil, fmt.Errorf("accountant: rdp: order %v: must be finite and above 1: %w", a, privacy.ErrInvalidParameter)
		}
		if i > 0 && a <= orders[i-1] {
			return nil, fmt.Errorf("accountant: rdp: orders must increase (%v after %v): %w", a, orders[i-1], privacy.ErrInvalidParameter)
		}
	}
	return &RDP{orders: append([]float64(nil), orders...)}, nil
}

// Orders returns the order grid.
func (a *RDP) Orders() []float64 { return a.orders }

// At returns the composed Rényi divergence ε(α).
func (a *RDP) At(alpha float64) float64 {
	r := a.rho * alpha
	for _, t := range a.terms {
		r += t.count * t.curve(alpha)
	}
	return r
}

// AddGaussian composes count Gaussian releases with noise σ and L2
// sensitivity Δ: ε(α) = α·Δ²/(2σ²). The discrete Gaussian satisfies the same
// bound (Canonne, Kamath and Steinke 2020, Theorem 4).
func (a *RDP) AddGaussian(sigma, sensitivity float64, count int) {
	a.rho += float64(count) * sensitivity * sensitivity / (2 * sigma * sigma)
}

// AddSubsampledGaussian composes count releases of a Gaussian mechanism
// with noise multiplier z = σ/Δ applied to a Poisson sample of rate q, as in
// DP-FedAvg. For integer α the bound is exact (Mironov, Talwar and Zhang
// 2019, §3.3):
//
//	ε(α) = log Σ_{k=0}^{α} C(α,k)·(1−q)^(α−k)·q^k·exp((k²−k)/(2z²)) / (α−1);
//
// fractional orders get +∞ (no bound), which the conversion skips. With
// q = 1 it is AddGaussian.
func (a *RDP) AddSubsampledGaussian(sigma, sensitivity, q float64, count int) {
	if q >= 1 {
		a.AddGaussian(sigma, sensitivity, count)
		return
	}
	z := sigma / sensitivity
	a.sub = true
	a.terms = append(a.terms, rdpTerm{count: float64(count), curve: func(alpha float64) float64 {
		if alpha != math.Trunc(alpha) || alpha > 1e4 {
			return math.Inf(1)
		}
		n := int(alpha)
		s := math.Inf(-1)
		for k := 0; k <= n; k++ {
			s = logAddExp(s, lchoose(n, k)+float64(n-k)*math.Log1p(-q)+float64(k)*math.Log(q)+float64(k*k-k)/(2*z*z))
		}
		return s / (alpha - 1)
	}})
}

// AddLaplace composes count releases of the continuous Laplace mechanism
// with ε = Δ/b (Mironov 2017, Proposition 6):
// ε(α) = log(α/(2α−1)·e^((α−1)ε) + (α−1)/(2α−1)·e^(−αε))/(α−1).
func (a *RDP) AddLaplace(eps float64, count int) {
	a.terms = append(a.terms, rdpTerm{count: float64(count), curve: func(alpha float64) float64 {
		l1 := math.Log(alpha/(2*alpha-1)) + (alpha-1)*eps
		l2 := math.Log((alpha-1)/(2*alpha-1)) - alpha*eps
		return logAddExp(l1, l2) / (alpha - 1)
	}})
}

// AddRandomizedResponse composes count releases of k-ary randomized
// response with parameter ε (keep probability p = e^ε/(e^ε+k−1)): the
// Rényi divergence between the output laws of two inputs,
// ε(α) = log(p^α q^(1−α) + q^α p^(1−α) + (k−2)q)/(α−1), q = (1−p)/(k−1).
// With k = 2 it bounds every ε-DP mechanism (any ε-DP pair of laws is a
// post-processing of binary randomized response; Kairouz, Oh and
// Viswanath 2015), which is how AddPure uses it.
func (a *RDP) AddRandomizedResponse(eps float64, k, count int) {
	if k < 2 {
		k = 2
	}
	// log p and log q in stable form.
	lp := -math.Log1p(float64(k-1) * math.Exp(-eps))
	lq := lp - eps
	lk := math.Log(float64(k-2)) + lq // −Inf for k = 2
	a.terms = append(a.terms, rdpTerm{count: float64(count), curve: func(alpha float64) float64 {
		s := logAddExp(alpha*lp+(1-alpha)*lq, alpha*lq+(1-alpha)*lp)
		if k > 2 {
			s = logAddExp(s, lk)
		}
		return s / (alpha - 1)
	}})
}

// AddPure composes count releases of any ε-DP mechanism, through the
// binary randomized-response bound (tight over all ε-DP mechanisms).
func (a *RDP) AddPure(eps float64, count int) { a.AddRandomizedResponse(eps, 2, count) }

// Epsilon returns the smallest ε over the orders for which the composition
// is (ε, δ)-DP, and the order that achieves it.
func (a *RDP) Epsilon(delta float64) (eps, order float64, err error) {
	if !(delta > 0 && delta < 1) {
		return 0, 0, fmt.Errorf("accountant: rdp: delta %v: must be in (0, 1): %w", delta, privacy.ErrInvalidParameter)
	}
	ld := math.Log(delta)
	conv := func(o float64) float64 {
		r := a.At(o)
		if math.IsInf(r, 1) || math.IsNaN(r) {
			return math.Inf(1)
		}
		return r + math.Log((o-1)/o) - (ld+math.Log(o))/(o-1)
	}
	cand := a.orders
	if a.sub { // only integer orders have a bound
		cand = nil
		for _, o := range a.orders {
			if o == math.Trunc(o) {
				cand = append(cand, o)
			}
		}
	}
	best, bestI := math.Inf(1), -1
	stride := max(1, int(math.Sqrt(float64(len(cand)))))
	scan := func(lo, hi, step int) {
		for i := max(lo, 0); i < min(hi, len(cand)); i += step {
			if e := conv(cand[i]); e < best {
				best, bestI = e, i
			}
		}
	}
	scan(0, len(cand), stride)
	scan(len(cand)-1, len(cand), 1)
	if bestI >= 0 {
		scan(bestI-stride+1, bestI+stride, 1)
	}
	if bestI < 0 {
		return 0, 0, fmt.Errorf("accountant: rdp: no order gives a finite bound: %w", privacy.ErrInvalidParameter)
	}
	return math.Max(best, 0), cand[bestI], nil
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// logAddExp returns log(e^x + e^y).
func logAddExp(x, y float64) float64 {
	if x < y {
		x, y = y, x
	}
	if math.IsInf(y, -1) {
		return x
	}
	return x + math.Log1p(math.Exp(y-x))
}
