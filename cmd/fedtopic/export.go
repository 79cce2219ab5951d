package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

func newExportCmd(e *env) *cobra.Command {
	var (
		model, format, out string
		force              bool
		n                  int
		cf                 corpusFlags
		seed               string
	)
	cmd := &cobra.Command{
		Use:   "export --model MODEL --format json --out FILE",
		Short: "Export a model for other tools",
		Long: `export writes a model in a format other tools read:
  json  {"vocab": [...], "topic_word": [[p(w|k) ...] ...]}: rows are topics,
        columns follow the vocabulary; probabilities round-trip exactly
  csv   the top --n words of every topic: topic,rank,word,probability
  ldavis  the input of LDAvis (R, createJSON) and pyLDAvis (Python, prepare):
        topic_term_dists, doc_topic_dists, doc_lengths, vocab,
        term_frequency; needs --corpus, whose θ is inferred with the model
        fixed; words the corpus never uses are left out
  theta-csv  θ of every document of --corpus: doc,topic_0,...
θ is inferred as fedtopic infer does: fold-in Gibbs sampling, or for an NMF
model the normalized least-squares weights with the topics fixed.`,
		Example: `  fedtopic export --model demo.model --format json --out demo.json
  fedtopic export --model demo.model --format ldavis --corpus demo/wordnet-glosses.jsonl --seed 1 --out demo-ldavis.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var write func(io.Writer, *topic.Model) error
			switch format {
			case "json":
				write = topic.WriteJSON
			case "csv":
				if n < 1 {
					return usagef("--n %d: want at least 1 word per topic", n)
				}
				write = func(w io.Writer, m *topic.Model) error { return topic.WriteTopWordsCSV(w, m, n) }
			case "ldavis", "theta-csv":
				if len(cf.paths) == 0 {
					return usagef("--format %s needs --corpus: the documents whose topic proportions θ are exported", format)
				}
			default:
				return usagef("--format %q: want json, csv, ldavis or theta-csv", format)
			}
			if out == "" {
				return usagef("--out is required: the file to write (- for standard output)")
			}
			if out != "-" {
				if err := checkOutFile(out, "--out", force); err != nil {
					return err
				}
			}
			m, err := loadModel(model)
			if err != nil {
				return err
			}
			if write == nil {
				if write, err = thetaExport(cmd.Context(), &cf, m, format, seed, e.stderr); err != nil {
					return err
				}
			}
			if out == "-" {
				return write(e.stdout, m)
			}
			return atomicfile.Write(out, 0o644, func(w io.Writer) error { return write(w, m) })
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&model, "model", "m", "", "model file")
	fs.StringVar(&format, "format", "json", "json, csv, ldavis or theta-csv")
	fs.StringVarP(&out, "out", "o", "", "file to write, or - for standard output")
	fs.BoolVar(&force, "force", false, "overwrite --out if it exists")
	fs.IntVarP(&n, "n", "n", 20, "words per topic for csv")
	cf.register(fs, "documents for ldavis and theta-csv")
	fs.StringVar(&seed, "seed", "", "random seed of θ's inference for ldavis and theta-csv (default: fresh from the OS)")
	return cmd
}

// thetaExport infers θ for the --corpus documents with m fixed and returns
// the writer of the ldavis or theta-csv export.
func thetaExport(ctx context.Context, cf *corpusFlags, m *topic.Model, format, seed string, log io.Writer) (func(io.Writer, *topic.Model) error, error) {
	s, err := parseSeed(seed)
	if err != nil {
		return nil, err
	}
	tc, err := cf.tokenizerConfig(m)
	if err != nil {
		return nil, err
	}
	v, err := modelVocab(m)
	if err != nil {
		return nil, fmt.Errorf("model vocabulary: %w", err)
	}
	docs, _, _, err := cf.load(ctx, tc, vocab.BuildOptions{}, v, log)
	if err != nil {
		return nil, err
	}
	theta, err := inferTheta(ctx, m, docs, topic.InferConfig{Seed: s})
	if err != nil {
		return nil, err
	}
	if format == "ldavis" {
		return func(w io.Writer, m *topic.Model) error { return topic.WriteLDAvis(w, m, docs, theta) }, nil
	}
	return func(w io.Writer, m *topic.Model) error { return topic.WriteThetaCSV(w, theta, m.K, docs.IDs) }, nil
}
