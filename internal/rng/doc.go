// Package rng derives independent, reproducible random streams from one seed.
//
// Every random draw in fedtopic comes from a *rand.Rand (math/rand/v2) handed
// to the code that needs it. A run has one 64-bit seed; each unit of work —
// a party, a round, a block of documents, a purpose such as "noise" — gets its
// own ChaCha8 stream from Derive(seed, labels...). Streams for different label
// sequences are computationally independent, so results never depend on which
// goroutine ran first or how many workers there were.
//
// With no seed given, NewSeed reads one from crypto/rand; callers log and
// record it so the run can be reproduced.
//
//	r := rng.Derive(seed, "party", 2, "round", 5, "noise")
//	x := r.Float64()
//
// This is the only package that may use the top-level functions of
// math/rand/v2 or crypto/rand directly.
package rng
