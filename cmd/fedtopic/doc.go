// Command fedtopic trains topic models across organisations that cannot pool
// their text, with differential privacy, and analyses the results.
//
// One binary, three postures:
//
//	fedtopic simulate ...           coordinator and all parties in one process
//	fedtopic coordinator/party ...  the same protocol over gRPC with mutual TLS
//	fedtopic train/infer/eval/topics/export/privacy ...
//	                                single-party and analysis commands
//
// Every command explains its flags with --help. Exit codes: 0 success,
// 1 the command failed (bad input, I/O), 2 the command line was wrong,
// 130 interrupted. Any command takes --cpuprofile FILE to write a CPU
// profile for go tool pprof.
//
// The binary is built with profile-guided optimisation from default.pgo in
// this directory, which go build and go run use by themselves;
// bench/pgo.sh regenerates it from profiles of the common workloads.
//
// main calls run(ctx, args, stdout, stderr), which the tests drive directly.
package main
