package secagg

import (
	"errors"
	"math/rand/v2"
	"testing"
)

func TestFieldArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		a, b := r.Uint64N(fieldP), r.Uint64N(fieldP)
		// (a·b) mod p by 128-bit reduction, against the schoolbook result.
		want := mulModSlow(a, b)
		if got := fmul(a, b); got != want {
			t.Fatalf("fmul(%d, %d) = %d, want %d", a, b, got, want)
		}
		if a != 0 && fmul(a, finv(a)) != 1 {
			t.Fatalf("fmul(%d, finv(%d)) = %d, want 1", a, a, fmul(a, finv(a)))
		}
		if got := fsub(fadd(a, b), b); got != a {
			t.Fatalf("fsub(fadd(%d, %d), %d) = %d, want %d", a, b, b, got, a)
		}
	}
	if got := fmul(fieldP-1, fieldP-1); got != 1 {
		t.Errorf("fmul(p−1, p−1) = %d, want 1", got)
	}
}

// mulModSlow multiplies modulo p by double-and-add.
func mulModSlow(a, b uint64) uint64 {
	r := uint64(0)
	for b > 0 {
		if b&1 == 1 {
			r = fadd(r, a)
		}
		a = fadd(a, a)
		b >>= 1
	}
	return r
}

func TestShamir(t *testing.T) {
	src := rand.NewChaCha8([32]byte{7})
	var secret [32]byte
	for i := range secret {
		secret[i] = byte(255 - i)
	}
	tests := []struct{ t, n int }{{1, 1}, {2, 3}, {3, 5}, {26, 50}}
	for _, tt := range tests {
		shares, err := shamirSplit(secret, tt.t, tt.n, src)
		if err != nil {
			t.Fatalf("shamirSplit(t=%d, n=%d) = %v", tt.t, tt.n, err)
		}
		// Any t shares rebuild it: the first t, the last t, and all n.
		for _, sub := range [][]share{shares[:tt.t], shares[tt.n-tt.t:], shares} {
			got, err := shamirCombine(sub, tt.t)
			if err != nil || got != secret {
				t.Errorf("shamirCombine(%d of t=%d, n=%d) = %x, %v; want the secret", len(sub), tt.t, tt.n, got, err)
			}
		}
		if tt.t > 1 {
			if _, err := shamirCombine(shares[:tt.t-1], tt.t); !errors.Is(err, ErrBelowThreshold) {
				t.Errorf("shamirCombine(t−1 shares) = %v; want ErrBelowThreshold", err)
			}
			// A corrupted extra share is detected, not combined.
			bad := append([]share(nil), shares...)
			bad[tt.n-1].y[2] = fadd(bad[tt.n-1].y[2], 1)
			if tt.n > tt.t {
				if _, err := shamirCombine(bad, tt.t); err == nil {
					t.Errorf("shamirCombine with a corrupted share (t=%d, n=%d) = nil error", tt.t, tt.n)
				}
			}
		}
	}
}

// TestShamirHides checks that t−1 shares say nothing about the secret:
// with t = 2 a single share's chunk values are uniform whatever the
// secret, so two very different secrets give share values whose low bits
// are spread evenly (a coarse check of the random coefficients' use).
func TestShamirHides(t *testing.T) {
	src := rand.NewChaCha8([32]byte{9})
	var zero, ones [32]byte
	for i := range ones {
		ones[i] = 0xff
	}
	for _, secret := range [][32]byte{zero, ones} {
		var low [16]int
		const trials = 4096
		for range trials {
			sh, err := shamirSplit(secret, 2, 3, src)
			if err != nil {
				t.Fatal(err)
			}
			low[sh[0].y[0]&15]++
		}
		for v, c := range low {
			// Binomial(4096, 1/16): mean 256, sd ≈ 15.5; ±100 is over 6 sd.
			if c < 156 || c > 356 {
				t.Errorf("secret %x…: low nibble %d of a share seen %d times in %d, want about 256", secret[:2], v, c, trials)
			}
		}
	}
}
