package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/vocab"
)

func newEvalCmd(e *env) *cobra.Command {
	var (
		cf               corpusFlags
		model, seed      string
		train, reference []string
		embeddings       string
		asJSON           bool
		cfg              eval.Config
	)
	cmd := &cobra.Command{
		Use:   "eval --model MODEL --corpus TEST",
		Short: "Measure a model: held-out perplexity, coherence, diversity",
		Long: `eval measures a model on held-out documents (--corpus):
  perplexity      document completion (Wallach et al. 2009): θ is fitted on the
                  even-position tokens of each test document, the odd ones are
                  scored; also the total held-out log-likelihood
  UMass           Mimno et al. 2011: log((D(a,b) + 1) / D(a)) for each pair of
                  a topic's top words, a ranked above b, where D counts the
                  documents of --train (default: the test documents) holding
                  the words. Reported as the mean over pairs, then over topics,
                  as gensim's u_mass does (the paper's sum is 45 times the
                  mean for the top 10 words)
  NPMI            normalized PMI (Bouma 2009) of each pair of a topic's top
                  words, P estimated from the documents of --reference
                  (default: the test documents); mean over pairs, then topics
  embedding       mean cosine of top words' vectors, with --embeddings
  diversity       unique words among all topics' top 25 / (25 K)
Two words co-occur when one document holds both, wherever they stand in it (no
sliding window); the output names the files the counts come from. Text is
tokenized as the model's training text was unless tokenizer flags are given,
and only words of the model's vocabulary count: a warning on stderr says how
many documents and tokens of each corpus the vocabulary drops, and when the
model has more topics than words. Prints a table, or JSON with --json.
NMF models (train --model nmf or nmf-sgd, simulate --algorithm fednmf) define
no likelihood of the words: eval says so and leaves perplexity out; the other
metrics are computed as for LDA.`,
		Example: `  fedtopic eval --model demo.model --corpus test.jsonl
  fedtopic eval --model demo.model --corpus test.jsonl --train train.jsonl --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			s, err := parseSeed(seed)
			if err != nil {
				return err
			}
			cfg.Infer.Seed = s
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			m, err := loadModel(model)
			if err != nil {
				return err
			}
			tc, err := cf.tokenizerConfig(m)
			if err != nil {
				return err
			}
			v, err := modelVocab(m)
			if err != nil {
				return fmt.Errorf("%s: %w", model, err)
			}
			var (
				data     eval.Data
				st       vocab.Stats
				warnings []string
			)
			if data.Test, _, st, err = cf.load(ctx, tc, vocab.BuildOptions{}, v, e.stderr); err != nil {
				return err
			}
			warnings = append(warnings, coverageWarnings("test set", cf.paths, st)...)
			data.Train, data.Reference = data.Test, data.Test
			if len(train) > 0 {
				if data.Train, _, st, err = cf.loadPaths(ctx, "train", train, tc, vocab.BuildOptions{}, v, e.stderr); err != nil {
					return err
				}
				warnings = append(warnings, coverageWarnings("--train", train, st)...)
			}
			if len(reference) > 0 {
				if data.Reference, _, st, err = cf.loadPaths(ctx, "reference", reference, tc, vocab.BuildOptions{}, v, e.stderr); err != nil {
					return err
				}
				warnings = append(warnings, coverageWarnings("--reference", reference, st)...)
			}
			if _, nmf := fednmf.ModelFeatures(m); nmf {
				data.Test = nil // the test documents still count for UMass and NPMI by default
				warnings = append(warnings, fmt.Sprintf(nmfNoPerplexity, m.Prov.Method))
			}
			if embeddings != "" {
				if data.Embeddings, err = eval.LoadEmbeddings(embeddings, m.Vocab); err != nil {
					return err
				}
			}
			rep, err := eval.Evaluate(ctx, m, data, cfg)
			if err != nil {
				return err
			}
			rep.Warnings = append(warnings, rep.Warnings...)
			for _, w := range rep.Warnings {
				fmt.Fprintf(e.stderr, "warning: %s\n", w)
			}
			if asJSON {
				enc := json.NewEncoder(e.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			if err := rep.WriteTable(e.stdout); err != nil {
				return fmt.Errorf("write table: %w", err)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	cf.register(fs, "held-out test documents")
	fs.StringVarP(&model, "model", "m", "", "model file (or a JSON export)")
	fs.StringSliceVar(&train, "train", nil, "documents whose counts UMass coherence uses, normally the training text (default: the test documents)")
	fs.StringSliceVar(&reference, "reference", nil, "reference documents whose counts NPMI uses (default: the test documents)")
	fs.StringVar(&embeddings, "embeddings", "", "word vectors in word2vec/GloVe text format, for embedding coherence")
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	fs.IntVar(&cfg.TopN, "top-n", 0, "top words per topic for coherence, scored by their N(N−1)/2 pairs (default 10)")
	fs.IntVar(&cfg.Infer.Sweeps, "sweeps", 0, "fold-in Gibbs sweeps per test document (default 40)")
	fs.IntVar(&cfg.Infer.Workers, "workers", 0, "goroutines (default: all cores); never changes the result")
	fs.StringVar(&seed, "seed", "1", "random seed of the fold-in sampler")
	return cmd
}

// coverageWarnings says, one line each, how many documents and tokens of a
// corpus the model's vocabulary drops: documents left without a word are
// out of every metric, and out-of-vocabulary tokens are not scored.
func coverageWarnings(what string, paths []string, st vocab.Stats) []string {
	var out []string
	name := fmt.Sprintf("%s (%s)", what, strings.Join(paths, ", "))
	if n, all := st.Encode.SkippedDocs, st.Encode.Documents+st.Encode.SkippedDocs; n > 0 {
		out = append(out, fmt.Sprintf("%s: %d of %d documents (%s) have no word of the model's vocabulary and are left out of every metric",
			name, n, all, percent(n, all)))
	}
	if n, all := st.Encode.OOVTokens, st.Encode.Tokens+st.Encode.OOVTokens; n > 0 {
		out = append(out, fmt.Sprintf("%s: %d of %d tokens (%s) are not in the model's vocabulary and are dropped before scoring",
			name, n, all, percent(n, all)))
	}
	return out
}

// percent formats n/all as a percentage with one decimal, never rounding
// a non-zero share to 0.0% or a partial one to 100.0%.
func percent(n, all int) string {
	p := 100 * float64(n) / float64(all)
	switch {
	case n > 0 && p < 0.1:
		return "<0.1%"
	case n < all && p > 99.9:
		return ">99.9%"
	}
	return strconv.FormatFloat(p, 'f', 1, 64) + "%"
}
