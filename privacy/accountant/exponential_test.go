package accountant

import (
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/privacy"
)

// TestComposeExponential checks that the exponential mechanism's event
// (the private quantile) composes as a pure ε-DP release: its ε adds to
// other pure releases, it is folded into the RDP account beside Gaussian
// releases exactly as a Laplace release of the same ε, and group privacy
// multiplies its ε.
func TestComposeExponential(t *testing.T) {
	q := privacy.Event{Mechanism: privacy.MechanismExponential, Epsilon: 0.1, Sensitivity: 1, Unit: "document", Count: 1}
	lap := privacy.Event{Mechanism: privacy.MechanismLaplace, Epsilon: 0.1, Sensitivity: 1, Unit: "document", Count: 1}
	gauss := privacy.Event{Mechanism: privacy.MechanismGaussian, Sigma: 20, Sensitivity: 1, Unit: "document", Count: 30}

	c, err := Compose([]privacy.Event{q, lap}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if c.Epsilon != 0.2 || c.Delta != 0 || c.Accountant != "pure" || c.Releases != 2 {
		t.Errorf("Compose(exponential 0.1, laplace 0.1) = %+v; want ε = 0.2, δ = 0 by pure composition", c)
	}

	withQ, err := Compose([]privacy.Event{gauss, q}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	withLap, err := Compose([]privacy.Event{gauss, lap}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Compose([]privacy.Event{gauss}, 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if withQ.Epsilon != withLap.Epsilon || withQ.Accountant != withLap.Accountant {
		t.Errorf("Gaussian + exponential = %+v; want as Gaussian + Laplace of the same ε, %+v", withQ, withLap)
	}
	if !(withQ.Epsilon > alone.Epsilon && withQ.Epsilon <= alone.Epsilon+0.1) {
		t.Errorf("Gaussian + exponential ε = %v; want in (%v, %v]", withQ.Epsilon, alone.Epsilon, alone.Epsilon+0.1)
	}

	g, err := Group(q, 8, "user")
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(g.Epsilon-0.8) > 1e-15 || g.Delta != 0 || g.Unit != "user" {
		t.Errorf("Group(exponential 0.1, 8) = %+v; want ε = 0.8, δ = 0 per user", g)
	}

	bad := q
	bad.Epsilon = 0
	if _, err := Compose([]privacy.Event{bad}, 1e-5); err == nil {
		t.Errorf("Compose(exponential at ε = 0) = nil error; want the event refused")
	}
}
