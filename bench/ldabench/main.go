package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/lda"
	"github.com/fedtopic/fedtopic/topic"
	"github.com/fedtopic/fedtopic/vocab"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ldabench:", err)
		os.Exit(1)
	}
}

type options struct {
	corpus     string
	minDF      int
	mode       string
	ks         []int
	workers    []int
	iters      int
	warmup     int
	gibbsIters int
	mhIters    int
	mhSteps    int
	every      int
	seed       uint64
	heldOut    int
	samplers   []string
	burnIn     int
	blockSize  int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ldabench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var ks, workers string
	fs.StringVar(&o.corpus, "corpus", "", "input corpus (default: a synthetic corpus)")
	fs.IntVar(&o.minDF, "min-df", 5, "drop words in fewer documents")
	fs.StringVar(&o.mode, "mode", "speed", "speed or quality")
	fs.StringVar(&ks, "k", "50", "comma-separated numbers of topics")
	fs.StringVar(&workers, "workers", "1,2", "comma-separated worker counts (speed mode)")
	fs.IntVar(&o.iters, "iters", 20, "timed MH iterations per setting (speed mode)")
	fs.IntVar(&o.warmup, "warmup", 5, "untimed MH iterations first (speed mode)")
	fs.IntVar(&o.gibbsIters, "gibbs-iters", 300, "collapsed Gibbs iterations (quality mode)")
	fs.IntVar(&o.mhIters, "mh-iters", 600, "MH iterations (quality mode)")
	fs.IntVar(&o.mhSteps, "mh-steps", 0, "MH steps per token (0: the lda default)")
	fs.IntVar(&o.every, "every", 50, "evaluate perplexity every this many iterations (quality mode)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed")
	fs.IntVar(&o.heldOut, "held-out", 10, "hold out every n-th document for perplexity (quality mode)")
	samplers := fs.String("samplers", "gibbs,mh", "comma-separated samplers to compare (quality mode)")
	fs.IntVar(&o.blockSize, "block-size", 0, "items per block of documents (0: the lda default)")
	fs.IntVar(&o.burnIn, "burn-in", 0, "MH burn-in sweeps with the collapsed kernel (quality mode, 0: the lda default for -mh-iters, -1: none; speed mode: none unless > 0, to time the burn-in kernel)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var err error
	if o.ks, err = ints(ks); err != nil {
		return err
	}
	if o.workers, err = ints(workers); err != nil {
		return err
	}
	o.samplers = strings.Split(*samplers, ",")
	c, err := load(ctx, o)
	if err != nil {
		return err
	}
	out := json.NewEncoder(stdout)
	_ = out.Encode(map[string]any{"corpus": o.corpus, "docs": c.NumDocs(), "tokens": c.NumTokens(), "v": c.V, "gomaxprocs": runtime.GOMAXPROCS(0)})
	switch o.mode {
	case "speed":
		return speed(ctx, c, o, out)
	case "quality":
		return quality(ctx, c, o, out)
	}
	return fmt.Errorf("unknown mode %q", o.mode)
}

// cpuSeconds returns the user and system CPU time of the process so far:
// on a shared machine tokens per CPU second is steadier than wall time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func ints(s string) ([]int, error) {
	var xs []int
	for _, f := range strings.Split(s, ",") {
		x, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || x < 1 {
			return nil, fmt.Errorf("bad number %q in %q", f, s)
		}
		xs = append(xs, x)
	}
	return xs, nil
}

func load(ctx context.Context, o options) (*corpus.Corpus, error) {
	if o.corpus == "" {
		d, err := synth.Generate(synth.Config{K: 50, V: 20000, Docs: 100000, DocLen: 12, Alpha: 0.1, WordsOnly: true}, rng.Derive(o.seed, "synth"))
		if err != nil {
			return nil, err
		}
		return d.Corpus, nil
	}
	c, _, _, err := vocab.Prepare(ctx, []string{o.corpus}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, vocab.BuildOptions{MinDF: float64(o.minDF)}, nil)
	return c, err
}

