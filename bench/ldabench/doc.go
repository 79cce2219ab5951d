// Command ldabench measures the lda package's samplers on a real corpus: the
// speed of the MH sampler (tokens per second, per core and with several
// workers), the memory of its training state, and its quality against the
// exact collapsed Gibbs sampler (document-completion perplexity of held-out
// documents, Wallach et al. 2009, against wall time and iterations).
//
// Usage:
//
//	go run ./bench/ldabench -corpus FILE -mode speed -k 50,1000 -workers 1,2
//	go run ./bench/ldabench -corpus FILE -mode quality -k 50 -gibbs-iters 300 -mh-iters 600
//
// FILE is any input the corpus readers take (one document per line, JSONL
// with "text", a directory of .txt files); it is tokenized with the default
// tokenizer and words in fewer than -min-df documents are dropped. Without
// -corpus it uses a synthetic corpus from corpus/synth. Results are JSON
// lines on standard output; timings depend on the machine's load, so run it
// on a quiet machine.
//
// Determinism: every run is seeded (-seed); the samplers' results do not
// depend on -workers. Privacy: none is involved, the samplers are the
// non-private baselines.
package main
