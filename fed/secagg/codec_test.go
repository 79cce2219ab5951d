package secagg

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

// FuzzDecode checks that the strict decoder never panics and that what it
// accepts is canonical: it encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	rec := recordForFuzz(f)
	for _, b := range rec {
		f.Add(b)
	}
	f.Add(maskedMessage([]byte("s"), 1, 12, []uint64{1, 4095, 7}))
	f.Add([]byte("FSA1"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decode(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("decode error %v is not ErrMalformed", err)
			}
			return
		}
		if got := m.encode(); !bytes.Equal(got, b) {
			t.Fatalf("encode(decode(b)) differs from b:\n got %x\nwant %x", got, b)
		}
		if k, err := MessageKind(b); err != nil || k != m.kind {
			t.Fatalf("MessageKind = %v, %v; want %v", k, err, m.kind)
		}
	})
}

// recordForFuzz returns every message of a small honest run with one
// dropout, as seeds.
func recordForFuzz(tb testing.TB) [][]byte {
	p := testParams(3, 2, 3)
	in := newInstance(tb, p, randomInputs(p, 1), 1)
	if _, err := in.run(map[Kind][]int{KindUnmask: {2}}); err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, k := range coordinatorKinds {
		for _, m := range append(slices.Clone(in.in[k]), in.sent[k]...) {
			if m != nil {
				out = append(out, m)
			}
		}
	}
	return out
}

// maskedMessage encodes a masked vector of values in Z_(2^bits), packed
// as a party sends it (bits other than 8 … 32 and 64 as 32-bit words).
func maskedMessage(session []byte, party, bits int, values []uint64) []byte {
	var body []byte
	if bits == 64 {
		body = packWords(nil, values, 64)
	} else {
		w := make([]uint32, len(values))
		for i, v := range values {
			w[i] = uint32(v)
		}
		body = packWords(nil, w, min(bits, 32))
	}
	return (&message{kind: KindMasked, session: session, party: party, bits: bits, count: len(values), masked: body}).encode()
}

func TestDecodeRejects(t *testing.T) {
	p := testParams(3, 2, 3)
	unmask := (&message{kind: KindUnmask, session: p.Session, alive: []int{0, 1}, dropped: []int{2}}).encode()
	masked := maskedMessage(p.Session, 1, 32, []uint64{1, 2, 3})
	packed := maskedMessage(p.Session, 1, 12, []uint64{1, 2, 3}) // 36 bits: 4 padding bits
	padded := bytes.Clone(packed)
	padded[len(padded)-1] |= 0x10
	tests := []struct {
		name string
		b    []byte
	}{
		{name: "empty", b: nil},
		{name: "bad magic", b: append([]byte("XSA1"), unmask[4:]...)},
		{name: "unknown kind", b: append([]byte("FSA1\x09"), unmask[5:]...)},
		{name: "trailing byte", b: append(bytes.Clone(unmask), 0)},
		{name: "truncated", b: unmask[:len(unmask)-1]},
		{name: "unsorted list", b: (&message{kind: KindUnmask, session: p.Session, alive: []int{1, 0}}).encode()},
		{name: "repeated party", b: (&message{kind: KindUnmask, session: p.Session, alive: []int{1, 1}}).encode()},
		{name: "masked length lies", b: append(bytes.Clone(masked), 0, 0, 0, 0)},
		{name: "masked in a 2^7 ring", b: maskedMessage(p.Session, 1, 7, []uint64{1, 2})},
		{name: "masked in a 2^33 ring", b: maskedMessage(p.Session, 1, 33, []uint64{1, 2})},
		{name: "packed masked length lies", b: append(bytes.Clone(packed), 0)},
		{name: "packed masked truncated", b: packed[:len(packed)-1]},
		{name: "packed masked with a padding bit set", b: padded},
		{name: "masked with no values", b: maskedMessage(p.Session, 1, 32, nil)},
		{name: "empty session", b: (&message{kind: KindUnmask, alive: []int{0}}).encode()},
		{name: "setup with bad params", b: (&message{kind: KindSetup, params: Params{Session: []byte("s"), Parties: 4, Threshold: 2, Bits: 32, Clip: 1, Len: 1}}).encode()},
		{name: "setup with NaN clip", b: (&message{kind: KindSetup, params: Params{Session: []byte("s"), Parties: 3, Threshold: 2, Bits: 32, Clip: math.NaN(), Len: 1}}).encode()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if m, err := decode(tt.b); !errors.Is(err, ErrMalformed) {
				t.Errorf("decode(%x) = %+v, %v; want ErrMalformed", tt.b, m, err)
			}
		})
	}
}

