//go:build !linux

package hugepage

// advise does nothing: Make gives huge pages only on Linux.
func advise(addr, n uintptr) {}
