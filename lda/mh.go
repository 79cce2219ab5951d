package lda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/internal/chacha8"
	"github.com/fedtopic/fedtopic/internal/hugepage"
	"github.com/fedtopic/fedtopic/internal/parallel"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/topic"
)

// MH is a partially collapsed Metropolis–Hastings chain (FTM Algorithm 1):
// θ is integrated out, Φ is explicit. One iteration samples every item's
// topic with Φ fixed — documents in parallel over fixed blocks — then draws
// φ_k ~ Dirichlet(C_k· + β) from the new topic-word counts.
//
// Plain LDA runs a specialised loop over tokens; SentenceLDA and custom
// Targets (FTM's privatized tokens) run the same MH steps through the
// Target interface.
type MH struct {
	cfg         Config // defaults applied
	k, v        int
	alpha, beta float64
	docStart    []int    // items of document d are [docStart[d], docStart[d+1])
	blocks      []int    // documents of block b are [blocks[b], blocks[b+1])
	z           []uint16 // topic of every item
	words       []int32  // plain LDA: item i is the token words[i]; nil with a Target
	target      Target
	tokens      int     // tokens per sweep, for progress reports
	nkw         []int32 // plain LDA: C_kw = nkw[w*K+k]
	wordStart   []int32 // plain LDA: the tokens of word w are wordTok[wordStart[w]:wordStart[w+1]]
	wordTok     []int32
	countCuts   []int           // plain LDA: word ranges of about equal numbers of tokens, for countLDA
	coll        *collapsedState // collapsed kernel, allocated on first use
	tokenBurn   *MH             // SentenceLDA burn-in: a plain-LDA chain on the tokens
	unitStart   []int           // SentenceLDA: tokens of each sentence
	counts      *Counts         // Target: C_kw as floats
	phi         *Phi            // Φ of the next sweep
	phiStale    bool            // Φ must be drawn from the counts before the next sweep
	countsStale bool            // counts must be recomputed from z (after a cancelled sweep)
	iter        int             // sweeps done
	// wordsAhead: long documents' MH steps draw their words ahead and
	// prefetch what they will read (see mhDrawAhead), set where a column
	// of K entries is longer than prefetchToken takes whole.
	wordsAhead bool
	// denseLong: the burn-in draws the tokens of long documents from
	// their collapsed conditional over all K topics (denseToken) instead of
	// taking MH steps, set where wordsAhead is not.
	denseLong bool
	// shortLen: the burn-in takes the near-exact proposal of collapsedDoc
	// in documents of at most shortLen tokens (see denseShortK).
	shortLen int
	// denseOrder: the topics in the order of denseDraw's running sums.
	denseOrder []uint16
	// narrowViews: the burn-in's views of the counts hold uint16 (see
	// viewCount).
	narrowViews bool
	sweepers    []*sweepWorker
	phiWorkers  []*phiWorker
}

// sweepWorker is the scratch space of one goroutine of a sweep.
type sweepWorker struct {
	src *chacha8.Stream
	cnt []int32   // C_d· of the document being sampled
	dt  docTopics // the distinct topics of a short document
	// ring holds the words of the MH steps drawn ahead in a long
	// document (see mhDrawAhead).
	ring []uint64
	// dense holds the running sums of denseToken's conditional, and q
	// the factors (C_dk + α)/(n_k + Vβ) of its weights: at the topics of
	// the document being drawn densely with C_dk its counts, elsewhere
	// with 0 (see collapsedKernel.denseToken); both 8·⌈K/8⌉ long and
	// aligned to 64 bytes, where the chain draws densely (MH.denseLong,
	// plain LDA).
	dense []uint64
	q     []float64
	_     [parallel.CacheGap]byte
}

// newSweepWorker returns the scratch of one goroutine of a sweep at K
// topics, with room for dense draws if dense.
func newSweepWorker(k int, dense bool) *sweepWorker {
	sw := &sweepWorker{src: chacha8.New([32]byte{}), cnt: parallel.Padded[int32](k), dt: docTopics{listed: parallel.Padded[uint8](k)}}
	if dense {
		sw.dense = parallel.Aligned[uint64]((k + 7) &^ 7)
		sw.q = parallel.Aligned[float64]((k + 7) &^ 7)
	}
	return sw
}

