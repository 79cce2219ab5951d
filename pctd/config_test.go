package pctd

import (
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; "" = valid
	}{
		{name: "defaults need a length bound", cfg: Config{}, want: "max_doc_tokens"},
		{name: "ssp", cfg: Config{MaxDocTokens: 30}},
		{name: "no noise needs no bound", cfg: Config{NoNoise: true}},
		{name: "paper", cfg: Config{Variant: VariantUnit, Sigma: PaperSigma}},
		{name: "unit per document", cfg: Config{Variant: VariantUnit, Sigma: 1, Unit: UnitDocument}, want: "max_doc_tokens"},
		{name: "ssp per word", cfg: Config{MaxDocTokens: 9, Unit: UnitWord}, want: "documents only"},
		{name: "both sigma and epsilon", cfg: Config{MaxDocTokens: 9, Sigma: 1, Epsilon: 2}, want: "give one"},
		{name: "bad variant", cfg: Config{Variant: "plsa"}, want: "variant"},
		{name: "bad units", cfg: Config{NoNoise: true, Units: "window:0"}, want: "units"},
		{name: "corpus units", cfg: Config{NoNoise: true, Units: UnitsCorpus}},
		{name: "literal ssp", cfg: Config{MaxDocTokens: 9, NoisePath: PathLiteral}, want: "unit variant only"},
		{name: "negative sigma", cfg: Config{Variant: VariantUnit, Sigma: -1}, want: "sigma"},
		{name: "NaN tau", cfg: Config{NoNoise: true, RelationTau: math.NaN()}, want: "relation_tau"},
		{name: "cutoff above 1", cfg: Config{NoNoise: true, RelationCutoff: 1.5}, want: "relation_cutoff"},
		{name: "delta 1", cfg: Config{NoNoise: true, Delta: 1}, want: "delta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate(%+v) = %v; want nil", tt.cfg, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate(%+v) = %v; want an error mentioning %q", tt.cfg, err, tt.want)
			}
		})
	}
}

// TestEvents checks each variant's cost: T Gaussian releases of the
// sensitivity doc.go derives, and for a target ε the calibrated noise
// composing back to exactly that ε.
func TestEvents(t *testing.T) {
	tests := []struct {
		name     string
		cfg      Config
		wantSens float64
		wantStd  float64 // 0: calibrated, checked through wantEps
		wantUnit string
		wantEps  float64 // at δ = 1e-5 over the run; 0: not checked
	}{
		{name: "paper, per word", cfg: Config{Variant: VariantUnit, Sigma: 0.25, Rounds: 35}, wantSens: 1, wantStd: 0.25, wantUnit: UnitWord},
		{name: "paper, per document", cfg: Config{Variant: VariantUnit, Sigma: 0.25, Rounds: 35, MaxDocTokens: 30, Unit: UnitDocument}, wantSens: 30, wantStd: 0.25, wantUnit: UnitDocument},
		{name: "ssp, given sigma", cfg: Config{Sigma: 2, Rounds: 20, MaxDocTokens: 25}, wantSens: 5, wantStd: 10, wantUnit: UnitDocument},
		{name: "ssp, ε = 10", cfg: Config{Epsilon: 10, Rounds: 20, MaxDocTokens: 30}, wantSens: math.Sqrt(30), wantUnit: UnitDocument, wantEps: 10},
		{name: "ssp, ε = 1", cfg: Config{Epsilon: 1, Rounds: 7, MaxDocTokens: 16}, wantSens: 4, wantUnit: UnitDocument, wantEps: 1},
		{name: "unit, ε = 3 per word", cfg: Config{Variant: VariantUnit, Epsilon: 3, Rounds: 10}, wantSens: 1, wantUnit: UnitWord, wantEps: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs, err := tt.cfg.Events()
			if err != nil || len(evs) != 1 {
				t.Fatalf("Events() = %v, %v; want one event", evs, err)
			}
			e := evs[0]
			rounds := tt.cfg.Resolved().Rounds
			if e.Mechanism != privacy.MechanismGaussian || e.Count != rounds || e.Unit != tt.wantUnit || math.Abs(e.Sensitivity-tt.wantSens) > 1e-12 {
				t.Errorf("Events() = %+v; want %d Gaussian releases of sensitivity %v per %s", e, rounds, tt.wantSens, tt.wantUnit)
			}
			if tt.wantStd > 0 && e.Sigma != tt.wantStd {
				t.Errorf("Events() noise std = %v; want %v", e.Sigma, tt.wantStd)
			}
			if tt.wantEps > 0 {
				c, err := accountant.Compose(evs, 1e-5)
				if err != nil || math.Abs(c.Epsilon-tt.wantEps) > 1e-6*tt.wantEps {
					t.Errorf("Compose(Events()) = %+v, %v; want ε = %v", c, err, tt.wantEps)
				}
			}
			if got := tt.cfg.NoiseStd(); got != e.Sigma {
				t.Errorf("NoiseStd() = %v; the event says %v", got, e.Sigma)
			}
		})
	}
	if evs, err := (Config{NoNoise: true}).Events(); evs != nil || err != nil {
		t.Errorf("Events() with no noise = %v, %v; want nil, nil", evs, err)
	}
}

// TestPaperCost states the paper's setting plainly: σ = 0.25 and 35
// iterations are μ = √35/0.25 ≈ 23.7 GDP per word occurrence, ε ≈ 380 at
// δ = 1e-5, and the document-level ledger event equals accountant.Group's
// conversion over the clipped length.
func TestPaperCost(t *testing.T) {
	cfg := Config{Variant: VariantUnit, Sigma: 0.25, Rounds: 35, MaxDocTokens: 30, Unit: UnitDocument}
	w, err := accountant.Compose(cfg.WordEvents(), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(w.Mu-math.Sqrt(35)/0.25) > 1e-9 || w.Epsilon < 370 || w.Epsilon > 390 {
		t.Errorf("paper's cost per word occurrence = μ %v, ε %v; want μ = √35/0.25 ≈ 23.66, ε ≈ 380", w.Mu, w.Epsilon)
	}
	evs, err := cfg.Events()
	if err != nil {
		t.Fatal(err)
	}
	g, err := accountant.Group(cfg.WordEvents()[0], 30, UnitDocument)
	if err != nil {
		t.Fatal(err)
	}
	if evs[0] != g {
		t.Errorf("document-level event %+v; want accountant.Group's %+v", evs[0], g)
	}
}
