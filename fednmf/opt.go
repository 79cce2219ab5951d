package fednmf

import "math"

// serverOpt is the server's update rule (Reddi et al. 2021, Algorithm 2):
// given the pseudo-gradient Δ (the weighted mean client delta), FedAvg sets
// x ← x + η·Δ; the adaptive rules keep a momentum m and a second moment v
// across rounds,
//
//	m ← β₁·m + (1 − β₁)·Δ
//	v ← v + Δ²                                (FedAdagrad)
//	v ← v − (1 − β₂)·Δ²·sign(v − Δ²)          (FedYogi)
//	v ← β₂·v + (1 − β₂)·Δ²                    (FedAdam)
//	x ← x + η·m / (√v + τ)
//
// with m and v starting at zero and no bias correction (Reddi et al.'s
// rule; Flower's FedAdam adds Adam's bias correction to η, which this
// package does not).
type serverOpt struct {
	kind       string
	lr, b1, b2 float64
	tau        float64
	m, v       []float64 // nil for FedAvg
	wSize      int       // x[:wSize] is W, projected onto ≥ 0 after each step
}

func newServerOpt(cfg Config, n, wSize int) *serverOpt {
	o := &serverOpt{kind: cfg.ServerOpt, lr: cfg.ServerLR, b1: cfg.Beta1, b2: cfg.Beta2, tau: cfg.Adaptivity, wSize: wSize}
	if o.kind != OptFedAvg {
		o.m, o.v = make([]float64, n), make([]float64, n)
	}
	return o
}

// step applies the pseudo-gradient delta to x and projects W onto ≥ 0.
func (o *serverOpt) step(x, delta []float64) {
	if o.kind == OptFedAvg {
		for i, d := range delta {
			x[i] += o.lr * d
		}
	} else {
		for i, d := range delta {
			o.m[i] = o.b1*o.m[i] + (1-o.b1)*d
			d2 := d * d
			switch o.kind {
			case OptFedAdagrad:
				o.v[i] += d2
			case OptFedYogi:
				o.v[i] -= (1 - o.b2) * d2 * sign(o.v[i]-d2)
			case OptFedAdam:
				o.v[i] = o.b2*o.v[i] + (1-o.b2)*d2
			}
			x[i] += o.lr * o.m[i] / (math.Sqrt(o.v[i]) + o.tau)
		}
	}
	for i := range x[:o.wSize] {
		if x[i] < 0 {
			x[i] = 0
		}
	}
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}