// NewMH returns an MH chain for cfg.Model (LDA or SentenceLDA) on c, with
// topics initialised uniformly at random; its first cfg.BurnIn sweeps are
// burn-in (see Config.BurnIn). cfg.Sampler SamplerADLDA makes every sweep of
// a plain-LDA chain use the collapsed kernel; other values are ignored.
func NewMH(c *corpus.Corpus, cfg Config) (*MH, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if err := checkCorpus(c, cfg.Model == ModelSLDA); err != nil {
		return nil, err
	}
	if cfg.Model == ModelSLDA {
		if cfg.Sampler == SamplerADLDA {
			return nil, errors.New("lda: the adlda sampler is for plain LDA, not SentenceLDA")
		}
		t := &sentenceTarget{words: c.Words, unitStart: c.UnitStart}
		m, err := newMH(c.DocUnit, c.V, c.NumTokens(), nil, t, cfg)
		if err != nil || cfg.BurnIn == 0 {
			return m, err
		}
		// Burn-in on the tokens, with a seed of its own.
		tc := cfg
		tc.Model, tc.Sampler, tc.Seed = ModelLDA, SamplerADLDA, rng.Derive(cfg.Seed, "lda", "slda burn-in").Uint64()
		if m.tokenBurn, err = newMH(c.DocStart, c.V, c.NumTokens(), c.Words, nil, tc); err != nil {
			return nil, err
		}
		m.unitStart = c.UnitStart
		return m, nil
	}
	return newMH(c.DocStart, c.V, c.NumTokens(), c.Words, nil, cfg)
}

// NewTargetMH returns an MH chain over items with the likelihood of target:
// document d holds the items [docStart[d], docStart[d+1]), v is the
// vocabulary size. Topics start uniformly at random. cfg.Model and
// cfg.Sampler are ignored. This is how FTM runs the sampler on privatized
// tokens.
func NewTargetMH(docStart []int, v int, target Target, cfg Config) (*MH, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if target == nil {
		return nil, errors.New("lda: nil target")
	}
	if v < 1 {
		return nil, fmt.Errorf("lda: vocabulary size %d, want ≥ 1", v)
	}
	if err := checkOffsets("document", docStart, -1); err != nil {
		return nil, err
	}
	return newMH(docStart, v, docStart[len(docStart)-1], nil, target, cfg)
}

func newMH(docStart []int, v, tokens int, words []int32, target Target, cfg Config) (*MH, error) {
	if words != nil && len(words) > math.MaxInt32 {
		return nil, fmt.Errorf("lda: %d tokens; the sampler indexes at most %d", len(words), math.MaxInt32)
	}
	n := docStart[len(docStart)-1]
	m := &MH{
		cfg: cfg, k: cfg.K, v: v, alpha: cfg.Alpha, beta: cfg.Beta,
		docStart: docStart, z: make([]uint16, n), words: words, target: target, tokens: tokens,
		wordsAhead: uintptr(cfg.K)*4 > maxWholeColumn, // 4 bytes: float32 of Φ, int32 of counts
	}
	m.denseLong = !m.wordsAhead
	m.denseOrder = denseOrder(cfg.K)
	m.shortLen = cfg.ExactLen
	if m.denseLong && cfg.K <= denseShortK {
		m.shortLen = 0
	}
	propose := make([]bool, v)
	if words != nil {
		for _, w := range words {
			propose[w] = true
		}
		m.nkw = hugepage.Make[int32](m.k * v)
		m.wordStart, m.wordTok = wordTokens(words, v)
		m.narrowViews = m.wordsAhead && maxRun(m.wordStart) < 1<<16
		m.countCuts = tokenCuts(m.wordStart, countParts*cfg.Workers)
	} else {
		for i := 0; i < n; i++ {
			pw := target.ProposalWords(i)
			if len(pw) == 0 {
				return nil, fmt.Errorf("lda: item %d has no proposal words", i)
			}
			for _, w := range pw {
				if w < 0 || int(w) >= v {
					return nil, fmt.Errorf("lda: item %d: proposal word %d outside the vocabulary [0, %d)", i, w, v)
				}
				propose[w] = true
			}
		}
		m.counts = &Counts{K: m.k, V: v, Data: hugepage.Make[float64](m.k * v)}
	}
	m.phi = newPhi(m.k, v, propose, target != nil)
	m.blocks = makeWaveBlocks(docStart, cfg.BlockSize)
	for range cfg.Workers {
		m.sweepers = append(m.sweepers, newSweepWorker(m.k, m.denseLong && words != nil))
		m.phiWorkers = append(m.phiWorkers, newPhiWorker())
	}
	// Uniform initial topics, one stream per block. Drawing each token's
	// first topic instead from the collapsed conditional given the tokens
	// before it (progressive initialisation) was tried and dropped: on the
	// kernel's documentation (K = 50, min-df 5, bench/ldabench -mode
	// quality, seeds 1 and 2) it left held-out perplexity at 1,072 and
	// 1,063 after 250 sweeps against 1,039 and 1,043 from uniform topics,
	// and at 1,055 and 1,051 after 300 against 1,035 and 1,036.
	k := uint64(m.k)
	_ = parallel.Blocks(context.Background(), cfg.Workers, len(m.blocks)-1, func(_, b int) {
		r := rng.Derive(cfg.Seed, "lda", "init", b)
		for i := docStart[m.blocks[b]]; i < docStart[m.blocks[b+1]]; i++ {
			m.z[i] = uint16(r.Uint64N(k))
		}
	})
	m.recount()
	m.phiStale = true
	return m, nil
}

