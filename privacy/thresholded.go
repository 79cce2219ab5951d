package privacy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// ThresholdedLaplaceConfig describes FTM's privatization of one token's (or
// sentence's) count vector over the vocabulary (Wang et al., CIKM 2019,
// Eq. 9-10 and 16): independent Laplace(1/ε) noise on each of the V entries,
// then every entry ≤ τ set to zero. The zero value of Granularity and Unit
// means their documented defaults.
type ThresholdedLaplaceConfig struct {
	// Epsilon is the ε per word occurrence; required.
	Epsilon float64 `json:"epsilon"`
	// Threshold is τ ≥ 0: noisy entries ≤ τ are zeroed. Zero keeps every
	// positive entry (FTM's default of 0.2 is set by the caller).
	Threshold float64 `json:"threshold"`
	// Vocab is the vocabulary size V ≥ 1; required.
	Vocab int `json:"vocab"`
	// Granularity is the grid step, a power of two ≤ 1; zero picks the
	// largest power of two ≤ 1/(16ε).
	Granularity float64 `json:"granularity,omitempty"`
	// Unit names the privacy unit; zero means DefaultUnit.
	Unit string `json:"unit,omitempty"`
}

// Validate reports every problem with c.
func (c ThresholdedLaplaceConfig) Validate() error {
	var errs []error
	errs = append(errs, CheckEpsilon(c.Epsilon))
	if math.IsNaN(c.Threshold) || math.IsInf(c.Threshold, 0) || c.Threshold < 0 {
		errs = append(errs, fmt.Errorf("privacy: threshold %v: must be finite and ≥ 0: %w", c.Threshold, ErrInvalidParameter))
	}
	if c.Vocab < 1 || c.Vocab > math.MaxInt32 {
		errs = append(errs, fmt.Errorf("privacy: vocabulary size %d: must be in [1, 2^31): %w", c.Vocab, ErrInvalidParameter))
	}
	if c.Granularity != 0 {
		if err := CheckGranularity(c.Granularity); err != nil {
			errs = append(errs, err)
		} else if c.Granularity > 1 {
			errs = append(errs, fmt.Errorf("privacy: granularity %v: must be ≤ 1 so that counts lie on the grid: %w", c.Granularity, ErrInvalidParameter))
		}
	}
	return errors.Join(errs...)
}

// Entry is one surviving entry of a privatized count vector: a vocabulary
// index and its noisy count, an exact multiple of the granularity.
type Entry struct {
	Word  int32
	Value float32
}

// Count is one non-zero entry of a count vector to privatize.
type Count struct {
	Word int32
	N    int32
}

