package lm

import (
	"context"
	"math"
	"testing"

	"github.com/fedtopic/fedtopic/topic"
)

// twoTopics returns a model over 30 words: topic 0 puts 90% of its mass on
// words 0 … 9, topic 1 on words 10 … 19; words 20 … 29 share the rest.
func twoTopics() *topic.Model {
	const v = 30
	m := &topic.Model{K: 2, V: v, Phi: make([]float64, 2*v), Alpha: []float64{0.5, 0.5}, Beta: 0.01}
	for z := range 2 {
		for w := range v {
			p := 0.1 / 20
			if w/10 == z {
				p = 0.9 / 10
			}
			m.Phi[z*v+w] = p
		}
	}
	return m
}

func trained(t *testing.T) *NGram {
	t.Helper()
	ng, err := Train(context.Background(), randomCorpus(5, 30, 200), Config{})
	if err != nil {
		t.Fatalf("Train: %v", err)
	}
	return ng
}

// TestAdaptedLambdaZero checks that λ = 0 gives the n-gram model exactly,
// word by word and in Evaluate.
func TestAdaptedLambdaZero(t *testing.T) {
	ng := trained(t)
	a := &Adapted{NGram: ng, Topics: twoTopics(), Lambda: 0}
	docs := randomCorpus(6, 30, 40)
	var ll float64
	n := 0
	for d := range docs.NumDocs() {
		doc := docs.Doc(d)
		for i, w := range doc {
			dist, err := a.Dist(doc[:i])
			if err != nil {
				t.Fatalf("Dist: %v", err)
			}
			for v := range dist {
				if want := ng.Prob(doc[:i], int32(v)); dist[v] != want {
					t.Fatalf("λ = 0: Dist(%v)[%d] = %v; want the n-gram's %v", doc[:i], v, dist[v], want)
				}
			}
			ll += math.Log(ng.Prob(doc[:i], w))
			n++
		}
	}
	scores, err := Evaluate(context.Background(), ng, twoTopics(), docs, []float64{0}, 0)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	if got := scores[0]; got.LogLikelihood != ll || got.Tokens != n || got.Perplexity != math.Exp(-ll/float64(n)) {
		t.Errorf("Evaluate(λ = 0) = %+v; want log-likelihood %v over %d tokens", got, ll, n)
	}
	noTopics, err := Evaluate(context.Background(), ng, nil, docs, []float64{0}, 0)
	if err != nil || noTopics[0] != scores[0] {
		t.Errorf("Evaluate(no topics, λ = 0) = %+v, %v; want %+v", noTopics, err, scores[0])
	}
}

// TestAdaptedSumsToOne checks that the mixture is a distribution over the
// vocabulary for several λ and histories.
func TestAdaptedSumsToOne(t *testing.T) {
	ng := trained(t)
	for _, lambda := range []float64{0.1, 0.5, 0.9} {
		for _, prefix := range [][]int32{nil, {3}, {3, 12, 25}, {29, 29, 29, 0, 1}} {
			a := &Adapted{NGram: ng, Topics: twoTopics(), Lambda: lambda, Steps: 2}
			dist, err := a.Dist(prefix)
			if err != nil {
				t.Fatalf("Dist: %v", err)
			}
			var s float64
			for _, p := range dist {
				s += p
			}
			if math.Abs(s-1) > 1e-12 {
				t.Errorf("λ = %v: Σ_w Dist(%v)[w] = %.15g; want 1", lambda, prefix, s)
			}
		}
	}
}

