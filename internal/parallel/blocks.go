package parallel

import (
	"context"
	"sync"
	"sync/atomic"
)

// Blocks runs f(worker, block) for every block in [0, n) on up to workers
// goroutines that pull blocks in order from a shared counter; it checks ctx
// before each block and returns ctx.Err() when it stopped before every block ran. Results must
// not depend on which worker ran which block: f gets the worker index only
// to pick that worker's scratch space.
func Blocks(ctx context.Context, workers, n int, f func(worker, block int)) error {
	workers = max(1, min(workers, n))
	if workers == 1 {
		for b := 0; b < n; b++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			f(0, b)
		}
		return nil
	}
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Go(func() {
			for ctx.Err() == nil {
				b := int(next.Add(1) - 1)
				if b >= n {
					return
				}
				f(w, b)
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if int(done.Load()) == n {
		return nil
	}
	return ctx.Err()
}
