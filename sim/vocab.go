package sim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/sim/vocabround"
)

// SelectVocabulary runs the private vocabulary round over the engine: party
// i releases the words of docs[i] (each document a list of words) that pass
// partition selection, charging its ledger in sc.LedgerDir, and the
// coordinator broadcasts their sorted union. It uses sc's parties, seed,
// budget, ledger directory, quorum and faults, not its algorithm or
// corpora. It returns the vocabulary and the round's record (for
// Scenario.Prior).
func SelectVocabulary(ctx context.Context, sc Scenario, p vocabround.Params, docs [][][]string) ([]string, fed.RoundRecord, error) {
	var rec fed.RoundRecord
	if err := p.Validate(); err != nil {
		return nil, rec, err
	}
	e := sc.engine()
	if len(sc.Parties) == 0 {
		e.ids = make([]string, len(docs))
		for i := range docs {
			e.ids[i] = fmt.Sprintf("p%d", i+1)
		}
	}
	if len(docs) != len(e.ids) {
		return nil, rec, fmt.Errorf("sim: vocabulary round: %d parties, %d document sets", len(e.ids), len(docs))
	}
	e.run += "-vocabulary"
	// The selection releases DP word sets, not a sum; secure aggregation
	// does not apply to it.
	e.secure = nil
	params, err := json.Marshal(p)
	if err != nil {
		return nil, rec, err
	}
	setup := fed.Setup{Run: e.run, Parties: e.ids, Seed: sc.Seed, Params: params}
	agg, err := vocabround.Algorithm.NewAggregator(setup)
	if err != nil {
		return nil, rec, err
	}
	val, err := vocabround.Algorithm.NewValidator(setup)
	if err != nil {
		return nil, rec, err
	}
	learners := make([]fed.Learner, len(e.ids))
	for i := range e.ids {
		if learners[i], err = vocabround.NewLearner(p, docs[i], rng.Derive(sc.Seed, "vocabround", "party", e.ids[i])); err != nil {
			return nil, rec, err
		}
	}
	_, _, err = e.play(ctx, vocabround.Name, agg, val, learners, func(r fed.RoundRecord) {
		if r.Committed {
			rec = r
		}
	})
	if err != nil {
		return nil, rec, fmt.Errorf("sim: vocabulary round: %w", err)
	}
	words := agg.(*vocabround.Aggregator).Vocabulary()
	return words, rec, nil
}

// Remap re-encodes c, whose word ids index old, over vocab: tokens whose
// word is not in vocab are dropped (documents and units may become empty
// and are kept, so ids, labels and units stay aligned).
func Remap(c *corpus.Corpus, old, vocab []string) (*corpus.Corpus, error) {
	if c.V > len(old) {
		return nil, fmt.Errorf("sim: remap: corpus vocabulary %d > %d words given", c.V, len(old))
	}
	if !slices.IsSorted(vocab) {
		return nil, errors.New("sim: remap: the new vocabulary is not sorted")
	}
	id := make([]int32, len(old))
	for i, w := range old {
		j, ok := slices.BinarySearch(vocab, w)
		id[i] = -1
		if ok {
			id[i] = int32(j)
		}
	}
	out := &corpus.Corpus{V: len(vocab), IDs: c.IDs, Labels: c.Labels, Sources: c.Sources, DocSource: c.DocSource,
		DocStart: make([]int, 1, len(c.DocStart)), Words: make([]int32, 0, len(c.Words))}
	// keep[i] counts the kept tokens before token i: its position in the
	// output, and the output offset of a boundary at i.
	keep := make([]int, len(c.Words)+1)
	for i, w := range c.Words {
		keep[i+1] = keep[i]
		if id[w] >= 0 {
			out.Words = append(out.Words, id[w])
			keep[i+1]++
		}
	}
	for _, s := range c.DocStart[1:] {
		out.DocStart = append(out.DocStart, keep[s])
	}
	if c.UnitStart != nil {
		out.UnitStart = make([]int, len(c.UnitStart))
		for u, s := range c.UnitStart {
			out.UnitStart[u] = keep[s]
		}
		out.DocUnit = c.DocUnit
	}
	return out, nil
}
