package synth

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fedtopic/fedtopic/internal/rng"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		wantErr bool
	}{
		{name: "zero value", cfg: Config{}},
		{name: "planted", cfg: Config{K: 5, V: 5, Structure: Planted, Noise: 0.5}},
		{name: "sentences", cfg: Config{SentLen: 4}},
		{name: "negative k", cfg: Config{K: -1}, wantErr: true},
		{name: "negative v", cfg: Config{V: -3}, wantErr: true},
		{name: "negative docs", cfg: Config{Docs: -1}, wantErr: true},
		{name: "short docs", cfg: Config{DocLen: 0.5}, wantErr: true},
		{name: "nan alpha", cfg: Config{Alpha: math.NaN()}, wantErr: true},
		{name: "negative beta", cfg: Config{Beta: -1}, wantErr: true},
		{name: "unknown structure", cfg: Config{Structure: "grid"}, wantErr: true},
		{name: "noise one", cfg: Config{Noise: 1}, wantErr: true},
		{name: "short sentences", cfg: Config{SentLen: 0.5}, wantErr: true},
		{name: "planted v < k", cfg: Config{K: 10, V: 5, Structure: Planted}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err != nil) != tt.wantErr {
				t.Errorf("Config%+v.Validate() = %v; want error %v", tt.cfg, err, tt.wantErr)
			}
		})
	}
}

func TestGenerateValidatesConfig(t *testing.T) {
	if _, err := Generate(Config{K: -2}, rng.New(1)); err == nil {
		t.Error("Generate(K: -2) = nil error; want an error")
	}
}

func TestGenerateShape(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{name: "dirichlet", cfg: Config{K: 4, V: 30, Docs: 50, DocLen: 20}},
		{name: "planted", cfg: Config{K: 4, V: 30, Docs: 50, DocLen: 20, Structure: Planted}},
		{name: "fixed length", cfg: Config{K: 3, V: 10, Docs: 20, DocLen: 7, FixedLen: true}},
		{name: "sentences", cfg: Config{K: 4, V: 30, Docs: 50, DocLen: 20, SentLen: 5}},
		{name: "one-word sentences", cfg: Config{K: 2, V: 8, Docs: 10, DocLen: 5, SentLen: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Generate(tt.cfg, rng.Derive(3, tt.name))
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			c := d.Corpus
			if got, want := c.NumDocs(), tt.cfg.Docs; got != want {
				t.Fatalf("NumDocs() = %d; want %d", got, want)
			}
			if c.V != tt.cfg.V || len(d.Phi) != tt.cfg.K*tt.cfg.V || len(d.Theta) != tt.cfg.Docs*tt.cfg.K {
				t.Fatalf("V, len(Phi), len(Theta) = %d, %d, %d; want %d, %d, %d", c.V, len(d.Phi), len(d.Theta), tt.cfg.V, tt.cfg.K*tt.cfg.V, tt.cfg.Docs*tt.cfg.K)
			}
			if len(d.Z) != len(c.Words) || c.DocStart[0] != 0 || c.DocStart[c.NumDocs()] != len(c.Words) {
				t.Fatalf("len(Z) = %d, DocStart ends %d, %d; want %d, 0, %d", len(d.Z), c.DocStart[0], c.DocStart[c.NumDocs()], len(c.Words), len(c.Words))
			}
			for doc := 0; doc < c.NumDocs(); doc++ {
				n := c.DocStart[doc+1] - c.DocStart[doc]
				if n < 1 || (tt.cfg.FixedLen && n != int(tt.cfg.DocLen)) {
					t.Errorf("document %d has %d tokens; want ≥ 1 (exactly %v when fixed)", doc, n, tt.cfg.DocLen)
				}
			}
			for i, w := range c.Words {
				if w < 0 || int(w) >= c.V || d.Z[i] < 0 || int(d.Z[i]) >= tt.cfg.K {
					t.Fatalf("token %d: word %d, topic %d; want word in [0, %d), topic in [0, %d)", i, w, d.Z[i], c.V, tt.cfg.K)
				}
			}
			for k := 0; k < tt.cfg.K; k++ {
				if s := sum(d.Phi[k*c.V : (k+1)*c.V]); math.Abs(s-1) > 1e-9 {
					t.Errorf("row %d of Phi sums to %v; want 1", k, s)
				}
			}
			for doc := 0; doc < tt.cfg.Docs; doc++ {
				if s := sum(d.Theta[doc*tt.cfg.K : (doc+1)*tt.cfg.K]); math.Abs(s-1) > 1e-9 {
					t.Errorf("theta of document %d sums to %v; want 1", doc, s)
				}
			}
			if tt.cfg.SentLen == 0 {
				if c.HasUnits() {
					t.Errorf("HasUnits() = true without sentences")
				}
				return
			}
			checkUnits(t, d)
		})
	}
}