// speed times MH iterations for every K and worker count.
func speed(ctx context.Context, c *corpus.Corpus, o options, out *json.Encoder) error {
	for _, k := range o.ks {
		for _, w := range o.workers {
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			// BurnIn -1 (unless -burn-in says otherwise): time the
			// partially collapsed kernel itself.
			burnIn := -1
			if o.burnIn > 0 {
				burnIn = o.burnIn
			}
			m, err := lda.NewMH(c, lda.Config{K: k, Workers: w, Seed: o.seed, MHSteps: o.mhSteps, BurnIn: burnIn, BlockSize: o.blockSize})
			if err != nil {
				return err
			}
			if err := m.Run(ctx, 1, nil); err != nil {
				return err
			}
			runtime.GC()
			runtime.ReadMemStats(&m1)
			chainBytes := float64(m1.HeapAlloc) - float64(m0.HeapAlloc)
			if err := m.Run(ctx, o.warmup, nil); err != nil {
				return err
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0 := cpuSeconds()
			start := time.Now()
			if err := m.Run(ctx, o.iters, nil); err != nil {
				return err
			}
			el := time.Since(start)
			cpu := cpuSeconds() - cpu0
			runtime.ReadMemStats(&after)
			rate := float64(o.iters) * float64(c.NumTokens()) / el.Seconds()
			_ = out.Encode(map[string]any{
				"mode": "speed", "k": k, "workers": w, "iters": o.iters, "seconds": el.Seconds(),
				"tokens_per_s": rate, "tokens_per_s_per_worker": rate / float64(w),
				"cpu_seconds": cpu, "tokens_per_cpu_s": float64(o.iters) * float64(c.NumTokens()) / cpu,
				"alloc_bytes_per_iter": float64(after.TotalAlloc-before.TotalAlloc) / float64(o.iters),
				"ll_per_token":         m.LogLikelihood() / float64(c.NumTokens()),
				// The chain's heap (after one sweep): per token a uint16
				// topic and its int32 place in the word index (countLDA,
				// the burn-in's tables), plus O(K·V) for Φ, counts and
				// proposal tables. The corpus it reads (4-byte word ids,
				// 8-byte document offsets) is not included.
				"chain_heap_bytes":            chainBytes,
				"chain_heap_bytes_per_kv":     chainBytes / float64(k*c.V),
				"corpus_bytes_per_token":      float64(4*c.NumTokens()+8*(c.NumDocs()+1)) / float64(c.NumTokens()),
				"state_bytes_per_token_chain": 6.0,
			})
		}
	}
	return nil
}

// quality trains Gibbs and MH on all but every held-out-th document and
// reports the document-completion perplexity of the held-out documents
// against iterations and training wall time.
func quality(ctx context.Context, c *corpus.Corpus, o options, out *json.Encoder) error {
	var train, test []int
	for d := range c.NumDocs() {
		if d%o.heldOut == o.heldOut-1 {
			test = append(test, d)
		} else {
			train = append(train, d)
		}
	}
	tr, te := c.Subset(train), c.Subset(test)
	for _, k := range o.ks {
		for _, sampler := range o.samplers {
			iters, workers := o.mhIters, o.workers[len(o.workers)-1]
			if sampler == lda.SamplerGibbs {
				iters, workers = o.gibbsIters, 1
			}
			// Iterations sets the default burn-in of an MH chain (a share of
			// the chain's length), as the CLI's --iterations does.
			ch, err := lda.New(tr, lda.Config{K: k, Iterations: iters, Workers: workers, Seed: o.seed, Sampler: sampler, MHSteps: o.mhSteps, BurnIn: o.burnIn, BlockSize: o.blockSize})
			if err != nil {
				return err
			}
			var trainTime time.Duration
			for done := 0; done < iters; {
				n := min(o.every, iters-done)
				start := time.Now()
				if err := ch.Run(ctx, n, nil); err != nil {
					return err
				}
				trainTime += time.Since(start)
				done += n
				res, err := eval.Perplexity(ctx, ch.Model(), te, topic.InferConfig{Seed: o.seed})
				if err != nil {
					return err
				}
				_ = out.Encode(map[string]any{
					"mode": "quality", "k": k, "sampler": sampler, "workers": workers, "iter": done,
					"train_seconds": trainTime.Seconds(), "perplexity": res.Perplexity,
					"ll_per_token": ch.LogLikelihood() / float64(tr.NumTokens()),
				})
			}
		}
	}
	return nil
}
