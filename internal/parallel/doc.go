// Package parallel runs numbered blocks of work on a few goroutines, the
// one way fedtopic's samplers and inference fan out. Blocks are fixed by
// the caller (never one per worker), each block draws from its own random
// stream and writes its own part of the output, so the number of workers
// changes only the speed, never the result.
//
//	err := parallel.Blocks(ctx, workers, nblocks, func(w, b int) {
//		sweep(scratch[w], b) // w picks scratch space only
//	})
package parallel