// checkUnits checks that sentences tile every document and that all words of
// a sentence share their topic.
func checkUnits(t *testing.T, d *Data) {
	t.Helper()
	c := d.Corpus
	if len(c.DocUnit) != c.NumDocs()+1 || c.UnitStart[0] != 0 || c.UnitStart[len(c.UnitStart)-1] != len(c.Words) {
		t.Fatalf("len(DocUnit) = %d, UnitStart ends %d, %d; want %d, 0, %d", len(c.DocUnit), c.UnitStart[0], c.UnitStart[len(c.UnitStart)-1], c.NumDocs()+1, len(c.Words))
	}
	for doc := 0; doc < c.NumDocs(); doc++ {
		if c.UnitStart[c.DocUnit[doc]] != c.DocStart[doc] || c.UnitStart[c.DocUnit[doc+1]] != c.DocStart[doc+1] {
			t.Fatalf("document %d: units do not tile the tokens [%d, %d)", doc, c.DocStart[doc], c.DocStart[doc+1])
		}
	}
	for u := 0; u+1 < len(c.UnitStart); u++ {
		a, b := c.UnitStart[u], c.UnitStart[u+1]
		if b <= a {
			t.Fatalf("unit %d is empty: [%d, %d)", u, a, b)
		}
		for i := a; i < b; i++ {
			if d.Z[i] != d.Z[a] {
				t.Fatalf("unit %d: token %d has topic %d, token %d has %d; want one topic per sentence", u, a, d.Z[a], i, d.Z[i])
			}
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	cfg := Config{K: 5, V: 40, Docs: 30, SentLen: 3}
	a, err := Generate(cfg, rng.Derive(9, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(cfg, rng.Derive(9, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Corpus.Words, b.Corpus.Words) || !slices.Equal(a.Phi, b.Phi) || !slices.Equal(a.Z, b.Z) || !slices.Equal(a.Corpus.UnitStart, b.Corpus.UnitStart) {
		t.Error("two Generate calls with the same seed differ")
	}
	c, err := Generate(cfg, rng.Derive(10, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Corpus.Words, c.Corpus.Words) {
		t.Error("Generate with seeds 9 and 10 gave the same words")
	}
}

func TestPlantedDisjoint(t *testing.T) {
	const k, v = 7, 50
	d, err := Generate(Config{K: k, V: v, Docs: 40, Structure: Planted}, rng.New(4))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range d.Corpus.Words {
		z := int(d.Z[i])
		if lo, hi := z*v/k, (z+1)*v/k; int(w) < lo || int(w) >= hi {
			t.Fatalf("token %d: word %d from topic %d; want a word of block [%d, %d)", i, w, z, lo, hi)
		}
	}
}

// TestWordFrequencies checks that the words drawn under each true topic follow
// that topic's row of Phi, with a chi-square test per topic.
func TestWordFrequencies(t *testing.T) {
	const k, v = 3, 12
	// Noise 0.3 keeps every expected cell count ≥ 0.3/12·(tokens per topic)
	// ≈ 800, far above the chi-square approximation's needs.
	d, err := Generate(Config{K: k, V: v, Docs: 2000, DocLen: 50, Alpha: 1, Structure: Planted, Noise: 0.3}, rng.New(5))
	if err != nil {
		t.Fatal(err)
	}
	counts := make([]float64, k*v)
	for i, w := range d.Corpus.Words {
		counts[int(d.Z[i])*v+int(w)]++
	}
	// Each of the k tests fails by chance with probability 1e-6/k, so the
	// whole test with probability at most 1e-6.
	crit := distuv.ChiSquared{K: v - 1}.Quantile(1 - 1e-6/k)
	for z := 0; z < k; z++ {
		row := counts[z*v : (z+1)*v]
		n := sum(row)
		var chi float64
		for w, o := range row {
			e := n * d.Phi[z*v+w]
			chi += (o - e) * (o - e) / e
		}
		if chi > crit {
			t.Errorf("topic %d: chi-square of word counts against Phi = %.1f; want ≤ %.1f", z, chi, crit)
		}
	}
}

// TestDocLengthMean checks the mean document length against DocLen: lengths
// are 1 + Poisson(DocLen − 1), so the sample mean of n documents has standard
// deviation √((DocLen−1)/n); 4.8916 standard deviations is the two-sided
// normal quantile for a false-failure rate of 1e-6.
func TestDocLengthMean(t *testing.T) {
	const docs, mean = 5000, 30.0
	d, err := Generate(Config{K: 3, V: 20, Docs: docs, DocLen: mean, WordsOnly: true}, rng.New(6))
	if err != nil {
		t.Fatal(err)
	}
	if d.Z != nil {
		t.Errorf("WordsOnly: len(Z) = %d; want nil", len(d.Z))
	}
	got := float64(d.Corpus.NumTokens()) / docs
	if tol := 4.8916 * math.Sqrt((mean-1)/docs); math.Abs(got-mean) > tol {
		t.Errorf("mean document length = %.3f; want %v ± %.3f", got, mean, tol)
	}
}

func sum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}
