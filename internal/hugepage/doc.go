// Package hugepage allocates the large tables of the samplers so that the
// kernel may back them with transparent huge pages.
//
// A sampler reads its topic–word counts at random places in tables of K·V
// entries, hundreds of megabytes at K = 1000: on 4 KiB pages that is tens
// of thousands of pages, far more than a TLB holds, so nearly every such
// read also walks the page tables (twice over in a virtual machine). On
// 2 MiB pages the same tables need a few hundred TLB entries. Linux backs
// anonymous memory with huge pages when
// /sys/kernel/mm/transparent_hugepage/enabled says "always", or when it
// says "madvise" (the default of many distributions) and the memory was
// advised with MADV_HUGEPAGE, which the Go runtime does not do for heap
// memory: Make does it for the slices it returns.
//
//	nkw := hugepage.Make[int32](k * v)
//
// The advice changes speed only: the slice is an ordinary Go slice, zeroed,
// collected like any other. Where the kernel has no huge pages, or on
// other systems, Make is make.
package hugepage
