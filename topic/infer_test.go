package topic

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
)

// docsOf builds a corpus from word-id lists.
func docsOf(v int, docs ...[]int32) *corpus.Corpus {
	c := &corpus.Corpus{V: v, DocStart: []int{0}}
	for _, d := range docs {
		c.Words = append(c.Words, d...)
		c.DocStart = append(c.DocStart, len(c.Words))
	}
	return c
}

func TestInferHandComputed(t *testing.T) {
	// Topic 0 owns words 0 and 1, topic 1 owns word 2, no topic has word 3:
	// every token's topic is forced, so θ_d = (C_dk + α_k) / (N_d + Σα)
	// exactly, whatever the random draws.
	m := &Model{
		K: 2, V: 4,
		Phi:   []float64{0.5, 0.5, 0, 0, 0, 0, 1, 0},
		Vocab: []string{"a", "b", "c", "d"},
		Alpha: []float64{0.1, 0.2},
	}
	docs := docsOf(4,
		[]int32{0, 1, 0, 2}, // C = (3, 1), N = 4
		nil,                 // empty: θ = α/Σα
		[]int32{3, 3, 2},    // word 3 is skipped: C = (0, 1), N = 1
	)
	tests := []struct {
		name string
		cfg  InferConfig
		want []float64
	}{
		{name: "model alpha", cfg: InferConfig{Seed: 1}, want: []float64{
			3.1 / 4.3, 1.2 / 4.3,
			0.1 / 0.3, 0.2 / 0.3,
			0.1 / 1.3, 1.2 / 1.3,
		}},
		{name: "alpha override", cfg: InferConfig{Seed: 1, Alpha: 1, Sweeps: 3, BurnIn: 1}, want: []float64{
			4.0 / 6, 2.0 / 6,
			0.5, 0.5,
			1.0 / 3, 2.0 / 3,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.Infer(context.Background(), docs, tt.cfg)
			if err != nil {
				t.Fatalf("Infer: %v", err)
			}
			for i := range tt.want {
				if math.Abs(got[i]-tt.want[i]) > 1e-15 {
					t.Errorf("Infer θ = %v; want %v", got, tt.want)
					break
				}
			}
		})
	}
}

func TestInferMatchesExactPosterior(t *testing.T) {
	// Three overlapping topics and a three-token document: the posterior
	// over the 27 topic assignments is enumerated exactly, p(z) ∝
	// Π_i φ_{z_i,w_i} · Π_k Γ(C_k + α)/Γ(α), and E[θ̂_k] = (E[C_k] + α) /
	// (N + Kα). Each of D independent documents gives one θ̂ (an average
	// over 30 kept sweeps); their mean must lie within z·SE of the exact
	// value, SE the empirical standard deviation over √D. z = 4.65 is the
	// two-sided normal quantile for 1e-5/3, so the three coordinates
	// together fail by chance with probability ≤ 1e-5. Burn-in bias is
	// negligible: the chain on 27 states mixes in a few sweeps. With
	// D = 20,000 the SE is about 0.0004, so sampling with α off by 30%
	// (a shift of about 0.004) fails the test.
	const alpha = 0.5
	m := &Model{
		K: 3, V: 3,
		Phi:   []float64{0.6, 0.3, 0.1, 0.2, 0.5, 0.3, 0.1, 0.2, 0.7},
		Vocab: []string{"a", "b", "c"},
		Alpha: []float64{alpha, alpha, alpha},
	}
	doc := []int32{0, 1, 2}
	var want [3]float64
	total := 0.0
	for z0 := range 3 {
		for z1 := range 3 {
			for z2 := range 3 {
				z := [3]int{z0, z1, z2}
				var c [3]float64
				p := 1.0
				for i, k := range z {
					p *= m.Phi[k*3+int(doc[i])]
					c[k]++
				}
				for k := range 3 {
					lg, _ := math.Lgamma(c[k] + alpha)
					lg0, _ := math.Lgamma(alpha)
					p *= math.Exp(lg - lg0)
				}
				total += p
				for k := range 3 {
					want[k] += p * c[k]
				}
			}
		}
	}
	for k := range want {
		want[k] = (want[k]/total + alpha) / (3 + 3*alpha)
	}
	const nd = 20000
	docs := make([][]int32, nd)
	for d := range docs {
		docs[d] = doc
	}
	theta, err := m.Infer(context.Background(), docsOf(3, docs...), InferConfig{Seed: 3, Sweeps: 40, BurnIn: 10})
	if err != nil {
		t.Fatalf("Infer: %v", err)
	}
	for k := range 3 {
		mean, sq := 0.0, 0.0
		for d := range nd {
			mean += theta[d*3+k]
		}
		mean /= nd
		for d := range nd {
			sq += (theta[d*3+k] - mean) * (theta[d*3+k] - mean)
		}
		se := math.Sqrt(sq/(nd-1)) / math.Sqrt(nd)
		if math.Abs(mean-want[k]) > 4.65*se {
			t.Errorf("mean θ̂_%d over %d documents = %.5f; want %.5f ± %.5f (4.65 SE)", k, nd, mean, want[k], 4.65*se)
		}
	}
}

