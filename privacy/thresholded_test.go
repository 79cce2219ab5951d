package privacy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/rng"
)

// binomPMF returns the pmf of Binomial(n, p) convolved with Bernoulli(b).
func binomPlusBernoulliPMF(n int, p, b float64) pmf {
	f := pmf{p: make([]float64, n+2)}
	for k := 0; k <= n; k++ {
		lg, _ := math.Lgamma(float64(n + 1))
		l1, _ := math.Lgamma(float64(k + 1))
		l2, _ := math.Lgamma(float64(n - k + 1))
		pk := math.Exp(lg - l1 - l2 + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
		f.p[k] += pk * (1 - b)
		f.p[k+1] += pk * b
	}
	return f
}

// TestThresholdedMatchesNaive checks the direct sampler and the V-draw
// reference against the exact law of the thresholded vector, on the three
// quantities that define it: per-entry survival, survivor values and
// the number of survivors per vector, plus where the survivors fall.
func TestThresholdedMatchesNaive(t *testing.T) {
	const (
		vocab = 40
		word  = 17
		nvec  = 30000
	)
	for _, c := range []ThresholdedLaplaceConfig{
		{Epsilon: 2, Threshold: 0.2, Vocab: vocab},
		{Epsilon: 11, Threshold: 0.2, Vocab: vocab},
		{Epsilon: 0.7, Threshold: 0, Vocab: vocab, Granularity: 1.0 / 64},
	} {
		tl, err := NewThresholdedLaplace(c)
		if err != nil {
			t.Fatalf("NewThresholdedLaplace(%+v) error: %v", c, err)
		}
		a := math.Exp(-tl.lambda)
		q := math.Pow(a, float64(tl.k0)) / (1 + a)
		// The true entry 1 + Z survives iff Z ≥ k0 − steps.
		m := tl.k0 - tl.steps
		var pTrue float64
		if m >= 1 {
			pTrue = math.Pow(a, float64(m)) / (1 + a)
		} else {
			pTrue = 1 - math.Pow(a, float64(1-m))/(1+a)
		}
		for _, naive := range []bool{false, true} {
			name := fmt.Sprintf("ε=%v τ=%v naive=%v", c.Epsilon, c.Threshold, naive)
			r := rng.Derive(21, name)
			counts := []Count{{Word: word, N: 1}}
			var dst []Entry
			survivors := make([]int64, 0, nvec)
			var excess []int64 // survivor values above the threshold, in grid steps
			perWord := make([]int, vocab)
			trueKept := 0
			for range nvec {
				if naive {
					dst = tl.DrawNaive(r, counts, dst)
				} else {
					dst = tl.Draw(r, word, dst)
				}
				survivors = append(survivors, int64(len(dst)))
				for i, e := range dst {
					if i > 0 && e.Word <= dst[i-1].Word {
						t.Fatalf("%s: entries not in strictly increasing word order: %v", name, dst)
					}
					steps := float64(e.Value) / tl.cfg.Granularity
					if steps != math.Trunc(steps) || int64(steps) < tl.k0 || float64(e.Value) <= c.Threshold {
						t.Fatalf("%s: entry %+v is not a grid value above τ", name, e)
					}
					perWord[e.Word]++
					if e.Word == word {
						trueKept++
					} else {
						excess = append(excess, int64(steps)-tl.k0)
					}
				}
			}
			checkProportion(t, name+": zero-entry survival", len(excess), nvec*(vocab-1), q)
			checkProportion(t, name+": true-entry survival", trueKept, nvec, pTrue)
			geo := pmf{p: make([]float64, 4000)}
			for j := range geo.p {
				geo.p[j] = (1 - a) * math.Pow(a, float64(j))
			}
			checkChiSquare(t, name+": survivor values", excess, geo)
			checkChiSquare(t, name+": survivors per vector", survivors, binomPlusBernoulliPMF(vocab-1, q, pTrue))
			// Survivors are spread evenly over the other words.
			var pos []int64
			for w, k := range perWord {
				if w != word {
					for range k {
						pos = append(pos, int64(w))
					}
				}
			}
			uni := pmf{p: make([]float64, vocab)}
			for w := range uni.p {
				if w != word {
					uni.p[w] = 1.0 / (vocab - 1)
				}
			}
			uni.p = append(uni.p[:word], uni.p[word+1:]...)
			for i := range pos {
				if pos[i] > word {
					pos[i]--
				}
			}
			checkChiSquare(t, name+": survivor positions", pos, uni)
		}
	}
}

func TestThresholdedDrawCounts(t *testing.T) {
	tl, err := NewThresholdedLaplace(ThresholdedLaplaceConfig{Epsilon: 3, Threshold: 0.2, Vocab: 30})
	if err != nil {
		t.Fatal(err)
	}
	counts := []Count{{Word: 0, N: 2}, {Word: 5, N: 1}, {Word: 29, N: 3}}
	const nvec = 20000
	kept := map[int32]int{}
	r := rng.Derive(4, "counts")
	var dst []Entry
	var excess []int64
	for range nvec {
		dst = tl.DrawCounts(r, counts, dst)
		for i, e := range dst {
			if i > 0 && e.Word <= dst[i-1].Word {
				t.Fatalf("entries not increasing: %v", dst)
			}
			if e.Word == 0 || e.Word == 5 || e.Word == 29 {
				kept[e.Word]++
			} else {
				excess = append(excess, int64(float64(e.Value)/tl.cfg.Granularity)-tl.k0)
			}
		}
	}
	a := math.Exp(-tl.lambda)
	q := math.Pow(a, float64(tl.k0)) / (1 + a)
	checkProportion(t, "zero-entry survival", len(excess), nvec*27, q)
	for _, c := range counts {
		m := tl.k0 - int64(c.N)*tl.steps
		p := 1 - math.Pow(a, float64(1-m))/(1+a) // m ≤ 0 here: counts exceed τ
		checkProportion(t, fmt.Sprintf("word %d (count %d) survival", c.Word, c.N), kept[c.Word], nvec, p)
	}
}

func TestThresholdedReproducibleAndCompact(t *testing.T) {
	tl, err := NewThresholdedLaplace(ThresholdedLaplaceConfig{Epsilon: 11, Threshold: 0.2, Vocab: 12000})
	if err != nil {
		t.Fatal(err)
	}
	src := NewSeededSource(9)
	idx := src.Indexed("party", 1, "tokens")
	var c chacha8.Stream
	r := rand.New(&c)
	for tok := range uint64(50) {
		idx.Seed(&c, tok)
		a := tl.Draw(r, int(tok*37%12000), nil)
		idx.Seed(&c, tok)
		b := tl.Draw(r, int(tok*37%12000), nil)
		if !slices.Equal(a, b) {
			t.Fatalf("token %d: regenerated vector differs", tok)
		}
		enc := tl.AppendCompact(nil, a)
		dec, n, err := tl.ReadCompact(enc, nil)
		if err != nil || n != len(enc) || !slices.Equal(dec, a) {
			t.Fatalf("token %d: ReadCompact(AppendCompact(v)) = %d entries, %d bytes, %v; want %d entries, %d bytes", tok, len(dec), n, err, len(a), len(enc))
		}
		if per := float64(len(enc)) / float64(len(a)); per > 3 {
			t.Errorf("token %d: compact form takes %.2f bytes per entry; want ≤ 3", tok, per)
		}
	}
	if _, _, err := tl.ReadCompact([]byte{0xff}, nil); err == nil {
		t.Errorf("ReadCompact of a truncated buffer: got nil error")
	}
}

func TestThresholdedConfigChecks(t *testing.T) {
	tests := []struct {
		name string
		c    ThresholdedLaplaceConfig
	}{
		{"eps zero", ThresholdedLaplaceConfig{Epsilon: 0, Vocab: 10}},
		{"eps NaN", ThresholdedLaplaceConfig{Epsilon: math.NaN(), Vocab: 10}},
		{"eps tiny", ThresholdedLaplaceConfig{Epsilon: 0x1p-51, Vocab: 10}},
		{"threshold negative", ThresholdedLaplaceConfig{Epsilon: 1, Threshold: -0.1, Vocab: 10}},
		{"threshold Inf", ThresholdedLaplaceConfig{Epsilon: 1, Threshold: math.Inf(1), Vocab: 10}},
		{"vocab zero", ThresholdedLaplaceConfig{Epsilon: 1}},
		{"granularity not power of two", ThresholdedLaplaceConfig{Epsilon: 1, Vocab: 10, Granularity: 0.3}},
		{"granularity above one", ThresholdedLaplaceConfig{Epsilon: 1, Vocab: 10, Granularity: 2}},
		{"threshold unreachable", ThresholdedLaplaceConfig{Epsilon: 50, Threshold: 2, Vocab: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewThresholdedLaplace(tt.c); err == nil {
				t.Errorf("NewThresholdedLaplace(%+v) = nil error; want an error", tt.c)
			}
		})
	}
}

// TestThresholdedByteTables checks fill's one-byte lookup tables against
// the geometric tables they restate: a chunk's entry is exactly the outcome
// whose interval holds the chunk's whole cell, or slowChunk when there is
// none; no decided chunk has an outcome of 255 or more (such an outcome has
// probability below 2⁻¹⁶, too little for a whole cell), so the byte loses
// nothing; and the value of every fast outcome is (k₀ + e)·g.
func TestThresholdedByteTables(t *testing.T) {
	for _, c := range []ThresholdedLaplaceConfig{
		{Epsilon: 11, Threshold: 0.2, Vocab: 20000},
		{Epsilon: 2, Threshold: 0.2, Vocab: 100},
		{Epsilon: 5, Threshold: 0, Vocab: 100},
		{Epsilon: 0.7, Threshold: 0, Vocab: 40, Granularity: 1.0 / 64}, // two-level laws: all chunks slow
	} {
		tl, err := NewThresholdedLaplace(c)
		if err != nil {
			t.Fatalf("NewThresholdedLaplace(%+v) error: %v", c, err)
		}
		for _, tc := range []struct {
			name string
			b    *[1 << 16]uint8
			g    *geometric
		}{{"skip", tl.skipByte, tl.skip}, {"value", tl.valueByte, tl.value}} {
			lim := tc.g.fastLimit()
			for p, e := range tc.g.top.lut {
				want := uint8(slowChunk)
				if e < lim {
					if e >= slowChunk {
						t.Fatalf("ε=%v %s: chunk %#04x decides outcome %d, too large for a byte", c.Epsilon, tc.name, p, e)
					}
					want = uint8(e)
				}
				if got := tc.b[p]; got != want {
					t.Fatalf("ε=%v %s table[%#04x] = %d; want %d (top table entry %#04x, fast limit %d)", c.Epsilon, tc.name, p, got, want, e, lim)
				}
			}
		}
		for e := range tl.valueF {
			if got, want := float64(tl.valueF[e]), float64(tl.k0+int64(e))*tl.cfg.Granularity; got != want {
				t.Fatalf("ε=%v valueF[%d] = %v; want %v", c.Epsilon, e, got, want)
			}
		}
	}
}
