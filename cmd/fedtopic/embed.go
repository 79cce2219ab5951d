package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fedtopic/fedtopic/eval/embed"
	"github.com/fedtopic/fedtopic/internal/atomicfile"
	"github.com/fedtopic/fedtopic/vocab"
)

func newEmbedCmd(e *env) *cobra.Command {
	var (
		cf      corpusFlags
		cfg     embed.Config
		out     string
		nearest string
	)
	cmd := &cobra.Command{
		Use:   "embed --corpus FILE --out vectors.txt",
		Short: "Train word vectors on a public corpus (PPMI and a truncated SVD), for --embeddings and embedding coherence",
		Long: `embed trains word vectors on a corpus and writes them in the word2vec text
format, which simulate --embeddings (PC-TD's word-relation step), eval and
the report read.

The method: co-occurrence counts of the words seen at least --min-count
times (at most --max-words, the most frequent) within --window tokens of
each other in a document, weighted (W − d + 1)/W by distance d; their
positive pointwise mutual information with context-distribution smoothing
(exponent 0.75); a randomized truncated SVD of that sparse matrix to --dim
dimensions, each word's vector its row of U·Σ^½.

The vectors carry no privacy: train them on public text only, never on a
party's data. Tokenize as the topic models do (the same --tokenizer,
--stopwords and --stem), or their words will not match.`,
		Example: `  fedtopic embed --corpus demo/wordnet-glosses.jsonl --out vectors.txt
  fedtopic simulate --algorithm pctd --corpus demo/wordnet-glosses.jsonl --embeddings vectors.txt --out runs/pctd`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out is required: the file to write the vectors to")
			}
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			tc, err := cf.tokenizerConfig(nil)
			if err != nil {
				return err
			}
			ctx := c.Context()
			start := time.Now()
			corp, v, _, err := cf.load(ctx, tc, vocab.BuildOptions{}, nil, e.stderr)
			if err != nil {
				return err
			}
			vecs, err := embed.Train(ctx, corp, v.Words(), cfg)
			if err != nil {
				return err
			}
			if err := atomicfile.Write(out, 0o644, vecs.WriteText); err != nil {
				return fmt.Errorf("embed: %w", err)
			}
			fmt.Fprintf(e.stderr, "embed: %d words, %d dimensions (%d tokens of kept words, %d non-zero PPMI entries) in %.1fs: wrote %s\n",
				len(vecs.Words), vecs.Dim, vecs.Tokens, vecs.NonZero, time.Since(start).Seconds(), out)
			if nearest != "" {
				return printNearest(e.stdout, vecs, nearest)
			}
			return nil
		},
	}
	cf.register(cmd.Flags(), "the public corpus to train on")
	fs := cmd.Flags()
	fs.StringVarP(&out, "out", "o", "", "the file to write the vectors to (word2vec text format)")
	fs.IntVar(&cfg.Dim, "dim", embed.DefaultDim, "vector dimension")
	fs.IntVar(&cfg.Window, "window", embed.DefaultWindow, "largest distance in tokens at which two words of a document co-occur")
	fs.IntVar(&cfg.MinCount, "min-count", embed.DefaultMinCount, "leave out words seen fewer times")
	fs.IntVar(&cfg.MaxWords, "max-words", embed.DefaultMaxWords, "keep at most this many words, the most frequent")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "random seed of the SVD's test matrix")
	fs.IntVar(&cfg.Workers, "workers", runtime.GOMAXPROCS(0), "goroutines; never changes the result")
	fs.StringVar(&nearest, "nearest", "", "comma-separated words: print each one's 10 nearest neighbours, to check the vectors")
	return cmd
}

// printNearest prints the 10 nearest neighbours of each listed word.
func printNearest(w io.Writer, vecs *embed.Vectors, list string) error {
	index := make(map[string]int, len(vecs.Words))
	for i, word := range vecs.Words {
		index[word] = i
	}
	for _, word := range strings.Split(list, ",") {
		word = strings.TrimSpace(word)
		i, ok := index[word]
		if !ok {
			fmt.Fprintf(w, "%s: no vector\n", word)
			continue
		}
		var nn []string
		for _, j := range vecs.Nearest(i, 10) {
			nn = append(nn, vecs.Words[j])
		}
		fmt.Fprintf(w, "%s: %s\n", word, strings.Join(nn, " "))
	}
	return nil
}
