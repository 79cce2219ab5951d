package fednmf

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/vocab"
)

// The client's throughput (one core, K = 50, B = 64, tf-idf of the demo
// corpus of 29,415 WordNet glosses at min-df 2):
//
//	go test -run '^$' -bench ClientStep -benchtime 200x -cpu 1 ./fednmf
//
// FEDTOPIC_BENCH_CORPUS names another JSON-lines corpus (the full WordNet
// glosses of bench/wordnet_glosses.py, for example), FEDTOPIC_BENCH_MIN_DF
// and FEDTOPIC_BENCH_VOCAB_SIZE its vocabulary (benchVocab).

// cpuSeconds returns the CPU time the process has used (user and
// system): on a shared machine, the throughput per CPU second is steadier
// than per wall second.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// benchMatrix reads the benchmark corpus at min-df 2 and returns its
// tf-idf matrix.
func benchMatrix(b *testing.B) *Matrix {
	b.Helper()
	path := os.Getenv("FEDTOPIC_BENCH_CORPUS")
	if path == "" {
		path = "../demo/wordnet-glosses.jsonl"
	}
	c, _, _, err := vocab.Prepare(context.Background(), []string{path}, corpus.ReadOptions{}, corpus.TokenizerConfig{}, benchVocab(b), nil)
	if err != nil {
		b.Fatal(err)
	}
	a, err := NewMatrix(c, FeaturesTFIDF)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// benchVocab returns the benchmarks' vocabulary options: min-df 2, or
// FEDTOPIC_BENCH_MIN_DF, and at most FEDTOPIC_BENCH_VOCAB_SIZE words (the
// most frequent; default no cap).
func benchVocab(b *testing.B) vocab.BuildOptions {
	b.Helper()
	o := vocab.BuildOptions{MinDF: 2}
	if s := os.Getenv("FEDTOPIC_BENCH_MIN_DF"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			b.Fatal(err)
		}
		o.MinDF = v
	}
	if s := os.Getenv("FEDTOPIC_BENCH_VOCAB_SIZE"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		o.MaxSize = v
	}
	return o
}

// BenchmarkClientStep measures one mini-batch step of a client's local
// SGD (B = 64 documents, K = 50) with and without the MI critic, from W,
// H and θ after warm steps (%W>0 is the share of W's entries above zero
// then: projected SGD leaves W dense). docs/s counts the batch's
// documents; the ratio of the two sub-benchmarks' ns/op is the cost of
// the MI term.
func BenchmarkClientStep(b *testing.B) {
	const warm = 50
	a := benchMatrix(b)
	for _, bc := range []struct {
		name   string
		lambda float64
	}{{"plain", 0}, {"mi", 0.1}} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := Config{K: 50, MILambda: bc.lambda}.WithDefaults()
			vocab := make([]string, a.V)
			agg, err := newAggregator(cfg, fed.Setup{Run: "bench", Parties: []string{"p1"}, Vocab: vocab, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			nw := a.V * cfg.K
			w, theta := agg.x[:nw], agg.x[nw:]
			c := newClient(cfg, a)
			fitH(a, w, cfg.K, c.h, initSweeps, 0)
			batches := a.N / cfg.Batch
			cols := make([]int, cfg.Batch)
			batch := func(i int) []int {
				s := (i % batches) * cfg.Batch
				for j := range cols {
					cols[j] = s + j
				}
				return cols
			}
			for i := range warm {
				c.step(w, theta, batch(batches-1-i))
			}
			var nz int
			for _, x := range w {
				if x != 0 {
					nz++
				}
			}
			b.ResetTimer()
			cpu0 := cpuSeconds(b)
			for i := range b.N {
				c.step(w, theta, batch(i))
			}
			cpu := cpuSeconds(b) - cpu0
			b.ReportMetric(float64(b.N*cfg.Batch)/b.Elapsed().Seconds(), "docs/s")
			b.ReportMetric(float64(b.N*cfg.Batch)/cpu, "docs/cpu-s")
			b.ReportMetric(100*float64(nz)/float64(len(w)), "%W>0")
		})
	}
}

// BenchmarkSmile measures the critic alone: one SMILE estimate and its
// gradient on a batch of B = 64 random documents (20 words each of 12,000)
// and topic vectors (K = 50), through the pair kernels the machine runs
// ("kernel"), the AVX2 ones ("avx2", where the machine has AVX2 and FMA)
// and the plain-Go ones ("go").
func BenchmarkSmile(b *testing.B) {
	const v, k, batch = 12000, 50, 64
	a := testMatrix(v, batch, 20, 1)
	c := critic{v, k}
	theta := make([]float64, c.size())
	r := rng.Derive(2, "theta")
	c.init(r, theta)
	y := make([]float64, batch*k)
	for i := range y {
		y[i] = r.Float64()
	}
	cols := make([]int, batch)
	for i := range cols {
		cols[i] = i
	}
	gy := make([]float64, len(y))
	for _, bc := range []struct {
		name string
		kern pairKernel
	}{{"kernel", pairKernelFor(Hidden1, Hidden2)}, {"avx2", pairAVX2}, {"go", pairGo}} {
		if bc.kern == pairAVX2 && !pairKernelAVX2 {
			continue
		}
		b.Run(bc.name, func(b *testing.B) {
			ws := newSmileWork(c, batch)
			ws.kern = bc.kern
			cpu0 := cpuSeconds(b)
			for range b.N {
				c.smile(theta, a, cols, y, 5, ws, gy, true)
			}
			b.ReportMetric((cpuSeconds(b)-cpu0)/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}

// BenchmarkUpdateW measures a chunk's pass over W alone (chunkWork.update,
// V = 12,000 words, K = 50, 640 touched rows as from a batch of 64
// documents of ten words, the correction of Q gathered), through the
// kernels the machine runs ("kernel") and through the plain-Go forms
// ("go"): the dense product W·G takes V·K² = 30 million multiply-adds.
// Every operation starts from the same W, a hundredth of a percent of
// its entries zero, as in a client's W after a few steps.
func BenchmarkUpdateW(b *testing.B) {
	const v, k, touchedRows = 12000, 50, 640
	r := rng.Derive(3, "updatew")
	w0 := make([]float64, v*k)
	for i := range w0 {
		if r.Float64() > 1e-4 {
			w0[i] = r.Float64()
		}
	}
	hb := make([]float64, 64*k)
	for i := range hb {
		hb[i] = r.Float64() / k
	}
	g := make([]float64, k*k)
	gram(64, k, hb, g)
	rows := r.Perm(v)[:touchedRows]
	p := make([]float64, v*k)
	touched := make([]bool, v)
	step := 2 * DefaultLR / 64
	for _, bc := range []struct {
		name string
		avx2 bool
	}{{"kernel", gemmKernelAVX2}, {"go", false}} {
		b.Run(bc.name, func(b *testing.B) {
			w := make([]float64, len(w0))
			ch := newChunkWork(k)
			ch.avx2 = bc.avx2
			var cpu float64
			for range b.N {
				b.StopTimer()
				copy(w, w0)
				for _, i := range rows {
					touched[i] = true
					for t := range k {
						p[i*k+t] = 0.01
					}
				}
				b.StartTimer()
				cpu0 := cpuSeconds(b)
				ch.update(w, p, touched, g, k, step, true)
				cpu += cpuSeconds(b) - cpu0
			}
			b.ReportMetric(cpu/float64(b.N)*1e3, "cpu-ms/op")
		})
	}
}
