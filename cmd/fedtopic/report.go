package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/eval/report"
)

func newReportCmd(e *env) *cobra.Command {
	var (
		out   string
		force bool
		opts  report.Options
	)
	cmd := &cobra.Command{
		Use:   "report RUN_DIR... --out report.html",
		Short: "Write an HTML report of federated runs: privacy, convergence, traffic, topics",
		Long: `report reads run directories written by 'fedtopic simulate' or 'fedtopic
coordinator' — run.jsonl, the global model 'model' and each party's model
PARTY.model — and writes one self-contained HTML page (inline CSS and SVG,
nothing loaded from the network) with the runs' setup, a privacy statement
(unit, neighbouring relation, accountant, ε and δ per party, what was
released), convergence against rounds with the baselines, bytes per party and
round, quality against ε when the runs spent different ε, a comparison of the
parties, the topics, and any experiment results (e1.jsonl … e8.jsonl).

A directory without run.jsonl stands for its subdirectories that have one, so
the parent directory of a sweep gives one report of all its runs.`,
		Example: `  fedtopic report runs/ftm --out report.html
  fedtopic report runs/eps8 runs/eps11 runs/adlda --title "Privacy sweep" --out sweep.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("report needs at least one run directory (written by 'fedtopic simulate --out DIR')")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, dirs []string) error {
			if out == "" {
				return usagef("--out is required: the HTML file to write (- for standard output)")
			}
			if err := opts.Validate(); err != nil {
				return usageError{err}
			}
			if out == "-" {
				return report.Write(cmd.Context(), e.stdout, dirs, opts)
			}
			if err := checkOutFile(out, "--out", force); err != nil {
				return err
			}
			if err := report.WriteFile(cmd.Context(), out, dirs, opts); err != nil {
				return err
			}
			fmt.Fprintf(e.stderr, "report written to %s\n", out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&out, "out", "o", "", "HTML file to write, or - for standard output")
	fs.BoolVar(&force, "force", false, "overwrite --out if it exists")
	fs.StringVar(&opts.Title, "title", "", "title of the page (default \""+report.DefaultTitle+"\")")
	fs.IntVar(&opts.TopWords, "top-words", report.DefaultTopWords, "words shown per topic (1 to 50)")
	return cmd
}