// ThresholdedLaplace draws FTM's thresholded Laplace vectors on a grid g.
//
// Noise: every entry gets g·Z with Z discrete Laplace of decay λ = ε·g per
// step (rounded down), which is ε-DP per word occurrence exactly (adjacency:
// count vectors differing by one in one entry; replacing a word by another
// is two such steps, 2ε). Zeroing entries ≤ τ is post-processing, so the
// thresholded vector costs the same ε.
//
// Sampling: Draw produces the thresholded vector directly from its exact
// distribution in O(q·V) instead of O(V). An entry whose
// count is 0 survives iff Z ≥ k₀ = ⌊τ/g⌋+1, with probability
// q = a^k₀/(1+a), a = e^(−λ); survivors are found by geometric skips with
// ratio 1−q, and a survivor's value is k₀ plus a geometric variable with
// ratio a (memorylessness of the discrete Laplace tail). The entries with a
// true count are drawn as count + Z and thresholded. Every probability is
// realised exactly (see the package documentation on exact sampling), so
// Draw and DrawNaive — the V-draw reference — have identical
// distributions.
//
// Speed: each survivor costs one 16-bit chunk of the stream for its skip
// and one for its value, so a 64-bit word serves two survivors. A chunk is
// the first 16 bits of the uniform its draw inverts; when the chunk's cell
// lies wholly inside one outcome's interval (by the rigorous enclosures)
// that outcome is the draw, and a one-byte table indexed by the chunk
// holds it. Every other chunk — about 0.3% of them at FTM's settings: a
// cell that straddles a boundary, or the table's overflow — is finished by
// the full sampler, which continues the same uniform with further bits; so
// the table changes the speed, not the law.
// At V = 20,000, ε = 11, τ = 0.2 a vector reads about 550 words of the
// stream, and the ChaCha8 stream is a third to a half of its cost with
// AVX-512 (internal/chacha8: 1.8–2.3 µs of 3.9–4.9 µs, and 2.2–2.7 µs of
// 7.0–8.1 µs in the host's slow phases, BenchmarkThresholdedStream against
// BenchmarkThresholdedLaplace), about half without. A
// variable-length code, stopping each draw as soon as its bits decide it
// (7.5 bits on average here instead of 16), was tried and measured slower:
// a draw cannot start before the previous one's length is known, and that
// serial dependency costs more than the stream bits it saves.
//
// Memory: a vector holds about q·V entries (≈ 1,100 at V = 20,000, ε = 11,
// τ = 0.2): 8 bytes each as Entry, about 2.5 bytes each in the compact
// encoding (AppendCompact). Since Draw reads only the stream it is given, a
// caller can instead keep one seed per token and regenerate the vector on
// demand with Draw(rng.Derive(seed, "token", i), …) or a Streams.
//
// Safe for concurrent use.
type ThresholdedLaplace struct {
	cfg    ThresholdedLaplaceConfig
	lambda float64 // decay per grid step
	steps  int64   // grid steps per unit count (1/g)
	k0     int64   // smallest surviving value, in grid steps
	q      float64 // survival probability of a zero entry (rounded)
	skip   *geometric
	value  *geometric
	noise  *DiscreteLaplace
	// One-byte lookup tables of the skip and value laws for fill: entry p
	// is the outcome of the 16-bit chunk p when that chunk alone decides
	// it, else slowChunk.
	skipByte, valueByte *[1 << 16]uint8
	valueF              *[256]float32 // valueF[e] = (k₀ + e)·g for e < 255
}

// slowChunk marks a lookup-table entry whose chunk does not decide the
// draw by itself.
const slowChunk = 255

// NewThresholdedLaplace returns the sampler c describes.
func NewThresholdedLaplace(c ThresholdedLaplaceConfig) (*ThresholdedLaplace, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("privacy: thresholded laplace: %w", err)
	}
	if c.Granularity == 0 {
		c.Granularity = defaultGranularity(1 / c.Epsilon)
	}
	if c.Unit == "" {
		c.Unit = DefaultUnit
	}
	t := &ThresholdedLaplace{cfg: c}
	t.lambda = c.Epsilon * c.Granularity // exact: power-of-two scaling
	t.steps = int64(1 / c.Granularity)
	k0 := math.Floor(c.Threshold/c.Granularity) + 1
	if k0 > 1<<50 {
		return nil, fmt.Errorf("privacy: thresholded laplace: threshold %v is %v grid steps; too many: %w", c.Threshold, k0, ErrInvalidParameter)
	}
	t.k0 = int64(k0)
	a := math.Exp(-t.lambda)
	t.q = math.Exp(-t.lambda*k0) / (1 + a)
	if !(t.q >= 0x1p-60) {
		return nil, fmt.Errorf("privacy: thresholded laplace: survival probability %v of a zero entry is below 2^-60 (τ = %v is too high for ε = %v): %w", t.q, c.Threshold, c.Epsilon, ErrInvalidParameter)
	}
	var err error
	if t.noise, err = newDiscreteLaplace(t.lambda); err != nil {
		return nil, fmt.Errorf("privacy: thresholded laplace: %w", err)
	}
	t.value = t.noise.geo // the survivor excess over k₀ is geometric with ratio a
	t.valueF = new([256]float32)
	for e := range t.valueF {
		t.valueF[e] = t.valueOf(uint64(e))
	}
	t.valueByte = byteTable(t.value)
	lambda, k0u := t.lambda, uint64(t.k0)
	qb := func(prec uint) bounds {
		wp := prec + 8
		num := expNeg(mulExact(lambda, k0u), wp)
		den := addB(pointFloat(1), expNeg(floatOf(lambda), wp), wp)
		return quoPos(num, den, wp)
	}
	if t.skip, err = newGeometric(complementRatio{q: qb}, -math.Log1p(-t.q)); err != nil {
		return nil, fmt.Errorf("privacy: thresholded laplace: %w", err)
	}
	t.skipByte = byteTable(t.skip)
	return t, nil
}

