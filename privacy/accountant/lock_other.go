//go:build !unix

package accountant

import "os"

// lockFile does nothing where flock is unavailable: one process per ledger
// file is then the operator's responsibility.
func lockFile(f *os.File) (unlock func(), err error) { return func() {}, nil }
