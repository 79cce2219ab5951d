package accountant

import (
	"errors"
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/privacy"
)

func TestGaussianSigmaGolden(t *testing.T) {
	// Analytic σ (Balle–Wang) for Δ = 1.
	tests := []struct {
		name       string
		eps, delta float64
		want       float64
	}{
		{name: "ε=1 δ=1e-5", eps: 1, delta: 1e-5, want: 3.7306},
		{name: "ε=1 δ=1e-6", eps: 1, delta: 1e-6, want: 4.2247},
		{name: "ε=0.5 δ=1e-6", eps: 0.5, delta: 1e-6, want: 8.0576},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := GaussianSigma(tt.eps, tt.delta, 1)
			if err != nil || math.Abs(got-tt.want) > 1e-4 {
				t.Errorf("GaussianSigma(%v, %v, 1) = %v, %v; want %v ± 1e-4", tt.eps, tt.delta, got, err, tt.want)
			}
			classic := math.Sqrt(2*math.Log(1.25/tt.delta)) / tt.eps
			if got >= classic {
				t.Errorf("GaussianSigma(%v, %v, 1) = %v; want below the classic %v", tt.eps, tt.delta, got, classic)
			}
			// σ → δ → σ round trip (Google TestSigmaForGaussianInvertsDeltaForGaussian).
			d := GaussianDelta(tt.eps, 1/got)
			if d > tt.delta || d < tt.delta*(1-1e-9) {
				t.Errorf("GaussianDelta(%v, 1/σ) = %v; want %v (just below)", tt.eps, d, tt.delta)
			}
			back, err := GaussianSigma(tt.eps, d, 1)
			if err != nil || math.Abs(back-got) > 1e-9*got {
				t.Errorf("GaussianSigma(%v, GaussianDelta(…)) = %v, %v; want %v", tt.eps, back, err, got)
			}
		})
	}
}

// TestGoldenAccountant checks the accountants against golden values (Δ = 1).
func TestGoldenAccountant(t *testing.T) {
	tests := []struct {
		name          string
		sigma         float64
		releases      int
		delta         float64
		wantGDP       float64 // exact μ-GDP, what fedtopic reports; NaN = not listed
		wantRDP       float64 // RDP with the improved conversion, orders 1.001…100
		wantRDPWithin float64
	}{
		{name: "one release", sigma: 4.530877117, releases: 1, delta: 1e-6, wantGDP: 0.9274, wantRDP: 1.0000},
		{name: "ten releases", sigma: 5, releases: 10, delta: 1e-5, wantGDP: 2.5944, wantRDP: 2.8136},
		// These two are known to fewer digits (≈ 380.0 and 390.86); the
		// rows hold a brute-force evaluation of the same
		// formulas (analytic δ(ε) by bisection; RDP over all 99,000
		// orders) to 4 decimals, which rounds to the listed values.
		{name: "PC-TD σ = 0.25", sigma: 0.25, releases: 35, delta: 1e-5, wantGDP: 380.0067, wantRDP: 390.8594},
		{name: "σ = 1", sigma: 1, releases: 1, delta: 1e-5, wantGDP: math.NaN(), wantRDP: 4.7284},
		{name: "σ = 2, ten releases", sigma: 2, releases: 10, delta: 1e-5, wantGDP: math.NaN(), wantRDP: 8.0784},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !math.IsNaN(tt.wantGDP) {
				ev := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: tt.sigma, Sensitivity: 1, Unit: "u", Count: tt.releases}
				c, err := Compose([]privacy.Event{ev}, tt.delta)
				const tol = 1e-4
				if err != nil || math.Abs(c.Epsilon-tt.wantGDP) > tol || c.Accountant != "gdp" {
					t.Errorf("Compose(%d × gaussian σ=%v, δ=%v) = %+v, %v; want ε = %v ± %v by gdp", tt.releases, tt.sigma, tt.delta, c, err, tt.wantGDP, tol)
				}
			}
			a, err := NewRDP(nil)
			if err != nil {
				t.Fatal(err)
			}
			a.AddGaussian(tt.sigma, 1, tt.releases)
			got, order, err := a.Epsilon(tt.delta)
			const tol = 1e-4
			if err != nil || math.Abs(got-tt.wantRDP) > tol {
				t.Errorf("RDP ε(%d × σ=%v, δ=%v) = %v (order %v), %v; want %v ± %v", tt.releases, tt.sigma, tt.delta, got, order, err, tt.wantRDP, tol)
			}
		})
	}
}