// byteTable returns g's one-byte lookup table for fill: the outcome of
// every 16-bit chunk that decides a draw of g by itself (a fast-limit
// entry of its top table), and slowChunk for every other chunk — all of
// them when g needs more than one table. A decided outcome j has a whole
// 16-bit cell inside its interval, so P(j) = (1−c)c^j ≥ 2⁻¹⁶; with the
// rate −ln c ≥ 1/32 of a single-table law that means j < 245, and the byte
// holds every one (the test checks it; the guard below only keeps an
// impossible one out).
func byteTable(g *geometric) *[1 << 16]uint8 {
	b := new([1 << 16]uint8)
	lim := min(g.fastLimit(), slowChunk)
	for p, e := range g.top.lut {
		if e < lim {
			b[p] = uint8(e)
		} else {
			b[p] = slowChunk
		}
	}
	return b
}

// Config returns the configuration with defaults filled in.
func (t *ThresholdedLaplace) Config() ThresholdedLaplaceConfig { return t.cfg }

// Granularity returns the grid step.
func (t *ThresholdedLaplace) Granularity() float64 { return t.cfg.Granularity }

// SurvivalProb returns q, the probability that an entry with count 0
// survives the threshold (rounded to float64).
func (t *ThresholdedLaplace) SurvivalProb() float64 { return t.q }

// MinValue returns the smallest value a surviving entry can have: the first
// grid point above τ.
func (t *ThresholdedLaplace) MinValue() float64 { return float64(t.k0) * t.cfg.Granularity }

// Event returns the Event for count privatizations of the same word
// occurrences. Privatizing a whole corpus once is Event(1): each word
// occurrence lies in exactly one token's vector (parallel composition).
func (t *ThresholdedLaplace) Event(count int) Event {
	return Event{Mechanism: MechanismThresholdedLaplace, Epsilon: t.cfg.Epsilon, Sensitivity: 1, Unit: t.cfg.Unit, Count: count}
}

// Draw appends to dst[:0] the thresholded noisy vector of a token whose word
// is word, in increasing word order, and returns it. It panics if word is
// not in [0, V).
func (t *ThresholdedLaplace) Draw(r *rand.Rand, word int, dst []Entry) []Entry {
	if word < 0 || word >= t.cfg.Vocab {
		panic(fmt.Sprintf("privacy: ThresholdedLaplace.Draw: word %d out of range [0, %d)", word, t.cfg.Vocab))
	}
	c := [1]Count{{Word: int32(word), N: 1}}
	br := bitReader{r: r}
	return t.draw(&br, c[:], dst[:0])
}

// DrawCounts appends to dst[:0] the thresholded noisy vector of the count
// vector counts (a sentence, for SentenceLDA), in increasing word order. It
// panics unless counts is sorted by strictly increasing Word in [0, V) with
// every N ≥ 1.
func (t *ThresholdedLaplace) DrawCounts(r *rand.Rand, counts []Count, dst []Entry) []Entry {
	t.checkCounts(counts)
	br := bitReader{r: r}
	return t.draw(&br, counts, dst[:0])
}

