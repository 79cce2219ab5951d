package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/topic"
)

func newTopicsCmd(e *env) *cobra.Command {
	var (
		model  string
		n      int
		format string
	)
	cmd := &cobra.Command{
		Use:   "topics --model MODEL",
		Short: "Print the top words of every topic",
		Example: `  fedtopic topics --model demo.model
  fedtopic topics --model demo.model --n 20 --format csv > top.csv`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n < 1 {
				return usagef("--n %d: want at least 1 word per topic", n)
			}
			m, err := loadModel(model)
			if err != nil {
				return err
			}
			switch format {
			case "text":
				tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
				for k := range m.K {
					words := m.TopWords(k, n)
					ws := make([]string, len(words))
					for i, w := range words {
						ws[i] = w.Word
					}
					fmt.Fprintf(tw, "%d\t%s\n", k, strings.Join(ws, " "))
				}
				return tw.Flush()
			case "csv":
				return topic.WriteTopWordsCSV(e.stdout, m, n)
			case "json":
				out := make([][]topic.WordProb, m.K)
				for k := range m.K {
					out[k] = m.TopWords(k, n)
				}
				enc := json.NewEncoder(e.stdout)
				return enc.Encode(map[string]any{"topics": out})
			default:
				return usagef("--format %q: want text, csv or json", format)
			}
		},
	}
	fs := cmd.Flags()
	fs.StringVarP(&model, "model", "m", "", "model file (or a JSON export)")
	fs.IntVarP(&n, "n", "n", 10, "words per topic")
	fs.StringVar(&format, "format", "text", "text, csv or json")
	return cmd
}