// makeBlocks cuts the documents into blocks of whole documents holding at
// least size items each (the last may hold fewer).
func makeBlocks(docStart []int, size int) []int {
	return cutBlocks(docStart, func(int) int { return size })
}

// tailBlocks is the number of short blocks that end each wave of the
// collapsed kernel (see makeWaveBlocks).
const tailBlocks = 2

// makeWaveBlocks cuts the documents into blocks of whole documents for
// the MH chains, a wave of collapsedWave blocks at a time: the last
// tailBlocks blocks of a wave hold at least size/4 items and the others
// enough more than size that a wave holds about collapsedWave·size items,
// as with blocks of size. The workers take a wave's blocks longest first
// (see orderWaves), so the short ones come last, and a worker that has
// finished its share of the wave waits for a short block, not a long one.
// On the kernel's documentation (K = 1000, 300 sweeps, three alternated
// repeats) the waits at the waves' ends fell from 3.1–3.6 s to 1.5–1.7 s,
// summed over both workers; two workers' chains took 34.7–35.7 s against
// 35.9–37.5 s with blocks of one size, one worker's 68.9–73.2 s against
// 67.8–69.5 s, and two workers ran 1.97–2.05 times as fast as one against
// 1.84–1.91. Quality held: on WordNet glosses (K = 50, min-df 2, two
// workers, seeds 1–12) 250 sweeps of fedtopic train gave a held-out
// perplexity of 3,513.9 on average against 3,512.5, and bench/ldabench
// -mode quality after 300 sweeps 4,100 against 4,087 (lower on 5 seeds of
// 12), and 1,018 against 1,021 on the kernel's documentation (min-df 5,
// seeds 1–4): within the spread of single chains (see Config.BlockSize).
func makeWaveBlocks(docStart []int, size int) []int {
	short := max(1, size/4)
	long := size + (size-short)*tailBlocks/(collapsedWave-tailBlocks)
	return cutBlocks(docStart, func(b int) int {
		if b%collapsedWave >= collapsedWave-tailBlocks {
			return short
		}
		return long
	})
}

// cutBlocks cuts the documents into blocks of whole documents, closing
// block b at the first document that brings it to at least size(b) items
// (the last may hold fewer).
func cutBlocks(docStart []int, size func(b int) int) []int {
	blocks := []int{0}
	d := len(docStart) - 1
	for i := 1; i <= d; i++ {
		if docStart[i]-docStart[blocks[len(blocks)-1]] >= size(len(blocks)-1) || i == d {
			blocks = append(blocks, i)
		}
	}
	if d == 0 {
		blocks = append(blocks, 0)
	}
	return blocks
}