func (t *ThresholdedLaplace) checkCounts(counts []Count) {
	for i, c := range counts {
		if c.Word < 0 || int(c.Word) >= t.cfg.Vocab || c.N < 1 || (i > 0 && c.Word <= counts[i-1].Word) {
			panic(fmt.Sprintf("privacy: ThresholdedLaplace: count %d = %+v: want strictly increasing words in [0, %d) with N ≥ 1", i, c, t.cfg.Vocab))
		}
	}
}

func (t *ThresholdedLaplace) draw(br *bitReader, counts []Count, dst []Entry) []Entry {
	g := float32(t.cfg.Granularity)
	// The entries with a true count, drawn first so that the stream's use
	// does not depend on where they sit.
	var tbuf [8]Entry
	trues := tbuf[:0]
	for _, c := range counts {
		if v := int64(c.N)*t.steps + t.noise.sample(br); v >= t.k0 {
			trues = append(trues, Entry{Word: c.Word, Value: float32(v) * g})
		}
	}
	if want := len(dst) + int(t.q*float64(t.cfg.Vocab)*1.25) + 16; cap(dst) < want {
		dst = append(make([]Entry, 0, want), dst...)
	}
	// The other entries, segment by segment between the true words. Each
	// segment starts a fresh skip process: entries survive independently,
	// so whether a skip overshot the previous segment says nothing about
	// the next one.
	lo, ti := int64(0), 0
	for _, c := range counts {
		dst = t.fill(br, lo, int64(c.Word), dst)
		if ti < len(trues) && trues[ti].Word == c.Word {
			dst = append(dst, trues[ti])
			ti++
		}
		lo = int64(c.Word) + 1
	}
	return t.fill(br, lo, int64(t.cfg.Vocab), dst)
}

// fill appends the surviving zero-count entries of words [lo, hi).
//
// The hot loop reads one 64-bit word per two survivors: a 16-bit chunk for
// each survivor's skip and one for its value. It looks up all four chunks
// at once in one-byte tables; when each chunk decides its draw by itself
// (all but about 1.1% of words at FTM's settings) the word's two survivors
// follow without further branching on the tables. Otherwise slowWord draws
// the word's survivors chunk by chunk through the full samplers, which
// read their further bits from fresh words of the stream (br is kept
// empty, so what they read does not depend on the loop's position in a
// word). Either way chunk k of a word settles the same draw, so the law is
// the same; the lookups of chunks past the segment's end influence
// nothing.
func (t *ThresholdedLaplace) fill(br *bitReader, lo, hi int64, dst []Entry) []Entry {
	skipB, valB, valF := t.skipByte, t.valueByte, t.valueF
	i := lo - 1
	br.n = 0
	for {
		w := br.r.Uint64()
		s0, v0, s1, v1 := skipB[uint16(w)], valB[uint16(w>>16)], skipB[uint16(w>>32)], valB[uint16(w>>48)]
		if s0 == slowChunk || v0 == slowChunk || s1 == slowChunk || v1 == slowChunk {
			var done bool
			if dst, i, done = t.slowWord(br, w, i, hi, dst); done {
				break
			}
			continue
		}
		if i += int64(s0) + 1; i >= hi { // the next survivor lies beyond the segment
			break
		}
		dst = append(dst, Entry{Word: int32(i), Value: valF[v0]})
		if i += int64(s1) + 1; i >= hi {
			break
		}
		dst = append(dst, Entry{Word: int32(i), Value: valF[v1]})
	}
	br.n = 0
	return dst
}

