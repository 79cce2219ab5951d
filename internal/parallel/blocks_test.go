package parallel

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestBlocksRunsEveryBlockOnce(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 7, 100} {
		const n = 50
		var runs [n]atomic.Int32
		if err := Blocks(context.Background(), workers, n, func(w, b int) { runs[b].Add(1) }); err != nil {
			t.Fatalf("Blocks(workers %d) = %v", workers, err)
		}
		for b := range runs {
			if got := runs[b].Load(); got != 1 {
				t.Errorf("workers %d: block %d ran %d times; want 1", workers, b, got)
			}
		}
	}
}

func TestBlocksWorkerIndex(t *testing.T) {
	const workers = 3
	var bad atomic.Int32
	Blocks(context.Background(), workers, 20, func(w, b int) {
		if w < 0 || w >= workers {
			bad.Add(1)
		}
	})
	if bad.Load() != 0 {
		t.Errorf("%d blocks got a worker index outside [0, %d)", bad.Load(), workers)
	}
}

func TestBlocksCanceled(t *testing.T) {
	for _, workers := range []int{1, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		var ran atomic.Int32
		err := Blocks(ctx, workers, 100, func(w, b int) {
			if ran.Add(1) == 5 {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("workers %d: Blocks after cancel = %v; want context.Canceled", workers, err)
		}
		if ran.Load() >= 100 {
			t.Errorf("workers %d: all blocks ran after cancel", workers)
		}
	}
}