// checkOffsets checks that off is a non-decreasing offset list starting at
// 0 and, when end ≥ 0, ending at end.
func checkOffsets(what string, off []int, end int) error {
	if len(off) < 2 {
		return fmt.Errorf("lda: %s offsets have %d entries, want ≥ 2 (at least one %s)", what, len(off), what)
	}
	if off[0] != 0 {
		return fmt.Errorf("lda: first %s starts at %d, want 0", what, off[0])
	}
	for i := 1; i < len(off); i++ {
		if off[i] < off[i-1] {
			return fmt.Errorf("lda: %s %d ends at %d before it starts at %d", what, i-1, off[i], off[i-1])
		}
	}
	if end >= 0 && off[len(off)-1] != end {
		return fmt.Errorf("lda: last %s ends at %d, want %d", what, off[len(off)-1], end)
	}
	return nil
}

// checkCorpus reports why c cannot be trained on.
func checkCorpus(c *corpus.Corpus, units bool) error {
	if c == nil {
		return errors.New("lda: nil corpus")
	}
	if c.V < 1 {
		return fmt.Errorf("lda: corpus vocabulary size %d, want ≥ 1", c.V)
	}
	if c.NumDocs() == 0 || c.NumTokens() == 0 {
		return errors.New("lda: empty corpus: no tokens to train on")
	}
	if err := checkOffsets("document", c.DocStart, len(c.Words)); err != nil {
		return err
	}
	for i, w := range c.Words {
		if w < 0 || int(w) >= c.V {
			return fmt.Errorf("lda: token %d has word id %d outside the vocabulary [0, %d)", i, w, c.V)
		}
	}
	if !units {
		return nil
	}
	if !c.HasUnits() {
		return errors.New("lda: SentenceLDA needs a corpus with sentence (unit) boundaries")
	}
	if err := checkOffsets("sentence", c.UnitStart, len(c.Words)); err != nil {
		return err
	}
	if err := checkOffsets("document's sentence", c.DocUnit, len(c.UnitStart)-1); err != nil {
		return err
	}
	if len(c.DocUnit) != len(c.DocStart) {
		return fmt.Errorf("lda: corpus has %d sentence offsets per document, want %d", len(c.DocUnit), len(c.DocStart))
	}
	for d := 0; d < c.NumDocs(); d++ {
		if c.UnitStart[c.DocUnit[d]] != c.DocStart[d] || c.UnitStart[c.DocUnit[d+1]] != c.DocStart[d+1] {
			return fmt.Errorf("lda: the sentences of document %d do not cover its tokens exactly", d)
		}
	}
	for u := 0; u+1 < len(c.UnitStart); u++ {
		if c.UnitStart[u+1] == c.UnitStart[u] {
			return fmt.Errorf("lda: sentence %d is empty", u)
		}
	}
	return nil
}

// Run runs iterations sweeps, calling progress (if not nil) after each with
// the number of sweeps and tokens done in this call. It checks ctx between
// blocks of documents; after a cancellation the chain stays usable, but a
// later Run no longer reproduces an uninterrupted run.
func (m *MH) Run(ctx context.Context, iterations int, progress func(iter, tokensDone int)) error {
	for it := 1; it <= iterations; it++ {
		if err := m.step(ctx); err != nil {
			return fmt.Errorf("lda: iteration %d: %w", m.iter+1, err)
		}
		if progress != nil {
			progress(it, it*m.tokens)
		}
	}
	return nil
}

// step runs one iteration: draw Φ from the counts if needed, sample every
// item's topic, recount.
func (m *MH) step(ctx context.Context) error {
	if m.countsStale {
		m.recount()
	}
	if m.tokenBurn != nil {
		return m.stepTokenBurn(ctx)
	}
	if m.collapsedNext() {
		if err := m.prepareCollapsed(ctx); err != nil {
			return err
		}
		if err := m.sweepCollapsed(ctx); err != nil {
			m.countsStale = true
			return err
		}
		m.iter++
		m.phiStale = true
		if !m.collapsedNext() {
			// Burn-in is over: release the per-worker count copies.
			m.settleCounts()
			m.coll = nil
		}
		return nil
	}
	if m.phiStale {
		var err error
		if m.words != nil {
			// countLDA clears each word's row as it counts it, while the
			// row is in cache, so the draw leaves nkw as it is.
			err = drawPhiKeep(ctx, m.phi, m.nkw, m.beta, m.cfg.Seed, m.iter, m.phiWorkers, true)
		} else {
			// The draw zeroes a Target's counts for the sweep to refill.
			err = drawPhi(ctx, m.phi, m.counts.Data, m.beta, m.cfg.Seed, m.iter, m.phiWorkers)
		}
		// The sweep changes the topics before it counts them again.
		m.countsStale = true
		if err != nil {
			return err
		}
		m.phiStale = false
	} else {
		m.clearCounts()
	}
	return m.sweep(ctx)
}

