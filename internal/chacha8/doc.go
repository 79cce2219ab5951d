// Package chacha8 generates the ChaCha8Rand stream (https://c2sp.org/chacha8rand)
// — word for word the stream of math/rand/v2's ChaCha8 for the same seed —
// faster where the processor allows.
//
// ChaCha8Rand turns a 32-byte key into 16 ChaCha8 blocks, outputs 124
// 64-bit words of them and keys the next 16 blocks with the last 4. With
// AVX-512 a Stream computes all 16 blocks of such an epoch at once, one
// block per 32-bit lane of the 512-bit registers, where the standard
// library computes four at a time with 128-bit registers. On the 2-core
// machine fedtopic is measured on, an epoch costs 1.0–1.7 ns per word
// (BenchmarkEpoch), and a word from Uint64 3.7–6.0 ns against 7.1–11 ns
// from the standard library's (BenchmarkUint64). Without AVX-512 a Stream
// reads the standard library's generator, so the stream is the same
// everywhere.
//
// fedtopic's samplers and privacy mechanisms draw from Streams: their
// seeded results are those of rand.ChaCha8, and their noise is as strong.
//
//	s := chacha8.New(key)
//	x := s.Uint64()
//	r := rand.New(s) // a *rand.Rand on the same stream
package chacha8
