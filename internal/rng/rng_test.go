package rng

import "testing"

func TestDeriveReproducible(t *testing.T) {
	a := Derive(7, "party", 1, "round", 2)
	b := Derive(7, "party", 1, "round", 2)
	for i := 0; i < 100; i++ {
		if x, y := a.Uint64(), b.Uint64(); x != y {
			t.Fatalf("Derive(7, party 1, round 2) draw %d: %d != %d", i, x, y)
		}
	}
}

func TestDeriveDistinct(t *testing.T) {
	tests := []struct {
		name string
		a, b []any
	}{
		{name: "different label", a: []any{"party", 1}, b: []any{"party", 2}},
		{name: "type matters", a: []any{"a", 1}, b: []any{"a", "1"}},
		{name: "concatenation", a: []any{"ab", "c"}, b: []any{"a", "bc"}},
		{name: "prefix", a: []any{"x"}, b: []any{"x", "y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if Key(1, tt.a...) == Key(1, tt.b...) {
				t.Errorf("Key(1, %v) == Key(1, %v); want distinct keys", tt.a, tt.b)
			}
		})
	}
	if Key(1, "x") == Key(2, "x") {
		t.Error("Key(1, x) == Key(2, x); want seeds to give distinct keys")
	}
}

func TestNewSeedDiffers(t *testing.T) {
	// Two 64-bit draws from crypto/rand collide with probability 2^-64.
	if NewSeed() == NewSeed() {
		t.Error("NewSeed returned the same value twice")
	}
}