// stepTokenBurn runs one burn-in sweep of a SentenceLDA chain: a sweep of
// the collapsed kernel on its tokens as plain LDA. After the last one every
// sentence takes the topic most of its tokens have (the smallest on a
// tie), and the partially collapsed sentence chain starts from there. The
// token chain forms topics much faster than the sentence chain from a
// random start, where a topic that empties gets a spiky Dirichlet(β) row
// no sentence can enter.
func (m *MH) stepTokenBurn(ctx context.Context) error {
	if err := m.tokenBurn.step(ctx); err != nil {
		return err
	}
	m.iter++
	if m.iter < m.cfg.BurnIn {
		return nil
	}
	zt := m.tokenBurn.z
	cnt := make([]int32, m.k)
	for u := range m.z {
		best := 0
		for _, t := range zt[m.unitStart[u]:m.unitStart[u+1]] {
			cnt[t]++
			if cnt[t] > cnt[best] || (cnt[t] == cnt[best] && int(t) < best) {
				best = int(t)
			}
		}
		for _, t := range zt[m.unitStart[u]:m.unitStart[u+1]] {
			cnt[t] = 0
		}
		m.z[u] = uint16(best)
	}
	m.tokenBurn = nil
	m.recount()
	m.phiStale = true
	return nil
}

// collapsedNext reports whether the next iteration runs the collapsed
// (AD-LDA) kernel: throughout for Sampler "adlda", during burn-in for "mh".
func (m *MH) collapsedNext() bool {
	if m.words == nil {
		return false
	}
	return m.cfg.Sampler == SamplerADLDA || m.iter < m.cfg.BurnIn
}

// sweep samples every item's topic once with the current Φ, refilling the
// counts (which must be zero).
func (m *MH) sweep(ctx context.Context) error {
	sweep := m.sweepBlockTarget
	if m.words != nil {
		sweep = m.sweepBlockLDA
	}
	if err := parallel.Blocks(ctx, len(m.sweepers), len(m.blocks)-1, func(w, b int) { sweep(m.sweepers[w], b) }); err != nil {
		return err
	}
	if m.words == nil {
		m.countTarget()
	} else {
		m.countLDA()
	}
	m.countsStale = false
	m.iter++
	m.phiStale = true
	return nil
}

// clearCounts readies the counts for a sweep to refill: it zeroes a
// Target's; plain LDA's count clears each row itself (countLDA).
func (m *MH) clearCounts() {
	if m.words == nil {
		clear(m.counts.Data)
	}
}

// settleCounts brings the topic-word counts up to date, for a reader of
// them between iterations: it recounts them after a cancelled sweep, and
// makes the moves a collapsed sweep left to the next iteration (see
// collapsedKernel.sweep).
func (m *MH) settleCounts() {
	switch {
	case m.countsStale:
		m.recount()
	case m.coll != nil && m.coll.replay:
		m.replayMoves()
	}
}

// recount recomputes the topic-word counts from z.
func (m *MH) recount() {
	if m.coll != nil {
		m.coll.replay = false
	}
	m.clearCounts()
	if m.words != nil {
		m.countLDA()
	} else {
		m.countTarget()
	}
	m.countsStale = false
}

// countLDA counts C_kw from the tokens' topics into nkw, clearing each
// word's row just before it counts it. Each part of countCuts is a range of
// words whose rows one worker fills from the words' tokens, so no two
// workers write the same entry and each reads only its own tokens.
func (m *MH) countLDA() {
	k, z := m.k, m.z
	cuts := m.countCuts
	_ = parallel.Blocks(context.Background(), len(m.sweepers), len(cuts)-1, func(_, r int) {
		for w := cuts[r]; w < cuts[r+1]; w++ {
			col := m.nkw[w*k : (w+1)*k]
			clear(col)
			for _, i := range m.tokensOf(w) {
				col[z[i]]++
			}
		}
	})
}

