package accountant

import (
	"testing"

	"github.com/fedtopic/fedtopic/privacy"
)

// BenchmarkCompose measures an accountant query of a mixed run (issue 3:
// under 10 ms each):
//
//	go test -run '^$' -bench . -cpu 1 ./privacy/accountant
func BenchmarkCompose(b *testing.B) {
	events := []privacy.Event{
		{Mechanism: privacy.MechanismGaussian, Sigma: 5, Sensitivity: 1, Unit: "u", Count: 10},
		{Mechanism: privacy.MechanismDiscreteGaussian, Sigma: 8, Sensitivity: 1, Unit: "u", Count: 50},
		{Mechanism: privacy.MechanismLaplace, Epsilon: 0.05, Unit: "u", Count: 100},
		{Mechanism: privacy.MechanismRRP, Epsilon: 0.1, Delta: 1e-9, Unit: "u", Count: 20},
		{Mechanism: privacy.MechanismSubsampledGaussian, Sigma: 1.1, Sensitivity: 1, SamplingRate: 0.2, Unit: "u", Count: 100},
	}
	for b.Loop() {
		if _, err := Compose(events, 1e-5); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/query")
}

func BenchmarkGaussianSigma(b *testing.B) {
	for b.Loop() {
		if _, err := GaussianSigma(1, 1e-5, 1); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(b.N), "ms/query")
}
