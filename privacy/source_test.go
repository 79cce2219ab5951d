package privacy

import "testing"

func TestSecureSourcesDiffer(t *testing.T) {
	// two sources with the same configuration draw different noise.
	a, b := NewSecureSource(), NewSecureSource()
	if a.Seeded() || b.Seeded() {
		t.Fatalf("NewSecureSource().Seeded() = true")
	}
	ra, rb := a.Stream("party", 1, "noise"), b.Stream("party", 1, "noise")
	same := 0
	for range 4 {
		if ra.Uint64() == rb.Uint64() {
			same++
		}
	}
	if same == 4 { // probability 2^-256 for independent keys
		t.Errorf("two secure sources produced the same stream")
	}
}

func TestSeededSourceReproducible(t *testing.T) {
	a, b := NewSeededSource(42), NewSeededSource(42)
	if !a.Seeded() {
		t.Fatalf("NewSeededSource(42).Seeded() = false")
	}
	ra, rb := a.Stream("party", 3), b.Stream("party", 3)
	for i := range 16 {
		if x, y := ra.Uint64(), rb.Uint64(); x != y {
			t.Fatalf("draw %d: seeded streams differ: %d != %d", i, x, y)
		}
	}
	if a.Stream("party", 3).Uint64() == a.Stream("party", 4).Uint64() {
		t.Errorf("different labels gave the same stream")
	}
	if a.Indexed("tok").Key(1) == a.Indexed("tok").Key(2) || a.Indexed("tok").Key(1) != b.Indexed("tok").Key(1) {
		t.Errorf("Indexed keys: want distinct per index and equal across equal sources")
	}
}

func TestSourceStateRoundTrip(t *testing.T) {
	for _, s := range []*Source{NewSecureSource(), NewSeededSource(42)} {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var r Source
		if err := r.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if r.Seeded() != s.Seeded() {
			t.Errorf("restored Seeded() = %v; want %v", r.Seeded(), s.Seeded())
		}
		x, y := s.Stream("party", 1, "noise"), r.Stream("party", 1, "noise")
		for i := range 4 {
			if a, b := x.Uint64(), y.Uint64(); a != b {
				t.Fatalf("seeded %v: word %d of the restored stream = %#x; want %#x", s.Seeded(), i, b, a)
			}
		}
		if s.Indexed("a").Key(7) != r.Indexed("a").Key(7) {
			t.Errorf("seeded %v: restored indexed keys differ", s.Seeded())
		}
		bad := append([]byte(nil), b...)
		bad[len(sourceMagic)] = 2
		for _, in := range [][]byte{nil, b[:len(b)-1], append(append([]byte(nil), b...), 0), bad} {
			if err := new(Source).UnmarshalBinary(in); err == nil {
				t.Errorf("UnmarshalBinary(%d bytes) = nil error; want one", len(in))
			}
		}
	}
	if a, b := NewSecureSource().Stream("x").Uint64(), NewSecureSource().Stream("x").Uint64(); a == b {
		t.Error("two secure sources drew the same first word")
	}
}
