package secagg

import (
	"fmt"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// byteChiSquare returns Pearson's statistic of the byte values of b
// against the uniform law on 0 … 255.
func byteChiSquare(b []byte) float64 {
	var count [256]float64
	for _, c := range b {
		count[c]++
	}
	e := float64(len(b)) / 256
	x := 0.0
	for _, c := range count {
		x += (c - e) * (c - e) / e
	}
	return x
}

// TestMaskedVectorUniform checks that masking hides the input: one party's masked vector, as it goes on
// the wire, is indistinguishable from uniform bytes even when its input is
// all zeros or a constant. Under uniform independent bytes (what AES-CTR
// key streams give, keyed through X25519 and HKDF by secrets the
// coordinator does not hold), Pearson's statistic over 256 byte values
// follows χ² with 255 degrees of freedom (asymptotically; with 1,024
// expected per cell the approximation is tight). Rejecting above its
// 1 − 10⁻⁶ quantile (≈ 392.3) makes a false failure a one-in-a-million
// event per check, six checks 6·10⁻⁶, within the suite's 10⁻⁵ budget,
// with a fixed seed so the outcome does not change between runs. The
// checks run in the 32-bit ring and in the smallest ring the parameters
// allow, whose values are packed across byte boundaries. The test of the test: the
// unmasked input's bytes fail the same check.
func TestMaskedVectorUniform(t *testing.T) {
	const l = 1 << 16 // 262,144 bytes at 32 bits: 1,024 expected per byte value
	crit := distuv.ChiSquared{K: 255}.Quantile(1 - 1e-6)
	tests := []struct {
		name  string
		input func(i int) int64
	}{
		{name: "zeros", input: func(int) int64 { return 0 }},
		{name: "constant at the bound", input: func(int) int64 { return 256000 }},
		{name: "small counts", input: func(i int) int64 { return int64(i % 7) }},
	}
	// The ring of the test parameters (2^32) and the smallest one they
	// allow, 2^21, whose values are packed 21 bits each: a packed vector of
	// uniform values is a uniform bit string, so its bytes must be uniform
	// too (2^17 values make 344,064 bytes, 1,344 expected per value).
	for _, ring := range []struct{ bits, l int }{{32, l}, {21, 2 * l}} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/ring 2^%d", tt.name, ring.bits), func(t *testing.T) {
				p := testParams(3, 2, ring.l)
				p.Bits = ring.bits
				if got := RingBits(p.Parties, p.Clip, p.FracBits); ring.bits != 32 && got != ring.bits {
					t.Fatalf("RingBits = %d, want %d", got, ring.bits)
				}
				inputs := make([][]int64, p.Parties)
				for i := range inputs {
					inputs[i] = make([]int64, ring.l)
					for j := range inputs[i] {
						inputs[i][j] = tt.input(j)
					}
				}
				in := newInstance(t, p, inputs, 42)
				if _, err := in.run(nil); err != nil {
					t.Fatal(err)
				}
				size := packedLen(ring.l, ring.bits)
				wire := in.sent[KindForward][1] // party 1's masked vector as sent
				if x := byteChiSquare(wire[len(wire)-size:]); x > crit {
					t.Errorf("χ² of the masked vector's bytes = %.1f, want ≤ %.1f (α = 1e-6, 255 df)", x, crit)
				}
				plain := make([]uint64, ring.l)
				for j, v := range inputs[1] {
					plain[j] = uint64(v) & p.ringMask()
				}
				raw := maskedMessage(p.Session, 1, ring.bits, plain)
				if x := byteChiSquare(raw[len(raw)-size:]); x <= crit {
					t.Errorf("χ² of the unmasked input's bytes = %.1f, want > %.1f: the check cannot tell", x, crit)
				}
			})
		}
	}
}
