// Command nmfbench times fedtopic's centralized NMF (fednmf.TrainMatrix,
// HALS) on a corpus's tf-idf matrix and writes that matrix for other tools.
//
// The corpus is read and encoded as `fedtopic train` reads it (the default
// tokenizer, words in fewer than -min-df documents dropped) and its
// document matrix is built by fednmf.NewMatrix, so the matrix is exactly
// the one `fedtopic train --model nmf` factorizes. With -mtx it is written
// in Matrix Market coordinate form, documents as rows and words as columns
// (scikit-learn's X, the transpose of fednmf's A), values printed so they
// read back exactly. Each iteration prints a JSON line:
// {"iter": i, "seconds": s, "cpu_seconds": c, "objective": ½‖A − WHᵀ‖²},
// wall and CPU time from the start of the solver (after the matrix is
// built). Run it with GOMAXPROCS=1 for one core.
//
//	go run ./bench/nmfbench -corpus wn.jsonl -min-df 2 -k 50 -iters 200 -mtx wn.mtx
//
// Determinism: the solver starts from -seed; the matrix does not depend on
// it. Privacy: none is involved; centralized NMF is a non-private
// baseline.
package main
