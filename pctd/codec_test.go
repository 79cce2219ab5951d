package pctd

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

func TestCodecRoundTrip(t *testing.T) {
	phi := []float64{0.5, 0.25, 0.25, 0, 0.1, 0.2, 0.3, 0.4}
	got, err := decodeModel(encodeModel(phi, 2, 4), 2, 4)
	if err != nil {
		t.Fatalf("decodeModel(encodeModel(2×4)): %v", err)
	}
	for i := range phi {
		if math.Abs(got[i]-phi[i]) > 1e-7 {
			t.Errorf("model entry %d = %v after the round trip; want %v", i, got[i], phi[i])
		}
	}
	m := []float64{3, -2.5, 0, 1e6, -1e-3, 7, 8, 9}
	gm, err := decodeUpdate(encodeUpdate(m, 2, 4), 2, 4)
	if err != nil {
		t.Fatalf("decodeUpdate(encodeUpdate(2×4)): %v", err)
	}
	for i := range m {
		if math.Abs(gm[i]-m[i]) > 1e-6*math.Abs(m[i]) {
			t.Errorf("update entry %d = %v after the round trip; want %v", i, gm[i], m[i])
		}
	}
	if n := len(encodeModel(phi, 2, 4)); n != modelSize(2, 4) {
		t.Errorf("model of 2×4 is %d bytes; modelSize says %d", n, modelSize(2, 4))
	}
	if n := len(encodeUpdate(m, 2, 4)); n != updateSize(2, 4) {
		t.Errorf("update of 2×4 is %d bytes; updateSize says %d", n, updateSize(2, 4))
	}
}

// setValue overwrites value i of an encoded 2×4 message.
func setValue(b []byte, i int, x float32) []byte {
	b = append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(b[headerSize+8+4*i:], math.Float32bits(x))
	return b
}

func TestDecodeRejects(t *testing.T) {
	model := encodeModel([]float64{0.5, 0.25, 0.25, 0, 0.1, 0.2, 0.3, 0.4}, 2, 4)
	update := encodeUpdate([]float64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)
	tests := []struct {
		name    string
		payload []byte
		update  bool
	}{
		{name: "empty update", payload: nil, update: true},
		{name: "empty model", payload: nil},
		{name: "wrong magic", payload: append([]byte("XCT1"), update[4:]...), update: true},
		{name: "model as update", payload: model, update: true},
		{name: "update as model", payload: update},
		{name: "truncated", payload: update[:len(update)-1], update: true},
		{name: "trailing bytes", payload: append(append([]byte(nil), update...), 0, 0, 0, 0), update: true},
		{name: "other shape", payload: encodeUpdate(make([]float64, 10), 2, 5), update: true},
		{name: "NaN update", payload: setValue(update, 3, float32(math.NaN())), update: true},
		{name: "Inf update", payload: setValue(update, 0, float32(math.Inf(-1))), update: true},
		{name: "huge update", payload: setValue(update, 5, 1e16), update: true},
		{name: "negative model entry", payload: setValue(setValue(model, 0, 0.75), 3, -0.25)},
		{name: "model row off 1", payload: setValue(model, 0, 0.6)},
		{name: "NaN model", payload: setValue(model, 1, float32(math.NaN()))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.update {
				_, err = decodeUpdate(tt.payload, 2, 4)
			} else {
				_, err = decodeModel(tt.payload, 2, 4)
			}
			if !errors.Is(err, errCodec) {
				t.Errorf("decode(%s) error = %v; want one wrapping errCodec", tt.name, err)
			}
		})
	}
}

// FuzzDecode feeds arbitrary bytes to the decoders: they must return a
// message or an error, never panic; an accepted model has rows that sum to
// 1 and an accepted update only finite values within maxValue.
func FuzzDecode(f *testing.F) {
	f.Add(encodeModel([]float64{0.5, 0.25, 0.25, 0, 0.1, 0.2, 0.3, 0.4}, 2, 4))
	f.Add(encodeUpdate([]float64{1, -2, 3, 4, 5, 6, 7, 8}, 2, 4))
	f.Fuzz(func(t *testing.T, b []byte) {
		if phi, err := decodeModel(b, 2, 4); err == nil {
			for r := range 2 {
				var s float64
				for _, x := range phi[r*4 : (r+1)*4] {
					if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("decoded model entry %v", x)
					}
					s += x
				}
				if math.Abs(s-1) > 1e-9 {
					t.Fatalf("decoded row %d sums to %v", r, s)
				}
			}
		}
		if m, err := decodeUpdate(b, 2, 4); err == nil {
			if len(m) != 8 {
				t.Fatalf("decoded %d values for 2×4", len(m))
			}
			for _, x := range m {
				if math.IsNaN(x) || math.Abs(x) > maxValue {
					t.Fatalf("decoded update value %v", x)
				}
			}
		}
	})
}
