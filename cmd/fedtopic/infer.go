package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

func newInferCmd(e *env) *cobra.Command {
	var (
		cf           corpusFlags
		model, out   string
		force        bool
		format, seed string
		ic           topic.InferConfig
	)
	cmd := &cobra.Command{
		Use:   "infer --model MODEL --corpus FILE",
		Short: "Infer the topic proportions θ of new documents with the model fixed",
		Long: `infer fits each document's topic proportions θ by fold-in Gibbs sampling
with the model's topics fixed and prints one JSON line per document:
{"id": "...", "theta": [...]}. Text is tokenized as the model's training text
was unless tokenizer flags are given; words outside the model's vocabulary are
dropped, and documents left empty are skipped and counted.
For an NMF model (train --model nmf or nmf-sgd, simulate --algorithm fednmf)
θ is each document's non-negative least-squares weights on the model's
topics (W fixed, HALS sweeps until they settle, at most --sweeps), divided by
their sum: the share of the document's features each topic explains. The
features are the model's (tf-idf or counts); tf-idf weighs words by the
inverse document frequencies of the documents given, as a FedNMF party does
its own, so infer documents together, not one at a time. The result does not
depend on --seed.`,
		Example: `  fedtopic infer --model demo.model --corpus new.jsonl > theta.jsonl`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if out != "" && out != "-" {
				if err := checkOutFile(out, "--out", force); err != nil {
					return err
				}
			}
			s, err := parseSeed(seed)
			if err != nil {
				return err
			}
			ic.Seed = s
			if err := ic.Validate(); err != nil {
				return usageError{err}
			}
			var write func(io.Writer, []float64, int, []string) error
			switch format {
			case "jsonl":
				write = topic.WriteThetaJSONL
			case "csv":
				write = topic.WriteThetaCSV
			default:
				return usagef("--format %q: want jsonl or csv", format)
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
			c, _, _, err := cf.load(ctx, tc, vocab.BuildOptions{}, v, e.stderr)
			if err != nil {
				return err
			}
			theta, err := inferTheta(ctx, m, c, ic)
			if err != nil {
				return err
			}
			if out == "" || out == "-" {
				return write(e.stdout, theta, m.K, c.IDs)
			}
			return atomicfile.Write(out, 0o644, func(w io.Writer) error { return write(w, theta, m.K, c.IDs) })
		},
	}
	fs := cmd.Flags()
	cf.register(fs, "documents to infer θ for")
	fs.StringVarP(&model, "model", "m", "", "model file (or a JSON export)")
	fs.StringVarP(&out, "out", "o", "", "file to write (default standard output)")
	fs.BoolVar(&force, "force", false, "overwrite --out if it exists")
	fs.StringVar(&format, "format", "jsonl", "jsonl or csv")
	fs.IntVar(&ic.Sweeps, "sweeps", 0, "fold-in Gibbs sweeps per document (default 40); NMF models: HALS sweeps at most (default 500)")
	fs.IntVar(&ic.BurnIn, "burn-in", 0, "sweeps before θ is averaged (default sweeps/4)")
	fs.IntVar(&ic.Workers, "workers", 0, "goroutines (default: all cores); never changes the result")
	fs.StringVar(&seed, "seed", "", "random seed (default: fresh from the OS)")
	return cmd
}