func TestInferWorkersDoNotChangeResult(t *testing.T) {
	m, docs := synthModel(t, 4, synth.Config{K: 10, V: 200, Beta: 0.3, Docs: 3*InferBlockDocs + 17, DocLen: 20})
	var first []float64
	for _, workers := range []int{1, 2, 7} {
		theta, err := m.Infer(context.Background(), docs, InferConfig{Seed: 9, Workers: workers})
		if err != nil {
			t.Fatalf("Infer(workers %d): %v", workers, err)
		}
		for d := range docs.NumDocs() {
			s := 0.0
			for _, x := range theta[d*m.K : (d+1)*m.K] {
				s += x
			}
			if math.Abs(s-1) > 1e-12 {
				t.Fatalf("Infer(workers %d): θ row %d sums to %v; want 1", workers, d, s)
			}
		}
		if first == nil {
			first = theta
			continue
		}
		for i := range first {
			if theta[i] != first[i] {
				t.Fatalf("Infer(workers %d) θ[%d] = %v; with 1 worker %v", workers, i, theta[i], first[i])
			}
		}
	}
	other, err := m.Infer(context.Background(), docs, InferConfig{Seed: 10})
	if err != nil {
		t.Fatal(err)
	}
	same := true
	for i := range other {
		same = same && other[i] == first[i]
	}
	if same {
		t.Error("Infer with seeds 9 and 10 gave identical θ; want the seed to matter")
	}
}

func TestInferErrors(t *testing.T) {
	m := tinyModel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		docs *corpus.Corpus
		cfg  InferConfig
		want string
	}{
		{name: "word id", ctx: context.Background(), docs: docsOf(9, []int32{0}, []int32{1, 8}), want: "document 1 token 1: word id 8 outside"},
		{name: "negative sweeps", ctx: context.Background(), docs: docsOf(4), cfg: InferConfig{Sweeps: -1}, want: "sweeps = -1"},
		{name: "burn-in", ctx: context.Background(), docs: docsOf(4), cfg: InferConfig{Sweeps: 5, BurnIn: 5}, want: "burn-in = 5, want fewer than the 5 sweeps"},
		{name: "alpha", ctx: context.Background(), docs: docsOf(4), cfg: InferConfig{Alpha: math.NaN(), Workers: -1}, want: "alpha = NaN, want finite and ≥ 0\ntopic: infer: workers = -1"},
		{name: "canceled", ctx: canceled, docs: docsOf(4, []int32{0}), want: "context canceled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := m.Infer(tt.ctx, tt.docs, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Infer error = %v; want one containing %q", err, tt.want)
			}
		})
	}
	if _, err := m.Infer(canceled, docsOf(4, []int32{0}), InferConfig{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Infer(canceled) = %v; want context.Canceled", err)
	}
}

// BenchmarkInfer measures θ for 10,000 short documents (15 tokens) at
// K = 50 over V = 5,000, the inference target of the project (under one
// second).
func BenchmarkInfer(b *testing.B) {
	m, docs := synthModel(b, 6, synth.Config{K: 50, V: 5000, Beta: 0.1, Docs: 10000, DocLen: 15, FixedLen: true})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Infer(context.Background(), docs, InferConfig{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(docs.NumDocs())*float64(b.N)/b.Elapsed().Seconds(), "docs/s")
}
