package hugepage

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestMakeAdvises checks, in /proc/self/smaps, that the first and last
// whole huge pages of a large slice are in mappings advised for huge pages
// (VmFlags "hg"): the kernel splits a mapping where advice starts or ends,
// so the pages between are advised too.
func TestMakeAdvises(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages, so there is nothing to advise")
	}
	s := Make[float64](3 << 20) // 24 MiB: at least 11 whole huge pages
	beg, end := alignedPart(s)
	for _, addr := range []uintptr{beg, end - 1} {
		flags, ok := vmFlags(t, addr)
		if !ok {
			t.Fatalf("no mapping in /proc/self/smaps holds %#x", addr)
		}
		if !strings.Contains(" "+flags+" ", " hg ") {
			t.Errorf("the mapping holding %#x (of the advised %#x–%#x) has VmFlags %q, without hg (MADV_HUGEPAGE)", addr, beg, end, flags)
		}
	}
	runtime.KeepAlive(s)
}

// vmFlags returns the VmFlags line of the mapping of /proc/self/smaps that
// holds addr.
func vmFlags(t *testing.T, addr uintptr) (string, bool) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return "", false
}

// mappingRange parses the address range of a mapping's first line in
// smaps ("7f00…-7f01… rw-p …").
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	r, _, found := strings.Cut(line, " ")
	if !found {
		return 0, 0, false
	}
	a, b, found := strings.Cut(r, "-")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(x), uintptr(y), true
}