// countParts is the number of parts per worker into which countLDA cuts
// the words, so that a worker slowed down holds up little.
const countParts = 4

// wordTokens lists the tokens of every word in order: word w's are
// tok[start[w]:start[w+1]]. It costs 4 bytes per token.
func wordTokens(words []int32, v int) (start, tok []int32) {
	start = make([]int32, v+1)
	for _, w := range words {
		start[w+1]++
	}
	for w := range v {
		start[w+1] += start[w]
	}
	tok = make([]int32, len(words))
	next := slices.Clone(start[:v])
	for i, w := range words {
		tok[next[w]] = int32(i)
		next[w]++
	}
	return start, tok
}

// maxRun returns the most tokens of one word, from wordTokens' start.
func maxRun(start []int32) int {
	n := int32(0)
	for w := 1; w < len(start); w++ {
		n = max(n, start[w]-start[w-1])
	}
	return int(n)
}

// tokenCuts cuts the words into at most parts ranges [cuts[r], cuts[r+1])
// of about equal numbers of tokens.
func tokenCuts(start []int32, parts int) []int {
	v := len(start) - 1
	n := int(start[v])
	cuts := []int{0}
	for r := 1; r < parts; r++ {
		w, _ := slices.BinarySearch(start, int32(r*n/parts))
		if w = min(w, v); w > cuts[len(cuts)-1] {
			cuts = append(cuts, w)
		}
	}
	if cuts[len(cuts)-1] < v {
		cuts = append(cuts, v)
	}
	return cuts
}

// tokensOf returns the tokens of word w, or nil for a chain without the
// index (a Target's).
func (m *MH) tokensOf(w int) []int32 {
	if m.wordStart == nil {
		return nil
	}
	return m.wordTok[m.wordStart[w]:m.wordStart[w+1]]
}

// countTarget adds every item's counts with the Target. Worker r handles the
// topics of one contiguous range and walks the items in order, so every
// entry is summed in item order whatever the number of workers.
func (m *MH) countTarget() {
	nr := min(len(m.sweepers), (m.k+7)/8)
	step := (m.k + nr - 1) / nr
	step = (step + 7) &^ 7 // whole cache lines of float64 per range
	nr = (m.k + step - 1) / step
	_ = parallel.Blocks(context.Background(), nr, nr, func(_, r int) {
		lo, hi := uint16(r*step), uint16(min(m.k, (r+1)*step))
		for i, t := range m.z {
			if t >= lo && t < hi {
				m.target.AddCounts(i, int(t), m.counts)
			}
		}
	})
}

// SetPhi replaces the Φ of the next sweep with phi (K×V row-major, each row
// a probability distribution), as FTM does with a composed model. The next
// sweep samples from it instead of drawing Φ from the counts.
func (m *MH) SetPhi(ctx context.Context, phi []float64) error {
	if len(phi) != m.k*m.v {
		return fmt.Errorf("lda: SetPhi: %d entries, want K×V = %d×%d", len(phi), m.k, m.v)
	}
	for i, x := range phi {
		if !(x >= 0) || math.IsInf(x, 0) {
			return fmt.Errorf("lda: SetPhi: entry (%d, %d) = %v, want a finite probability", i/m.v, i%m.v, x)
		}
	}
	if err := m.phi.set(ctx, phi, m.phiWorkers); err != nil {
		m.phiStale = true
		return fmt.Errorf("lda: SetPhi: %w", err)
	}
	m.phiStale = false
	return nil
}