func TestRDPOrdersNearOneDoNotGiveZero(t *testing.T) {
	// TF-Privacy issue 166: orders near 1 must not yield ε = 0.
	a, err := NewRDP([]float64{1.000001, 1.001})
	if err != nil {
		t.Fatal(err)
	}
	a.AddGaussian(1, 1, 1)
	eps, _, err := a.Epsilon(1e-5)
	if err != nil || eps < 1 {
		t.Errorf("RDP ε near order 1 = %v, %v; want a large positive bound", eps, err)
	}
	if _, err := NewRDP([]float64{1}); err == nil {
		t.Errorf("NewRDP([1]) = nil error; want order 1 refused")
	}
}

func TestRDPMechanisms(t *testing.T) {
	const delta = 1e-6
	tests := []struct {
		name string
		add  func(a *RDP)
		// upper is a bound the composition must not exceed: basic
		// composition for pure ε, or the unsampled Gaussian.
		upper float64
		lower float64
	}{
		{name: "pure ε=0.1 ×1000 beats basic 100", add: func(a *RDP) { a.AddPure(0.1, 1000) }, upper: 100, lower: 5},
		{name: "krr ε=0.1 k=100 ×1000 ≤ binary", add: func(a *RDP) { a.AddRandomizedResponse(0.1, 100, 1000) }, upper: 100, lower: 0.5},
		{name: "subsampled q=0.01 below unsampled", add: func(a *RDP) { a.AddSubsampledGaussian(1.1, 1, 0.01, 1000) }, upper: 30, lower: 0.3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _ := NewRDP(nil)
			tt.add(a)
			got, _, err := a.Epsilon(delta)
			if err != nil || got > tt.upper || got < tt.lower {
				t.Errorf("ε = %v, %v; want in [%v, %v]", got, err, tt.lower, tt.upper)
			}
		})
	}
	// Cross-checks: kRR over k = 2 is the pure bound; the subsampled
	// Gaussian with q = 1 is the Gaussian; amplification helps.
	a, b := mustRDP(t), mustRDP(t)
	a.AddRandomizedResponse(0.5, 2, 7)
	b.AddPure(0.5, 7)
	ea, _, _ := a.Epsilon(delta)
	eb, _, _ := b.Epsilon(delta)
	if ea != eb {
		t.Errorf("binary kRR %v != pure bound %v", ea, eb)
	}
	k, p := mustRDP(t), mustRDP(t)
	k.AddRandomizedResponse(0.5, 50, 7)
	ek, _, _ := k.Epsilon(delta)
	if ek > ea {
		t.Errorf("kRR with k = 50: ε = %v; want ≤ binary %v", ek, ea)
	}
	s, g := mustRDP(t), mustRDP(t)
	s.AddSubsampledGaussian(2, 1, 0.05, 100)
	g.AddGaussian(2, 1, 100)
	es, _, _ := s.Epsilon(delta)
	eg, _, _ := g.Epsilon(delta)
	if es >= eg {
		t.Errorf("subsampled Gaussian ε = %v; want below unsampled %v", es, eg)
	}
	p.AddSubsampledGaussian(2, 1, 1, 100)
	if ep, _, _ := p.Epsilon(delta); ep != eg {
		t.Errorf("subsampled with q = 1: ε = %v; want the Gaussian's %v", ep, eg)
	}
}

// TestLaplaceRDPKnownValue checks Mironov's Laplace formula at α = 2,
// ε = 1: log(⅔e + ⅓e⁻²), and that no order exceeds ε.
func TestLaplaceRDPKnownValue(t *testing.T) {
	a, _ := NewRDP(nil)
	a.AddLaplace(1, 1)
	if want := math.Log(2.0/3*math.E + math.Exp(-2)/3); math.Abs(a.At(2)-want) > 1e-15 {
		t.Errorf("Laplace ε(2) = %v; want %v", a.At(2), want)
	}
	for _, o := range a.Orders() {
		if a.At(o) > 1 {
			t.Fatalf("Laplace ε(%v) = %v; want ≤ ε = 1", o, a.At(o))
		}
	}
}

