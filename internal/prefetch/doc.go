// Package prefetch asks the processor to bring memory into its caches ahead
// of use, for loops whose next accesses are known before their data are
// needed but land at random places in tables larger than the caches — a
// topic sampler's next tokens' word columns, say.
//
// A prefetch is a hint: it never faults, never changes memory, and may be
// ignored. On amd64 it is PREFETCHT0 on every 64-byte line of a range; on
// other architectures the functions do nothing, so code that uses them is
// portable and only slower there.
package prefetch