// TestEncodeRoundTrip checks the fixed-point encoding: integers and
// multiples of 2^−f come back exactly, any value within the clip comes
// back within half a grid step, and the sum decodes to the sum.
func TestEncodeRoundTrip(t *testing.T) {
	p := testParams(5, 3, 8)
	x := []float64{0, 1, -1, 999.99609375, -1000, 0.3, -123.456, 1.0 / 3}
	v, err := p.Encode(x)
	if err != nil {
		t.Fatalf("Encode(%v) = %v", x, err)
	}
	got := p.Decode(v)
	step := math.Ldexp(1, -p.FracBits)
	for i := range x {
		exact := x[i] == math.Round(x[i]/step)*step
		if d := math.Abs(got[i] - x[i]); (exact && d != 0) || d > step/2 {
			t.Errorf("Decode(Encode(%v)) = %v, off by %v; want within %v (exact: %v)", x[i], got[i], d, step/2, exact)
		}
	}
	if want := []int64{0, 256, -256, 255999, -256000, 77, -31605, 85}; !equalInts(v, want) {
		t.Errorf("Encode(%v) = %v, want %v", x, v, want)
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOverflow checks the overflow guard: parameters whose n clipped
// values could wrap the ring are refused, and so are values past the clip,
// at encoding and again by the party before it masks.
func TestOverflow(t *testing.T) {
	params := []struct {
		name string
		p    Params
		ok   bool
	}{
		{name: "fits", p: Params{Session: []byte("s"), Parties: 10, Threshold: 6, Bits: 32, FracBits: 8, Clip: 838860, Len: 1}, ok: true},
		// 10 × ⌊838861·2^8⌋ = 2,147,484,160 > 2^31 − 1.
		{name: "sum of ten could wrap 2^32", p: Params{Session: []byte("s"), Parties: 10, Threshold: 6, Bits: 32, FracBits: 8, Clip: 838861, Len: 1}},
		{name: "fits 2^64", p: Params{Session: []byte("s"), Parties: 50, Threshold: 26, Bits: 64, FracBits: 16, Clip: 1e12, Len: 1}, ok: true},
		{name: "sum of fifty could wrap 2^64", p: Params{Session: []byte("s"), Parties: 50, Threshold: 26, Bits: 64, FracBits: 20, Clip: 1e13, Len: 1}},
		{name: "clip below one step", p: Params{Session: []byte("s"), Parties: 3, Threshold: 2, Bits: 32, FracBits: 0, Clip: 0.5, Len: 1}},
	}
	for _, tt := range params {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.p.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v; want ok %v", err, tt.ok)
			}
		})
	}
	p := testParams(3, 2, 2)
	for _, x := range [][]float64{{1000.002, 0}, {0, -1000.002}, {math.NaN(), 0}, {math.Inf(1), 0}} {
		if _, err := p.Encode(x); !errors.Is(err, ErrOverflow) {
			t.Errorf("Encode(%v) = %v; want ErrOverflow", x, err)
		}
	}
	// A party handed a grid value past the bound refuses to mask it.
	in := newInstance(t, p, [][]int64{{0, 0}, {0, 256001}, {0, 0}}, 1)
	out, _ := in.server.Start()
	for range 2 {
		replies := make([][]byte, 3)
		for _, i := range out.To {
			replies[i], _ = in.parties[i].Handle(out.For(i), nil)
		}
		out, _ = in.server.Collect(replies)
	}
	if _, err := in.parties[1].Handle(out.For(1), in.inputs[1]); !errors.Is(err, ErrOverflow) {
		t.Errorf("Handle(forward) with input 256001 > bound 256000 = %v; want ErrOverflow", err)
	}
	if _, err := in.parties[0].Handle(out.For(0), in.inputs[0]); err != nil {
		t.Errorf("Handle(forward) within the bound = %v", err)
	}
}
