package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"syscall"
	"time"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fednmf"
	"github.com/fedtopic/fedtopic/vocab"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "nmfbench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("nmfbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		path, mtx, features string
		minDF, k, iters     int
		tol                 float64
		seed                uint64
	)
	fs.StringVar(&path, "corpus", "", "input corpus (required)")
	fs.IntVar(&minDF, "min-df", 2, "drop words in fewer documents")
	fs.IntVar(&k, "k", 50, "number of topics")
	fs.IntVar(&iters, "iters", 200, "HALS iterations")
	fs.Float64Var(&tol, "tol", -1, "stop when an iteration lowers the objective by less than tol times it (negative: run every iteration)")
	fs.StringVar(&features, "features", fednmf.FeaturesTFIDF, "tfidf or counts")
	fs.StringVar(&mtx, "mtx", "", "write the document matrix here (Matrix Market) and exit when -iters is 0")
	fs.Uint64Var(&seed, "seed", 1, "seed of the random start")
	var profile string
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the solver here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if path == "" {
		return errors.New("-corpus is required")
	}
	c, _, _, err := vocab.Prepare(ctx, []string{path}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, vocab.BuildOptions{MinDF: float64(minDF)}, nil)
	if err != nil {
		return err
	}
	a, err := fednmf.NewMatrix(c, features)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "nmfbench: %d documents, %d words, %d tokens, %d non-zeros\n", a.N, a.V, c.NumTokens(), len(a.Vals))
	if mtx != "" {
		if err := writeMTX(mtx, a); err != nil {
			return err
		}
	}
	if iters == 0 {
		return nil
	}
	enc := json.NewEncoder(stdout)
	var (
		start    time.Time
		cpuStart time.Duration
		encErr   error
	)
	cfg := fednmf.TrainConfig{K: k, Iterations: iters, Tol: tol, Features: features, Seed: seed,
		Progress: func(it int, obj float64) {
			secs := time.Since(start).Seconds()
			cpu := (cpuTime() - cpuStart).Seconds()
			if encErr == nil {
				encErr = enc.Encode(map[string]any{"tool": "fedtopic", "iter": it, "seconds": secs, "cpu_seconds": cpu, "objective": obj})
			}
		}}
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start, cpuStart = time.Now(), cpuTime()
	if _, err := fednmf.TrainMatrix(ctx, a, cfg); err != nil {
		return err
	}
	return encErr
}

// cpuTime returns the process's user and system CPU time so far: on a
// shared host it varies less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeMTX writes Aᵀ (documents × words) in Matrix Market coordinate form.
func writeMTX(path string, a *fednmf.Matrix) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintf(w, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", a.N, a.V, len(a.Vals))
	buf := make([]byte, 0, 64)
	for j := range a.N {
		rows, vals := a.Col(j)
		for i, wd := range rows {
			buf = strconv.AppendInt(buf[:0], int64(j+1), 10)
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(wd)+1, 10)
			buf = append(buf, ' ')
			buf = strconv.AppendFloat(buf, vals[i], 'g', -1, 64)
			buf = append(buf, '\n')
			w.Write(buf)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
