//go:build unix

package accountant

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive, non-blocking advisory lock on f, which the
// kernel releases if the process dies.
func lockFile(f *os.File) (unlock func(), err error) {
	fd := int(f.Fd())
	if err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("in use by another ledger (another process, or this one): %w", err)
		}
		return nil, fmt.Errorf("lock: %w", err)
	}
	return func() { syscall.Flock(fd, syscall.LOCK_UN) }, nil
}
