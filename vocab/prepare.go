package vocab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fedtopic/fedtopic/corpus"
)

// ErrEmpty reports that nothing is left to train on: no word survived
// pruning, or no document kept an in-vocabulary token.
var ErrEmpty = errors.New("empty corpus")

// Stats describes one run of Prepare.
type Stats struct {
	Read   corpus.ReadStats `json:"read"`            // what the readers saw
	Build  *BuildStats      `json:"build,omitempty"` // pruning, nil with a fixed vocabulary
	Encode EncodeStats      `json:"encode"`          // what encoding kept and dropped
}

// Prepare reads the inputs at paths in order, tokenizes them, and encodes
// them into one corpus: the pipeline behind the command line's --corpus.
// With fixed == nil the vocabulary is built from the corpus with bo; with a
// fixed vocabulary, bo is ignored, tokens outside it are dropped and V is
// fixed.Len(). Each input file is one entry of the corpus's Sources. It
// streams: the text of one document at a time is held in memory, plus four
// bytes per token. It fails with ErrEmpty when no document keeps a token.
func Prepare(ctx context.Context, paths []string, ro corpus.ReadOptions, tc corpus.TokenizerConfig, bo BuildOptions, fixed *Vocabulary) (*corpus.Corpus, *Vocabulary, Stats, error) {
	var st Stats
	if len(paths) == 0 {
		return nil, nil, st, errors.New("vocab: prepare: no input given")
	}
	if err := errors.Join(ro.Validate(), bo.Validate()); err != nil {
		return nil, nil, st, err
	}
	tok, err := corpus.NewTokenizer(tc)
	if err != nil {
		return nil, nil, st, err
	}

	// First pass: tokens as temporary ids (word ids of fixed, or ids of the
	// counter in order of first appearance), with unit and document ends.
	type docInfo struct {
		id, label string
		source    int32
		unitEnd   int // index into unitEnds after the document's last unit
	}
	var (
		cnt      *counter
		tmp      []int32
		unitEnds []int
		docs     []docInfo
	)
	if fixed == nil {
		cnt = newCounter()
	}
	emit := func(w string) {
		if cnt != nil {
			tmp = append(tmp, cnt.add(w))
			return
		}
		id, ok := fixed.ids[w]
		if !ok {
			id = -1
		}
		tmp = append(tmp, id)
	}
	cut := func() { unitEnds = append(unitEnds, len(tmp)) }
	for i, p := range paths {
		r, err := corpus.Open(p, ro)
		if err != nil {
			return nil, nil, st, err
		}
		for d, err := range r.All() {
			if err != nil {
				r.Close()
				return nil, nil, st, err
			}
			if len(docs)%256 == 0 {
				if err := ctx.Err(); err != nil {
					r.Close()
					return nil, nil, st, fmt.Errorf("vocab: prepare: %w", err)
				}
			}
			if cnt != nil {
				cnt.at = corpus.Document{ID: d.ID, Source: d.Source, Line: d.Line}
				cnt.startDoc()
			}
			tok.Each(d.Text, emit, cut)
			if cnt != nil && cnt.err != nil {
				r.Close()
				return nil, nil, st, cnt.err
			}
			docs = append(docs, docInfo{id: d.ID, label: d.Label, source: int32(i), unitEnd: len(unitEnds)})
		}
		st.Read = st.Read.Add(r.Stats())
		if err := r.Close(); err != nil {
			return nil, nil, st, fmt.Errorf("vocab: prepare: %w", err)
		}
	}
	if len(docs) == 0 {
		return nil, nil, st, fmt.Errorf("corpus: %s: %w (%d empty, %d invalid skipped)",
			strings.Join(paths, ", "), corpus.ErrNoDocuments, st.Read.SkippedEmpty, st.Read.SkippedInvalid)
	}

	// Second pass: final ids, dropping what the vocabulary does not hold.
	v := fixed
	var remap []int32
	if fixed == nil {
		var bs BuildStats
		v, remap, bs, err = cnt.build(bo)
		if err != nil {
			return nil, nil, st, err
		}
		st.Build = &bs
	}
	var a assembler
	a.init(v.Len(), len(tmp), paths)
	at, u := 0, 0
	for _, d := range docs {
		for ; u < d.unitEnd; u++ {
			for _, id := range tmp[at:unitEnds[u]] {
				if remap != nil {
					id = remap[id]
				}
				a.token(id)
			}
			at = unitEnds[u]
			a.endUnit()
		}
		a.endDoc(d.id, d.label, paths[d.source])
	}
	c, es := a.finish()
	st.Encode = es
	if c.NumDocs() == 0 {
		return nil, nil, st, fmt.Errorf("vocab: %s: no document has an in-vocabulary token (%d documents, %d tokens out of vocabulary): %w",
			strings.Join(paths, ", "), es.SkippedDocs, es.OOVTokens, ErrEmpty)
	}
	return c, v, st, nil
}