// Reinit draws every item's topic afresh from the word proposal of the
// current Φ alone (for FTM's composed local models: call SetPhi first) and
// recounts. Block b draws from rng.Derive(seed, "lda", "reinit", iteration, b).
func (m *MH) Reinit(ctx context.Context) error {
	if m.phiStale {
		return errors.New("lda: Reinit: no Φ to draw from; call SetPhi or Run first")
	}
	if m.coll != nil {
		m.coll.viewsAt = -1 // the collapsed kernel's views no longer hold the counts
	}
	p := m.phi
	err := parallel.Blocks(ctx, len(m.sweepers), len(m.blocks)-1, func(_, b int) {
		r := rng.Derive(m.cfg.Seed, "lda", "reinit", m.iter, b)
		for i := m.docStart[m.blocks[b]]; i < m.docStart[m.blocks[b+1]]; i++ {
			var w int
			if m.words != nil {
				w = int(m.words[i])
			} else {
				pw := m.target.ProposalWords(i)
				w = int(pw[r.IntN(len(pw))])
			}
			for {
				if t, ok := p.drawWord(w, r.Uint64()); ok {
					m.z[i] = uint16(t)
					break
				}
			}
		}
	})
	m.recount()
	if err != nil {
		return fmt.Errorf("lda: Reinit: %w", err)
	}
	return nil
}

// Iteration returns the number of sweeps done so far.
func (m *MH) Iteration() int { return m.iter }

// Assignments returns the topic of every item (token, or sentence for
// SentenceLDA) as a read-only view.
func (m *MH) Assignments() []uint16 { return m.z }

// Phi returns the Φ of the latest partially collapsed sweep (or the one set
// by SetPhi): the draw the chain sampled with, not a point estimate. It is
// read-only, is overwritten by the next Run, and means nothing before the
// first such sweep (during burn-in).
func (m *MH) Phi() *Phi { return m.phi }

// TopicWordCounts returns C_kw, row-major K×V, counted from the current
// assignments (for a Target: the sums of AddCounts).
func (m *MH) TopicWordCounts() []float64 {
	m.settleCounts()
	k, v := m.k, m.v
	c := make([]float64, k*v)
	for w := 0; w < v; w++ {
		for t := 0; t < k; t++ {
			if m.words != nil {
				c[t*v+w] = float64(m.nkw[w*k+t])
			} else {
				c[t*v+w] = m.counts.Data[w*k+t]
			}
		}
	}
	return c
}

// DocTopicCounts returns C_d·: how many items of document d have each topic.
func (m *MH) DocTopicCounts(d int) []int32 {
	return docTopicCounts(m.z[m.docStart[d]:m.docStart[d+1]], m.k)
}

func docTopicCounts(z []uint16, k int) []int32 {
	c := make([]int32, k)
	for _, t := range z {
		c[t]++
	}
	return c
}

// Model returns the posterior-mean estimate of Φ from the current counts,
// φ_kw = (C_kw + β)/(C_k + Vβ), with α, β and provenance filled in and
// Vocab left nil for the caller.
func (m *MH) Model() *topic.Model {
	if m.tokenBurn != nil {
		// A SentenceLDA chain in its burn-in: the topics are its tokens'.
		return m.modelOf(m.tokenBurn.Model().Phi, 1)
	}
	m.settleCounts()
	if m.words != nil {
		return m.modelOf(posteriorPhi(m.nkw, m.k, m.v, m.cfg.Workers, m.cfg.Beta), 1)
	}
	return m.modelOf(posteriorPhi(m.counts.Data, m.k, m.v, m.cfg.Workers, m.cfg.Beta), 1)
}

// newSum returns an empty sum of the chain's posterior means.
func (m *MH) newSum() *posteriorSum {
	return newPosteriorSum(m.k, m.v, m.cfg.Workers, m.cfg.Beta)
}

// addState adds the posterior mean of Φ given the current counts to ps.
func (m *MH) addState(ps *posteriorSum) {
	if m.tokenBurn != nil {
		m.tokenBurn.addState(ps)
		return
	}
	m.settleCounts()
	if m.words != nil {
		addState(ps, m.nkw)
	} else {
		addState(ps, m.counts.Data)
	}
}

// modelOf returns the model of phi, an average over the chain's last
// average states.
func (m *MH) modelOf(phi []float64, average int) *topic.Model {
	return newModel(phi, m.k, m.v, m.cfg, m.iter, average)
}

// posteriorPhi returns φ_kw = (C_kw + β)/(C_k + Vβ) at phi[k·V + w]
// (row-major K×V) for the counts C_kw = cols[w·K + k] (a column per word),
// on workers goroutines.
func posteriorPhi[C int32 | float64](cols []C, k, v, workers int, beta float64) []float64 {
	inv := topicSums(cols, k, v)
	vb := float64(v) * beta
	for t, n := range inv {
		inv[t] = 1 / (n + vb)
	}
	phi := hugepage.Make[float64](k * v)
	forWordGroups(v, workers, func(w0, w1 int) {
		for t, x := range inv {
			row := phi[t*v+w0 : t*v+w1]
			for j := range row {
				row[j] = (float64(cols[(w0+j)*k+t]) + beta) * x
			}
		}
	})
	return phi
}

