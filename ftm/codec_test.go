package ftm

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestCodecRoundTrip(t *testing.T) {
	rows := []float64{0.5, 0.25, 0.25, 0, 0.1, 0.2, 0.3, 0.4}
	u := updateMsg{docs: 17, k: 2, v: 4, rows: rows}
	got, err := decodeUpdate(encodeUpdate(u), 4, 2)
	if err != nil {
		t.Fatalf("decodeUpdate(encodeUpdate(%+v)): %v", u, err)
	}
	approx := cmpopts.EquateApprox(0, 1e-7) // float32 on the wire
	if d := cmp.Diff(u, got, cmp.AllowUnexported(updateMsg{}), approx); d != "" {
		t.Errorf("update round trip (-sent +got):\n%s", d)
	}
	m := modelMsg{k: 2, v: 4, weights: []float64{3, 0.5}, rows: rows}
	gm, err := decodeModel(encodeModel(m), 4, 5)
	if err != nil {
		t.Fatalf("decodeModel(encodeModel(%+v)): %v", m, err)
	}
	if d := cmp.Diff(m, gm, cmp.AllowUnexported(modelMsg{}), approx); d != "" {
		t.Errorf("model round trip (-sent +got):\n%s", d)
	}
	if k, err := messageKind(encodeStart()); err != nil || k != kindStart {
		t.Errorf("messageKind(encodeStart()) = %d, %v; want %d, nil", k, err, kindStart)
	}
	if n := len(encodeUpdate(u)); n != updateSize(2, 4) {
		t.Errorf("update of 2×4 is %d bytes; updateSize says %d", n, updateSize(2, 4))
	}
	if n := len(encodeModel(m)); n != modelSize(2, 4) {
		t.Errorf("model of 2×4 is %d bytes; modelSize says %d", n, modelSize(2, 4))
	}
}

// setFloat overwrites row entry i of an encoded update of 2×4.
func setFloat(b []byte, i int, x float32) []byte {
	b = append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(b[headerSize+16+4*i:], math.Float32bits(x))
	return b
}

func TestDecodeUpdateRejects(t *testing.T) {
	good := encodeUpdate(updateMsg{docs: 3, k: 2, v: 4, rows: []float64{0.5, 0.25, 0.25, 0, 0.1, 0.2, 0.3, 0.4}})
	tests := []struct {
		name    string
		payload []byte
		v, maxK int
	}{
		{name: "empty", payload: nil, v: 4, maxK: 2},
		{name: "wrong magic", payload: append([]byte("XTM1"), good[4:]...), v: 4, maxK: 2},
		{name: "model kind", payload: append(append([]byte(magic), kindModel), good[5:]...), v: 4, maxK: 2},
		{name: "unknown kind", payload: append(append([]byte(magic), 9), good[5:]...), v: 4, maxK: 2},
		{name: "truncated header", payload: good[:headerSize+10], v: 4, maxK: 2},
		{name: "ragged", payload: good[:len(good)-1], v: 4, maxK: 2},
		{name: "trailing bytes", payload: append(append([]byte(nil), good...), 0, 0, 0, 0), v: 4, maxK: 2},
		{name: "other vocabulary", payload: good, v: 5, maxK: 2},
		{name: "too many topics", payload: good, v: 4, maxK: 1},
		{name: "NaN", payload: setFloat(good, 1, float32(math.NaN())), v: 4, maxK: 2},
		{name: "+Inf", payload: setFloat(good, 6, float32(math.Inf(1))), v: 4, maxK: 2},
		{name: "negative", payload: setFloat(setFloat(good, 0, 0.75), 3, -0.25), v: 4, maxK: 2},
		{name: "row does not sum to 1", payload: setFloat(good, 0, 0.6), v: 4, maxK: 2},
		{name: "no documents", payload: func() []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint64(b[headerSize:], 0)
			return b
		}(), v: 4, maxK: 2},
		{name: "zero topics", payload: encodeUpdate(updateMsg{docs: 1, k: 0, v: 4}), v: 4, maxK: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := decodeUpdate(tt.payload, tt.v, tt.maxK); !errors.Is(err, errCodec) {
				t.Errorf("decodeUpdate(%s) error = %v; want one wrapping errCodec", tt.name, err)
			}
		})
	}
}

func TestValidatorSizes(t *testing.T) {
	s := testSetup(3, 4, `{"topics":[2,3,1]}`)
	v, err := NewValidator(s)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.MaxUpdateSize(), updateSize(3, 4); got != want {
		t.Errorf("MaxUpdateSize() = %d; want %d (largest K_p = 3)", got, want)
	}
	if got, want := v.MaxBroadcastSize(), modelSize(6, 4); got != want {
		t.Errorf("MaxBroadcastSize() = %d; want %d (M* of up to 2+3+1 topics)", got, want)
	}
	u := encodeUpdate(updateMsg{docs: 1, k: 3, v: 4, rows: []float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0.5, 0.5}})
	if err := v.CheckUpdate(1, u); err != nil {
		t.Errorf("CheckUpdate(valid 3×4 update) = %v; want nil", err)
	}
	if err := v.CheckUpdate(1, u[:len(u)-4]); err == nil {
		t.Errorf("CheckUpdate(truncated update) = nil; want an error")
	}
}

// FuzzDecode feeds arbitrary bytes to the decoders: they must return a
// message or an error, never panic, and what they accept must re-encode to
// rows that sum to 1.
func FuzzDecode(f *testing.F) {
	f.Add(encodeUpdate(updateMsg{docs: 3, k: 2, v: 4, rows: []float64{0.5, 0.25, 0.25, 0, 0.1, 0.2, 0.3, 0.4}}))
	f.Add(encodeModel(modelMsg{k: 1, v: 4, weights: []float64{2}, rows: []float64{0.25, 0.25, 0.25, 0.25}}))
	f.Add(encodeStart())
	f.Fuzz(func(t *testing.T, b []byte) {
		if u, err := decodeUpdate(b, 4, 3); err == nil {
			checkRows(t, u.rows, u.k, u.v)
		}
		if m, err := decodeModel(b, 4, 3); err == nil {
			checkRows(t, m.rows, m.k, m.v)
		}
	})
}

func checkRows(t *testing.T, rows []float64, k, v int) {
	t.Helper()
	if len(rows) != k*v {
		t.Fatalf("decoded %d entries for %d×%d", len(rows), k, v)
	}
	for r := 0; r < k; r++ {
		var s float64
		for _, x := range rows[r*v : (r+1)*v] {
			if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("decoded entry %v in row %d", x, r)
			}
			s += x
		}
		if math.Abs(s-1) > 1e-9 {
			t.Fatalf("decoded row %d sums to %v", r, s)
		}
	}
}
