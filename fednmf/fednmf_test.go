package fednmf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/privacy/accountant"
	"github.com/fedtopic/fedtopic/sim"
)

// planted returns a corpus of k planted topics, each on its own block of
// v/k words, and its vocabulary.
func planted(t testing.TB, k, v, docs int) (*corpus.Corpus, []string) {
	t.Helper()
	data, err := synth.Generate(synth.Config{K: k, V: v, Docs: docs, DocLen: 12, Alpha: 0.05, Structure: synth.Planted}, rng.Derive(1, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	vocab := make([]string, v)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%03d", w)
	}
	return data.Corpus, vocab
}

// blocksFound counts the planted blocks (of v/k words) that are the block
// of the top word of some topic of w, each topic's top 3 words in one
// block.
func blocksFound(w []float64, v, k, bk int) int {
	found := map[int]bool{}
	size := v / bk
	for t := range k {
		var top [3]int
		var val [3]float64
		for i := range v {
			x := w[i*k+t]
			for j := range 3 {
				if x > val[j] {
					copy(val[j+1:], val[j:2])
					copy(top[j+1:], top[j:2])
					val[j], top[j] = x, i
					break
				}
			}
		}
		if val[2] > 0 && top[0]/size == top[1]/size && top[0]/size == top[2]/size {
			found[top[0]/size] = true
		}
	}
	return len(found)
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string // a substring of the error; "" for none
	}{
		{name: "zero", cfg: Config{}},
		{name: "dp", cfg: Config{Clip: 1, NoiseMultiplier: 1.1}},
		{name: "clip without noise", cfg: Config{Clip: 1}, want: "needs both"},
		{name: "fraction above 1", cfg: Config{ClientFraction: 1.5}, want: "client_fraction"},
		{name: "unknown optimizer", cfg: Config{ServerOpt: "sgd"}, want: "server_opt"},
		{name: "negative lambda", cfg: Config{MILambda: -1}, want: "mi_lambda"},
		{name: "batch of one with MI", cfg: Config{Batch: 1, MILambda: 0.1}, want: "batch"},
		{name: "beta1 of 1", cfg: Config{Beta1: 1}, want: "beta1"},
		{name: "nan lr", cfg: Config{LR: math.NaN()}, want: "lr"},
		{name: "features", cfg: Config{Features: "bm25"}, want: "features"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if (err == nil) != (tt.want == "") || err != nil && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Validate() = %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestSampleSize(t *testing.T) {
	tests := []struct {
		c    float64
		n    int
		want int
	}{
		{0.2, 10, 2}, {0.3, 10, 3}, {0.29, 100, 29}, {0.1, 5, 1}, {1, 7, 7}, {0, 10, 2},
	}
	for _, tt := range tests {
		if got := (Config{ClientFraction: tt.c}).SampleSize(tt.n); got != tt.want {
			t.Errorf("SampleSize(C=%v, n=%d) = %d; want %d", tt.c, tt.n, got, tt.want)
		}
	}
}

// TestServerOpt checks two steps of each rule against Reddi et al.'s
// Algorithm 2 computed by hand for Δ = 0.5 then −0.25 from x = 1.
func TestServerOpt(t *testing.T) {
	const d1, d2 = 0.5, -0.25
	adam := func(b1, b2, lr, tau float64, yogi, adagrad bool) float64 {
		x, m, v := 1.0, 0.0, 0.0
		for _, d := range []float64{d1, d2} {
			m = b1*m + (1-b1)*d
			switch {
			case adagrad:
				v += d * d
			case yogi:
				v -= (1 - b2) * d * d * sign(v-d*d)
			default:
				v = b2*v + (1-b2)*d*d
			}
			x += lr * m / (math.Sqrt(v) + tau)
		}
		return x
	}
	tests := []struct {
		opt  string
		want float64
	}{
		{OptFedAvg, 1 + d1 + d2},
		{OptFedAdagrad, adam(0, 0, 0.1, 1e-9, false, true)},
		{OptFedYogi, adam(0.9, 0.99, 0.01, 1e-3, true, false)},
		{OptFedAdam, adam(0.9, 0.99, 0.1, 1e-9, false, false)},
	}
	for _, tt := range tests {
		cfg := Config{ServerOpt: tt.opt}.WithDefaults()
		o := newServerOpt(cfg, 1, 0)
		x := []float64{1}
		o.step(x, []float64{d1})
		o.step(x, []float64{d2})
		if math.Abs(x[0]-tt.want) > 1e-12 {
			t.Errorf("%s: x after two steps = %.15g; want %.15g", tt.opt, x[0], tt.want)
		}
	}
}

// TestOneClientMatchesCentralSGD is the reference equivalence: one client
// sampled every round with FedAvg runs exactly the centralized SGD, so
// the federated W equals TrainSGD's to rounding (the client sends W's
// change and the server adds it back: about one ulp per round).
func TestOneClientMatchesCentralSGD(t *testing.T) {
	c, vocab := planted(t, 4, 40, 200)
	for _, lambda := range []float64{0, 0.1} {
		t.Run(fmt.Sprintf("lambda=%g", lambda), func(t *testing.T) {
			cfg := Config{K: 4, Rounds: 3, ClientFraction: 1, LocalEpochs: 2, Batch: 16, MILambda: lambda}
			params, _ := json.Marshal(cfg)
			res, err := sim.Run(context.Background(), sim.Scenario{Algorithm: Algorithm, Params: params,
				Parties: []string{"all"}, Corpora: []*corpus.Corpus{c}, Vocab: vocab, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			msg, err := decodeBroadcast(res.Final, shapeOf(cfg, len(vocab)))
			if err != nil || msg.kind != kindFinal {
				t.Fatalf("final broadcast: kind %d, %v", msg.kind, err)
			}
			want, err := TrainSGD(c, vocab, cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range msg.x {
				if math.Abs(x-want.W[i]) > 1e-9*(1+math.Abs(want.W[i])) {
					t.Fatalf("federated W[%d] = %.15g; centralized SGD %.15g", i, x, want.W[i])
				}
			}
		})
	}
}

// TestTrainRecoversPlanted checks that centralized NMF (HALS) finds the
// four planted topics and lowers its objective every iteration.
func TestTrainRecoversPlanted(t *testing.T) {
	c, _ := planted(t, 4, 40, 400)
	res, err := Train(context.Background(), c, TrainConfig{K: 4, Iterations: 100, Tol: -1, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(res.Objective); i++ {
		if res.Objective[i] > res.Objective[i-1]*(1+1e-12) {
			t.Fatalf("objective rose at iteration %d: %g after %g", i, res.Objective[i], res.Objective[i-1])
		}
	}
	if got := blocksFound(res.W, 40, 4, 4); got != 4 {
		t.Errorf("HALS found %d of the 4 planted topics; want 4", got)
	}
}

// TestFederatedRecoversPlanted runs FedNMF+MI over three clients with
// FedAdam and checks that the global W finds the planted topics.
func TestFederatedRecoversPlanted(t *testing.T) {
	c, vocab := planted(t, 4, 40, 600)
	parts, err := corpus.Split(c, corpus.SplitSpec{Sizes: []float64{1, 1, 1}}, rng.Derive(1, "split"))
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range ServerOpts {
		t.Run(opt, func(t *testing.T) {
			cfg := Config{K: 4, Rounds: 100, ClientFraction: 0.5, LocalEpochs: 2, Batch: 16, LR: 0.5, ServerOpt: opt}
			params, _ := json.Marshal(cfg)
			res, err := sim.Run(context.Background(), sim.Scenario{Algorithm: Algorithm, Params: params, Corpora: parts, Vocab: vocab, Seed: 9})
			if err != nil {
				t.Fatal(err)
			}
			msg, _ := decodeBroadcast(res.Final, shapeOf(cfg, len(vocab)))
			if got := blocksFound(msg.x, 40, 4, 4); got < 3 {
				t.Errorf("%s found %d of the 4 planted topics; want at least 3", opt, got)
			}
		})
	}
}

// TestAggregatorCheckpoint restores an aggregator from its checkpoint in
// mid-run and checks that it goes on exactly as the original, server
// optimizer moments included.
func TestAggregatorCheckpoint(t *testing.T) {
	for _, opt := range ServerOpts {
		t.Run(opt, func(t *testing.T) {
			cfg := Config{K: 3, Rounds: 5, ClientFraction: 1, ServerOpt: opt, MILambda: 0.1, Clip: 1, NoiseMultiplier: 1}
			params, _ := json.Marshal(cfg)
			s := fed.Setup{Run: "r", Parties: []string{"a", "b"}, Vocab: []string{"x", "y", "z", "u"}, Seed: 4, Params: params}
			a, err := NewAggregator(s)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Init(); err != nil {
				t.Fatal(err)
			}
			sh := shapeOf(cfg, 4)
			upd := func(round int) []fed.Update {
				var us []fed.Update
				for i, id := range s.Parties {
					d := make([]float64, sh.n())
					for j := range d {
						d[j] = 0.01 * float64((j+i+round)%7-3)
					}
					clipTo(d, 1)
					us = append(us, fed.Update{Party: i, ID: id, Payload: encodeUpdate(sh, 0, d)})
				}
				return us
			}
			if _, err := a.Aggregate(1, upd(1)); err != nil {
				t.Fatal(err)
			}
			state, err := a.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			b, err := NewAggregator(s)
			if err != nil {
				t.Fatal(err)
			}
			if err := b.UnmarshalBinary(state); err != nil {
				t.Fatal(err)
			}
			for r := 2; r <= 3; r++ {
				sa, errA := a.Aggregate(r, upd(r))
				sb, errB := b.Aggregate(r, upd(r))
				if errA != nil || errB != nil || !bytes.Equal(sa.Payload, sb.Payload) {
					t.Fatalf("round %d: restored aggregator's broadcast differs (errors %v, %v)", r, errA, errB)
				}
			}
			if err := b.UnmarshalBinary(state[:len(state)-1]); err == nil {
				t.Errorf("UnmarshalBinary(truncated state) = nil; want an error")
			}
		})
	}
}

// TestNoiseScale checks the DP-FedAvg noise: (0 + N(0, (z·S)²))·1/(C·n)
// over 20,000 entries has mean 0 and standard deviation z·S/(C·n). The
// sample standard deviation of n normals has relative standard error
// 1/√(2n) = 0.005, the mean a standard error σ/√n; both are allowed six
// standard errors, a false failure probability below 1e-8 (the seed is
// fixed, so the test is deterministic; the bound says the seed is not
// cherry-picked).
func TestNoiseScale(t *testing.T) {
	cfg := Config{K: 10, Rounds: 2, ClientFraction: 0.5, Clip: 2, NoiseMultiplier: 1.5, MILambda: 0}
	params, _ := json.Marshal(cfg)
	vocab := make([]string, 2000)
	for i := range vocab {
		vocab[i] = fmt.Sprint(i)
	}
	a, err := NewAggregator(fed.Setup{Run: "r", Parties: []string{"a", "b", "c", "d"}, Vocab: vocab, Seed: 8, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 20000)
	a.noisyMean(1, x)
	den := 0.5 * 4
	var s, ss float64
	for _, v := range x {
		s += v * den
		ss += v * den * v * den
	}
	n := float64(len(x))
	mean := s / n
	sd := math.Sqrt(ss/n - mean*mean)
	want := 1.5 * 2.0
	if math.Abs(sd/want-1) > 6/math.Sqrt(2*n) {
		t.Errorf("noise standard deviation %.4f; want %.4f", sd, want)
	}
	if math.Abs(mean) > 6*want/math.Sqrt(n) {
		t.Errorf("noise mean %.4f; want 0", mean)
	}
}

// TestDPRunCharges runs DP-FedAvg and checks that every party's recorded
// spend is exactly what Config.Events costs, that Plan states each round's
// charge, and that the updates respect the clip.
func TestDPRunCharges(t *testing.T) {
	c, vocab := planted(t, 4, 40, 300)
	parts, err := corpus.Split(c, corpus.SplitSpec{Sizes: []float64{1, 1, 1, 1, 1}}, rng.Derive(1, "split"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{K: 4, Rounds: 4, ClientFraction: 0.4, Clip: 0.5, NoiseMultiplier: 1.2, Batch: 16}
	params, _ := json.Marshal(cfg)
	want, err := accountant.Compose(cfg.Events(), 1e-5)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(context.Background(), sim.Scenario{Algorithm: Algorithm, Params: params, Corpora: parts, Vocab: vocab, Seed: 2,
		Budget: accountant.Budget{Epsilon: want.Epsilon * 1.000001, Delta: 1e-5}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range res.Summary.Epsilon {
		if math.Abs(e.Epsilon-want.Epsilon) > 1e-9*want.Epsilon || e.Unit != UnitDocument {
			t.Errorf("%s spent ε = %v per %s; want %v per document", e.Party, e.Epsilon, e.Unit, want.Epsilon)
		}
	}
	l, err := NewLearner(fed.Setup{Run: "r", Parties: []string{"p"}, Vocab: vocab, Seed: 1, Params: params}, 0, parts[0])
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := l.Plan(1)
	step, err := l.Learn(1, encodeSkip())
	if err != nil {
		t.Fatal(err)
	}
	if len(plan) != 1 || len(step.Spent) != 1 || plan[0] != step.Spent[0] || plan[0].Mechanism != privacy.MechanismSubsampledGaussian {
		t.Errorf("Plan(1) = %v, Learn(1).Spent = %v; want the same one subsampled Gaussian", plan, step.Spent)
	}
}

// TestValidatorRejects checks that updates of the wrong shape, with
// non-finite values, or above the clip under DP never reach the
// aggregator.
func TestValidatorRejects(t *testing.T) {
	cfg := Config{K: 2, Clip: 1, NoiseMultiplier: 1}
	params, _ := json.Marshal(cfg)
	v, err := NewValidator(fed.Setup{Run: "r", Parties: []string{"a"}, Vocab: []string{"x", "y", "z"}, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	sh := shapeOf(cfg, 3)
	ok := make([]float64, sh.n())
	ok[0] = 0.5
	big := make([]float64, sh.n())
	big[0] = 1.5
	nan := make([]float64, sh.n())
	nan[1] = math.NaN()
	tests := []struct {
		name    string
		payload []byte
		wantErr bool
	}{
		{"valid", encodeUpdate(sh, 0, ok), false},
		{"idle", encodeIdle(), false},
		{"above clip", encodeUpdate(sh, 0, big), true},
		{"NaN", encodeUpdate(sh, 0, nan), true},
		{"document count under DP", encodeUpdate(sh, 7, ok), true},
		{"wrong shape", encodeUpdate(shape{k: 3, v: 3}, 0, make([]float64, 9)), true},
		{"broadcast kind", encodeSkip(), true},
		{"empty", nil, true},
	}
	for _, tt := range tests {
		if err := v.CheckUpdate(1, tt.payload); (err != nil) != tt.wantErr {
			t.Errorf("%s: CheckUpdate = %v; want error %v", tt.name, err, tt.wantErr)
		}
	}
}

// FuzzDecode feeds arbitrary bytes to both decoders: they must never
// panic, and whatever they accept must re-encode to the same bytes.
func FuzzDecode(f *testing.F) {
	sh := shape{k: 2, v: 3, p: 1}
	f.Add(encodeModel(sh, make([]float64, sh.n())))
	f.Add(encodeUpdate(sh, 4, make([]float64, sh.n())))
	f.Add(encodeFinal(sh, make([]float64, 6)))
	f.Add(encodeSkip())
	f.Add(encodeIdle())
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := decodeBroadcast(b, sh); err == nil {
			var re []byte
			switch m.kind {
			case kindSkip:
				re = encodeSkip()
			case kindModel:
				re = encodeModel(sh, m.x)
			case kindFinal:
				re = encodeFinal(sh, m.x)
			}
			if !bytes.Equal(re, b) {
				t.Errorf("broadcast kind %d re-encodes differently", m.kind)
			}
		}
		if u, err := decodeUpdate(b, sh); err == nil {
			re := encodeIdle()
			if u.delta != nil {
				re = encodeUpdate(sh, u.docs, u.delta)
			}
			if !bytes.Equal(re, b) {
				t.Errorf("update re-encodes differently")
			}
		}
	})
}