// TestEvaluateMatchesDist checks that Evaluate scores each token with the
// mixture of its prefix only (never the word being predicted): its
// log-likelihood is the sum of log Dist(prefix)[w].
func TestEvaluateMatchesDist(t *testing.T) {
	ng := trained(t)
	docs := randomCorpus(7, 30, 30)
	lambdas := []float64{0, 0.1, 0.4}
	scores, err := Evaluate(context.Background(), ng, twoTopics(), docs, lambdas, 2)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	for j, l := range lambdas {
		a := &Adapted{NGram: ng, Topics: twoTopics(), Lambda: l, Steps: 2}
		var ll float64
		for d := range docs.NumDocs() {
			doc := docs.Doc(d)
			for i, w := range doc {
				dist, err := a.Dist(doc[:i])
				if err != nil {
					t.Fatalf("Dist: %v", err)
				}
				ll += math.Log(dist[w])
			}
		}
		if got := scores[j]; got.Lambda != l || math.Abs(got.LogLikelihood-ll) > 1e-9*math.Abs(ll) {
			t.Errorf("Evaluate λ = %v: %+v; want log-likelihood %v", l, got, ll)
		}
	}
}

// TestHistoryFoldIn checks P(z|C): the prior mean for the empty history,
// a distribution always, and a history of topic-0 words moving most of
// the mass to topic 0.
func TestHistoryFoldIn(t *testing.T) {
	h, err := NewHistory(twoTopics(), DefaultSteps)
	if err != nil {
		t.Fatalf("NewHistory: %v", err)
	}
	if th := h.Theta(); th[0] != 0.5 || th[1] != 0.5 {
		t.Errorf("empty history: θ = %v; want [0.5 0.5]", th)
	}
	// Five topic-0 words: the likelihood ratio 0.09/0.005 = 18 per word
	// leaves topic 1 only its prior share, (0.5 + ε)/(1 + 5) ≈ 0.08.
	for _, w := range []int32{1, 2, 3, 4, 5} {
		h.Add(w)
		var s float64
		for _, p := range h.Theta() {
			s += p
		}
		if math.Abs(s-1) > 1e-12 {
			t.Errorf("after %d: Σ θ = %v; want 1", w, s)
		}
	}
	if th := h.Theta(); !(th[0] > 0.9) {
		t.Errorf("after five topic-0 words: θ = %v; want θ_0 > 0.9", th)
	}
	if got, want := h.TopicProb(0), h.Theta()[0]*0.09+h.Theta()[1]*0.005; math.Abs(got-want) > 1e-15 {
		t.Errorf("TopicProb(0) = %v; want %v", got, want)
	}
	h.Reset()
	if th := h.Theta(); th[0] != 0.5 {
		t.Errorf("after Reset: θ = %v; want [0.5 0.5]", th)
	}
}

// TestAdaptedErrors checks that bad settings are refused.
func TestAdaptedErrors(t *testing.T) {
	ng := trained(t)
	small := twoTopics()
	small.V, small.Phi = 10, small.Phi[:20]
	for i := range small.Phi {
		small.Phi[i] = 0.1
	}
	tests := []struct {
		name string
		a    Adapted
	}{
		{name: "λ = 1", a: Adapted{NGram: ng, Topics: twoTopics(), Lambda: 1}},
		{name: "negative λ", a: Adapted{NGram: ng, Topics: twoTopics(), Lambda: -0.1}},
		{name: "NaN λ", a: Adapted{NGram: ng, Topics: twoTopics(), Lambda: math.NaN()}},
		{name: "other vocabulary", a: Adapted{NGram: ng, Topics: small, Lambda: 0.1}},
		{name: "no topics", a: Adapted{NGram: ng, Lambda: 0.1}},
		{name: "negative steps", a: Adapted{NGram: ng, Topics: twoTopics(), Lambda: 0.1, Steps: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d, err := tt.a.Dist(nil); err == nil {
				t.Errorf("Dist = %v, nil; want an error", d[:2])
			}
		})
	}
	if s, err := Evaluate(context.Background(), ng, nil, randomCorpus(1, 30, 3), []float64{0.1}, 0); err == nil {
		t.Errorf("Evaluate(no topics, λ = 0.1) = %+v, nil; want an error", s)
	}
}