// slowWord draws the two survivors of word w as fill does, finishing the
// chunks the byte tables leave open through the full samplers; i is the
// last word placed so far. It reports done when the segment [.., hi) ends
// before the word's survivors do.
func (t *ThresholdedLaplace) slowWord(br *bitReader, w uint64, i, hi int64, dst []Entry) (_ []Entry, _ int64, done bool) {
	for range 2 {
		s := uint64(t.skipByte[uint16(w)])
		if s == slowChunk {
			s = t.skip.sampleFrom(br, uint16(w))
		}
		if s >= uint64(hi-i-1) {
			return dst, i, true
		}
		i += int64(s) + 1
		var val float32
		if v := t.valueByte[uint16(w>>16)]; v != slowChunk {
			val = t.valueF[v]
		} else {
			val = t.valueOf(t.value.sampleFrom(br, uint16(w>>16)))
		}
		dst = append(dst, Entry{Word: int32(i), Value: val})
		w >>= 32
	}
	return dst, i, false
}

// valueOf returns the value of a survivor e grid steps above k₀.
func (t *ThresholdedLaplace) valueOf(e uint64) float32 {
	return float32(t.k0+int64(e)) * float32(t.cfg.Granularity)
}

// DrawNaive appends to dst[:0] the same vector as DrawCounts, drawn the
// literal way: one discrete Laplace draw for each of the V entries, then the
// threshold. It is the reference Draw is tested against.
func (t *ThresholdedLaplace) DrawNaive(r *rand.Rand, counts []Count, dst []Entry) []Entry {
	t.checkCounts(counts)
	br := bitReader{r: r}
	g := float32(t.cfg.Granularity)
	dst = dst[:0]
	ci := 0
	for w := 0; w < t.cfg.Vocab; w++ {
		v := t.noise.sample(&br)
		if ci < len(counts) && int(counts[ci].Word) == w {
			v += int64(counts[ci].N) * t.steps
			ci++
		}
		if v >= t.k0 {
			dst = append(dst, Entry{Word: int32(w), Value: float32(v) * g})
		}
	}
	return dst
}

// AppendCompact appends the compact encoding of a vector drawn by t to dst:
// the number of entries, then for each entry the gap to the previous word
// and its value in grid steps above the threshold, all as uvarints — about
// 2.5 bytes per entry at FTM's settings instead of 8.
func (t *ThresholdedLaplace) AppendCompact(dst []byte, es []Entry) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(es)))
	prev := int64(-1)
	g := float64(t.cfg.Granularity)
	for _, e := range es {
		dst = binary.AppendUvarint(dst, uint64(int64(e.Word)-prev-1))
		prev = int64(e.Word)
		dst = binary.AppendUvarint(dst, uint64(int64(float64(e.Value)/g)-t.k0))
	}
	return dst
}

// ReadCompact decodes one vector written by AppendCompact from the start of
// src into dst[:0] and returns it with the number of bytes read. It reports
// an error for truncated or out-of-range input.
func (t *ThresholdedLaplace) ReadCompact(src []byte, dst []Entry) ([]Entry, int, error) {
	dst = dst[:0]
	n, off := binary.Uvarint(src)
	if off <= 0 || n > uint64(t.cfg.Vocab) {
		return nil, 0, fmt.Errorf("privacy: compact vector: bad length")
	}
	prev := int64(-1)
	g := float32(t.cfg.Granularity)
	for k := uint64(0); k < n; k++ {
		gap, m := binary.Uvarint(src[off:])
		if m <= 0 {
			return nil, 0, fmt.Errorf("privacy: compact vector: entry %d: truncated", k)
		}
		off += m
		val, m := binary.Uvarint(src[off:])
		if m <= 0 {
			return nil, 0, fmt.Errorf("privacy: compact vector: entry %d: truncated", k)
		}
		off += m
		w := prev + 1 + int64(gap)
		if gap >= uint64(t.cfg.Vocab) || w >= int64(t.cfg.Vocab) || val > 1<<40 {
			return nil, 0, fmt.Errorf("privacy: compact vector: entry %d: out of range", k)
		}
		prev = w
		dst = append(dst, Entry{Word: int32(w), Value: float32(t.k0+int64(val)) * g})
	}
	return dst, off, nil
}