// topicSums returns C_k = Σ_w cols[w·K + k].
func topicSums[C int32 | float64](cols []C, k, v int) []float64 {
	nk := make([]float64, k)
	for w := range v {
		for t, c := range cols[w*k : (w+1)*k] {
			nk[t] += float64(c)
		}
	}
	return nk
}

// forWordGroups calls f(w0, w1) for every group of eight words [w0, w1),
// in blocks of words spread over workers goroutines. Φ is row-major and
// the counts a column per word, so making Φ from them writes each word's
// entries K·V apart; eight words of one topic fill a cache line of Φ, which
// is then written whole while in the cache.
func forWordGroups(v, workers int, f func(w0, w1 int)) {
	const words = 8 // a cache line of float64
	const block = 64 * words
	_ = parallel.Blocks(context.Background(), workers, (v+block-1)/block, func(_, b int) {
		for w0 := b * block; w0 < min(v, (b+1)*block); w0 += words {
			f(w0, min(v, w0+words))
		}
	})
}

// posteriorSum accumulates the posterior means of Φ of several states,
// Σ_s (C_kw^(s) + β)/(C_k^(s) + Vβ), as Σ_s C_kw^(s)/(C_k^(s) + Vβ) at
// acc[w·K + k], the counts' own layout, so that adding a state streams
// through both in order, and β·Σ_s 1/(C_k^(s) + Vβ); on workers
// goroutines.
type posteriorSum struct {
	k, v, workers int
	beta          float64
	states        int
	acc           []float64
	invSum        []float64
}

func newPosteriorSum(k, v, workers int, beta float64) *posteriorSum {
	return &posteriorSum{k: k, v: v, workers: workers, beta: beta, acc: hugepage.Make[float64](k * v), invSum: make([]float64, k)}
}

// addState adds the state of counts cols[w·K + k] to ps.
func addState[C int32 | float64](ps *posteriorSum, cols []C) {
	k, v := ps.k, ps.v
	inv := topicSums(cols, k, v)
	vb := float64(v) * ps.beta
	for t, n := range inv {
		inv[t] = 1 / (n + vb)
		ps.invSum[t] += inv[t]
	}
	const block = 512 // words
	_ = parallel.Blocks(context.Background(), ps.workers, (v+block-1)/block, func(_, b int) {
		lo, hi := b*block*k, min(v, (b+1)*block)*k
		acc, cs := ps.acc[lo:hi], cols[lo:hi]
		for i := 0; i < len(acc); i += k {
			a, c := acc[i:i+k], cs[i:i+k]
			for t, x := range inv {
				a[t] += float64(c[t]) * x
			}
		}
	})
	ps.states++
}

// phi returns the mean of the states' posterior means, row-major K×V.
func (ps *posteriorSum) phi() []float64 {
	k, v, n := ps.k, ps.v, float64(ps.states)
	phi := hugepage.Make[float64](k * v)
	forWordGroups(v, ps.workers, func(w0, w1 int) {
		for t, is := range ps.invSum {
			row, b := phi[t*v+w0:t*v+w1], ps.beta*is
			for j := range row {
				row[j] = (ps.acc[(w0+j)*k+t] + b) / n
			}
		}
	})
	return phi
}

// newModel returns a topic.Model of phi, row-major K×V, after iter sweeps
// under cfg, averaged over the last average of them.
func newModel(phi []float64, k, v int, cfg Config, iter, average int) *topic.Model {
	alpha := make([]float64, k)
	for t := range alpha {
		alpha[t] = cfg.Alpha
	}
	params := cfg.params()
	params["average"] = strconv.Itoa(average)
	return &topic.Model{
		Phi: phi, K: k, V: v, Alpha: alpha, Beta: cfg.Beta,
		Prov: topic.Provenance{Method: cfg.Model, Params: params, Seed: cfg.Seed, Iterations: iter},
	}
}
