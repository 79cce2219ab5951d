package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/eval"
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
  UMass           document co-occurrence of each topic's top words on --train
                  (default: the test documents)
  NPMI            normalized PMI on --reference (default: the test documents)
  embedding       mean cosine of top words' vectors, with --embeddings
  diversity       unique words among all topics' top 25 / (25 K)
Text is tokenized as the model's training text was unless tokenizer flags are
given. Prints a table, or JSON with --json.`,
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
				return err
			}
			var data eval.Data
			if data.Test, _, _, err = cf.load(ctx, tc, vocab.BuildOptions{}, v, e.stderr); err != nil {
				return err
			}
			data.Train, data.Reference = data.Test, data.Test
			if len(train) > 0 {
				if data.Train, _, _, err = cf.loadPaths(ctx, "train", train, tc, vocab.BuildOptions{}, v, e.stderr); err != nil {
					return err
				}
			}
			if len(reference) > 0 {
				if data.Reference, _, _, err = cf.loadPaths(ctx, "reference", reference, tc, vocab.BuildOptions{}, v, e.stderr); err != nil {
					return err
				}
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
	fs.StringSliceVar(&train, "train", nil, "training documents for UMass coherence (default: the test documents)")
	fs.StringSliceVar(&reference, "reference", nil, "reference documents for NPMI (default: the test documents)")
	fs.StringVar(&embeddings, "embeddings", "", "word vectors in word2vec/GloVe text format, for embedding coherence")
	fs.BoolVar(&asJSON, "json", false, "print JSON instead of a table")
	fs.IntVar(&cfg.TopN, "top-n", 0, "top words per topic for coherence (default 10)")
	fs.IntVar(&cfg.Infer.Sweeps, "sweeps", 0, "fold-in Gibbs sweeps per test document (default 40)")
	fs.IntVar(&cfg.Infer.Workers, "workers", 0, "goroutines (default: all cores); never changes the result")
	fs.StringVar(&seed, "seed", "1", "random seed of the fold-in sampler")
	return cmd
}
