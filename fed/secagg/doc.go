// Package secagg is secure aggregation for vectors of sums: the
// coordinator learns the sum of the surviving parties' vectors and nothing
// else about any one of them, even when up to n − t parties drop out along
// the way.
//
// # Protocol
//
// It is SecAgg (Bonawitz et al., "Practical Secure Aggregation for
// Privacy-Preserving Machine Learning", CCS 2017) in its honest-but-curious
// form, over the complete graph: every pair of parties shares a mask. SecAgg+
// (Bell et al., CCS 2020) masks along a sparse random graph of O(log n)
// neighbours to cut the parties' work from O(n·L) to O(log n·L), but its
// guarantees hold with high probability over the graph and its threshold
// applies per neighbourhood; the consortia this package serves have 2 to a
// few dozen parties, where the complete graph costs little (see the
// benchmark) and the threshold t means exactly what the engine's quorum
// means: the sum of any t or more survivors can be formed, of fewer none.
//
// One instance runs in four exchanges, each a request from the coordinator
// and a reply from each party still in:
//
//  1. setup → advertise: the coordinator sends Params; each party checks them
//     against its own and replies with two fresh X25519 public keys, c (to
//     encrypt shares) and s (for masks).
//  2. keys → shares: the coordinator sends every key it received (parties
//     U1, at least t). Each party draws a 32-byte self-mask seed b, splits b
//     and its mask key s_SK into t-of-n Shamir shares, and sends each peer its
//     two shares encrypted with AES-256-GCM under a key derived from
//     X25519(c_SK, c_PK) by HKDF-SHA256, bound to the session and the pair.
//  3. forward → masked: the coordinator forwards to each party the shares
//     addressed to it from the parties that sent shares (U2). The party adds
//     to its input its self mask, AES-256-CTR keyed from b, and for each peer
//     v in U2 the pairwise mask AES-256-CTR keyed by HKDF-SHA256 of
//     X25519(s_SK, s_PK,v) — added if its index is below v's, subtracted
//     otherwise — and sends the result mod 2^k, k bits a value.
//  4. unmask → reveal: the coordinator lists the parties whose masked vectors
//     arrived (alive, U3) and the rest of U2 (dropped). Each party reveals its
//     share of b for every alive party and of s_SK for every dropped one. From
//     t shares the coordinator rebuilds them, removes the alive parties' self
//     masks and the dropped parties' pairwise masks with the alive, and
//     obtains Σ_{u ∈ U3} x_u.
//
// Below t valid replies at any stage the coordinator aborts and unmasks
// nothing (ErrBelowThreshold).
//
// # Threat model
//
// Protected: against an honest-but-curious coordinator — one that follows
// the protocol but records everything — and any fewer than t colluding
// parties, each masked vector is uniform on Z_(2^k)^L and the transcript
// reveals nothing about the survivors' inputs beyond their sum, with up to
// n − t dropouts at any point. The coordinator never holds a key that
// derives a mask: masks are AES-CTR streams keyed by X25519 secrets of the
// parties. A party also refuses the requests a dishonest coordinator would
// need to unmask one input: an unmask request that lists a party as both
// alive and dropped, lists fewer than t alive, or does not partition exactly
// the parties whose shares it holds; and it answers at most one unmask
// request per session (a resend of the same bytes gets the same reply, any
// other request ErrStage). Because t > n/2 is required, two disjoint groups
// of t parties cannot both answer, so even a coordinator that lies about
// who dropped cannot collect both secrets of one party.
//
// Not protected: a coordinator that shows different parties different key
// lists or drops parties selectively to isolate one (the malicious model of
// Bonawitz et al. needs signatures and a consistency round, not implemented
// here); parties that lie about their inputs (bound them before, e.g. by
// clipping; the sum is only as good as its inputs); the sum itself — it is
// released to the coordinator by design, and it is differential privacy
// (AddNoise), not this package, that protects individuals in it; the
// identity of the parties and the size of the vector; traffic analysis.
// Authentication of the parties and the coordinator is the transport's job
// (mutual TLS): the package trusts that reply i comes from party i.
//
// # Encoding
//
// Values travel in Z_(2^k), k = Params.Bits: 8 to 32, or 64. A real
// value x is encoded as round(x·2^f), f = Params.FracBits, half away from zero, so the
// step is 2^−f and the round trip is exact for multiples of it and within
// 2^−(f+1) otherwise. Every encoded value must satisfy |v| ≤ B =
// ⌊Clip·2^f⌋, and Params.Validate refuses parameters unless n·B ≤
// 2^(k−1) − 1, so the sum of any s ≤ n clipped values lies in
// [−2^(k−1), 2^(k−1)) and is read back exactly from its residue. Encode
// refuses a value past the clip (and NaN, ±Inf), and a party refuses to mask
// a grid value past B, with ErrOverflow: nothing wraps silently. With
// k = 32, f = 8 and 10 parties, Clip can be up to 838,860.
//
// A masked vector travels packed, k bits a value (a little-endian bit
// string, the last byte padded with zeros): RingBits gives the smallest k
// the parties, clip and fraction bits allow, so that a masked value takes
// no more room than the sum needs — 26 bits for 10 parties adding
// integers up to 2^21, 32 bits (4 bytes, as a float32) when the clip
// fills the 32-bit ring. Masks are drawn as 32-bit words of the AES-CTR
// stream (64-bit for k = 64) and reduced mod 2^k: 2^k divides 2^32, so
// each stays uniform on Z_(2^k), and so does the masked value; packed
// uniform values are uniform bits. Packing cannot make a masked vector
// sparse: it must look uniform, so every coordinate costs k bits even
// when the party's own value there is zero.
//
// Mask expansion keeps one key stream per mask and passes all of them
// over one cache-sized chunk of the vector at a time, and cuts the
// vector into one span per processor, each span's counter started at its
// own first block.
//
// # Distributed noise
//
// AddNoise adds to a party's grid vector a discrete Gaussian of parameter
// σ/√t (privacy.DiscreteGaussian), so that the sum of at least t survivors
// carries variance at least σ² (Kairouz, Liu and Steinke, "The Distributed
// Discrete Gaussian Mechanism for Federated Learning with Secure
// Aggregation", ICML 2021). Each party must be charged for its worst case: t
// survivors, total σ.
//
// # Determinism and state
//
// Party and Server are pure state machines: Handle and Collect map
// (state, incoming bytes) to (state, outgoing bytes), with no I/O or
// clock; the goroutines of mask expansion end before the call returns and
// its result does not depend on how many there are. A party's randomness — two X25519 scalars, the seed and the
// Shamir coefficients — is read from the io.Reader it is made with
// (crypto/rand.Reader in production; a seeded stream in tests and
// simulations gives reproducible runs); the coordinator draws none. Both
// implement encoding.BinaryMarshaler and encoding.BinaryUnmarshaler; a
// saved party remembers its last reply and answers a resend of the same
// request with the same bytes, without drawing again, and a saved
// coordinator returns its pending messages with Pending. Messages have a
// strict, canonical binary form: a decoder that refuses anything out of
// range, out of order or trailing (fuzzed by FuzzDecode).
//
// See example_test.go for a complete run.
package secagg