// TestSubsampledGaussianKnownValue checks the integer-order formula against
// a direct evaluation: α = 2, q = 0.5, z = 1 gives
// ε(2) = log(0.25 + 0.5 + 0.25·e) = log(1.4295704571…).
func TestSubsampledGaussianKnownValue(t *testing.T) {
	a, _ := NewRDP([]float64{2, 2.5})
	a.AddSubsampledGaussian(1, 1, 0.5, 1)
	if want := math.Log(0.25 + 0.5 + 0.25*math.E); math.Abs(a.At(2)-want) > 1e-15 {
		t.Errorf("ε(2) = %v; want %v", a.At(2), want)
	}
	if !math.IsInf(a.At(2.5), 1) {
		t.Errorf("ε(2.5) = %v; want +Inf for a fractional order", a.At(2.5))
	}
}

func mustRDP(t *testing.T) *RDP {
	a, err := NewRDP(nil)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestCompose(t *testing.T) {
	lap := privacy.Event{Mechanism: privacy.MechanismLaplace, Epsilon: 0.5, Sensitivity: 1, Unit: "document", Count: 3}
	rrp := privacy.Event{Mechanism: privacy.MechanismRRP, Epsilon: 1, Delta: 1e-7, Unit: "document", Count: 2, Assumption: privacy.RRPAssumption}
	gau := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: 5, Sensitivity: 1, Unit: "document", Count: 10}
	dg := privacy.Event{Mechanism: privacy.MechanismDiscreteGaussian, Sigma: 5, Sensitivity: 1, Unit: "document", Count: 10}
	tests := []struct {
		name       string
		events     []privacy.Event
		delta      float64
		wantEps    float64
		wantDelta  float64
		accountant string
		tol        float64
	}{
		{name: "pure adds up", events: []privacy.Event{lap, lap}, delta: 1e-5, wantEps: 3, wantDelta: 0, accountant: "pure"},
		{name: "basic adds ε and δ", events: []privacy.Event{lap, rrp}, delta: 1e-5, wantEps: 3.5, wantDelta: 2e-7, accountant: "basic"},
		{name: "gaussian alone is exact gdp", events: []privacy.Event{gau}, delta: 1e-5, wantEps: 2.5944, wantDelta: 1e-5, accountant: "gdp", tol: 1e-4},
		{name: "gaussian split into counts merges", events: []privacy.Event{{Mechanism: privacy.MechanismGaussian, Sigma: 5, Sensitivity: 1, Unit: "document", Count: 4}, {Mechanism: privacy.MechanismGaussian, Sigma: 5, Sensitivity: 1, Unit: "document", Count: 6}}, delta: 1e-5, wantEps: 2.5944, wantDelta: 1e-5, accountant: "gdp", tol: 1e-4},
		{name: "discrete gaussian goes through rdp", events: []privacy.Event{dg}, delta: 1e-5, wantEps: 2.8136, wantDelta: 1e-5, accountant: "rdp", tol: 1e-4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Compose(tt.events, tt.delta)
			if err != nil || math.Abs(c.Epsilon-tt.wantEps) > tt.tol+1e-12 || math.Abs(c.Delta-tt.wantDelta) > 1e-18 || c.Accountant != tt.accountant {
				t.Errorf("Compose = %+v, %v; want ε = %v, δ = %v by %s", c, err, tt.wantEps, tt.wantDelta, tt.accountant)
			}
		})
	}
	// Gaussian with pure and RRP: δ for the Gaussian part is what RRP
	// leaves, and the assumption is carried.
	c, err := Compose([]privacy.Event{lap, rrp, gau}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	eg, _ := GaussianEpsilon(1e-5-2e-7, math.Sqrt(10)/5)
	if c.Epsilon > 3.5+eg+1e-12 || c.Delta != 1e-5 || len(c.Assumptions) != 1 {
		t.Errorf("Compose(lap, rrp, gau) = %+v; want ε ≤ %v, δ = 1e-5, one assumption", c, 3.5+eg)
	}
	// Many small pure releases with a Gaussian: folding them into RDP
	// must not be worse than adding them.
	many := privacy.Event{Mechanism: privacy.MechanismLaplace, Epsilon: 0.01, Unit: "document", Count: 2000}
	c2, err := Compose([]privacy.Event{many, gau}, 1e-5)
	if err != nil || c2.Epsilon >= 20+2.5944 {
		t.Errorf("Compose(2000 × ε=0.01, gaussian) = %+v, %v; want below basic 22.59", c2, err)
	}
	if _, err := Compose([]privacy.Event{lap, {Mechanism: privacy.MechanismLaplace, Epsilon: 1, Unit: "word occurrence", Count: 1}}, 1e-5); !errors.Is(err, privacy.ErrInvalidParameter) {
		t.Errorf("Compose with mixed units: err = %v; want ErrInvalidParameter", err)
	}
	if _, err := Compose([]privacy.Event{gau}, 0); err == nil {
		t.Errorf("Compose(gaussian, δ = 0) = nil error; want an error")
	}
	if _, err := Compose([]privacy.Event{{Mechanism: "laplace", Epsilon: math.NaN(), Unit: "u", Count: 1}}, 1e-5); err == nil {
		t.Errorf("Compose(ε = NaN) = nil error; want an error")
	}
}

