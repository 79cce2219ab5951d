package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
	"github.com/fedtopic/fedtopic/topic"
)

func newExportCmd(e *env) *cobra.Command {
	var (
		model, format, out string
		n                  int
	)
	cmd := &cobra.Command{
		Use:   "export --model MODEL --format json --out FILE",
		Short: "Export a model for other tools",
		Long: `export writes a model in a format other tools read:
  json  {"vocab": [...], "topic_word": [[p(w|k) ...] ...]}: rows are topics,
        columns follow the vocabulary; probabilities round-trip exactly
  csv   the top --n words of every topic: topic,rank,word,probability`,
		Example: `  fedtopic export --model demo.model --format json --out demo.json`,
		Args:    noArgs,
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
			default:
				return usagef("--format %q: want json or csv", format)
			}
			if out == "" {
				return usagef("--out is required: the file to write (- for standard output)")
			}
			m, err := loadModel(model)
			if err != nil {
				return err
			}
			if out == "-" {
				return write(e.stdout, m)
			}
			return atomicfile.Write(out, 0o644, func(w io.Writer) error { return write(w, m) })
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&model, "model", "m", "", "model file")
	fs.StringVar(&format, "format", "json", "json or csv")
	fs.StringVarP(&out, "out", "o", "", "file to write, or - for standard output")
	fs.IntVarP(&n, "n", "n", 20, "words per topic for csv")
	return cmd
}
