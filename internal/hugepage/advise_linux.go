package hugepage

import "syscall"

// advise asks for transparent huge pages over [addr, addr+n), both
// multiples of Size inside one live allocation. The advice is a hint: a
// kernel without transparent huge pages refuses it, and the memory stays
// as it was, so the error is dropped.
func advise(addr, n uintptr) {
	syscall.Syscall(syscall.SYS_MADVISE, addr, n, syscall.MADV_HUGEPAGE)
}