func TestGroup(t *testing.T) {
	ftm := privacy.Event{Mechanism: privacy.MechanismThresholdedLaplace, Epsilon: 11, Sensitivity: 1, Unit: "word occurrence", Count: 1}
	g, err := Group(ftm, 200, "document")
	if err != nil || g.Epsilon != 2200 || g.Unit != "document" {
		t.Errorf("Group(ε = 11, 200) = %+v, %v; want ε = 2200 per document", g, err)
	}
	gau := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: 5, Sensitivity: 1, Unit: "word occurrence", Count: 10}
	gg, err := Group(gau, 3, "document")
	if err != nil || gg.Sensitivity != 3 || gg.Mechanism != privacy.MechanismGaussian {
		t.Errorf("Group(gaussian, 3) = %+v, %v; want sensitivity 3", gg, err)
	}
	ad := privacy.Event{Mechanism: privacy.MechanismRRP, Epsilon: 0.1, Delta: 1e-6, Unit: "tuple", Count: 1}
	ga, err := Group(ad, 2, "user")
	if want := 2 * math.Exp(0.1) * 1e-6; err != nil || math.Abs(ga.Delta-want) > 1e-20 || ga.Epsilon != 0.2 {
		t.Errorf("Group((0.1, 1e-6), 2) = %+v, %v; want (0.2, %v)", ga, err, want)
	}
	if _, err := Group(privacy.Event{Mechanism: privacy.MechanismRRP, Epsilon: 1, Delta: 0.1, Unit: "tuple", Count: 1}, 100, "user"); err == nil {
		t.Errorf("Group with δ overflowing 1: got nil error")
	}
}

// TestRDPSearchFindsGridMinimum compares Epsilon's coarse-to-fine search
// with a scan of every order, for each kind of curve and mixtures.
func TestRDPSearchFindsGridMinimum(t *testing.T) {
	cases := []struct {
		name string
		add  func(a *RDP)
	}{
		{"gaussian", func(a *RDP) { a.AddGaussian(3, 1, 20) }},
		{"gaussian tiny σ", func(a *RDP) { a.AddGaussian(0.25, 1, 35) }},
		{"pure", func(a *RDP) { a.AddPure(0.3, 50) }},
		{"laplace and gaussian", func(a *RDP) { a.AddLaplace(0.5, 4); a.AddGaussian(8, 1, 3) }},
		{"krr", func(a *RDP) { a.AddRandomizedResponse(1, 1000, 30) }},
		{"subsampled", func(a *RDP) { a.AddSubsampledGaussian(1.2, 1, 0.02, 500) }},
	}
	for _, tc := range cases {
		for _, delta := range []float64{1e-3, 1e-5, 1e-9} {
			a := mustRDP(t)
			tc.add(a)
			got, _, err := a.Epsilon(delta)
			if err != nil {
				t.Fatal(err)
			}
			best := math.Inf(1)
			for _, o := range a.Orders() {
				if r := a.At(o); !math.IsInf(r, 1) {
					best = math.Min(best, r+math.Log((o-1)/o)-(math.Log(delta)+math.Log(o))/(o-1))
				}
			}
			if got != math.Max(best, 0) {
				t.Errorf("%s, δ = %v: Epsilon = %v; want the grid minimum %v", tc.name, delta, got, best)
			}
		}
	}
}
