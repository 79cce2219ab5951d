package topic

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var update = flag.Bool("update", false, "rewrite golden files")

// encode returns m in the model file format.
func encode(t testing.TB, m *Model) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := m.Write(&b); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.Bytes()
}

// reseal recomputes the trailing checksum of a model file after a test has
// edited it.
func reseal(b []byte) []byte {
	n := len(b) - 4
	binary.LittleEndian.PutUint32(b[n:], crc32.Checksum(b[:n], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

// withHeader rebuilds a model file with the JSON header replaced by hdr.
func withHeader(t *testing.T, b []byte, hdr string) []byte {
	t.Helper()
	hl := binary.LittleEndian.Uint32(b[12:16])
	out := append([]byte{}, b[:12]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(hdr)))
	out = append(out, hdr...)
	out = append(out, b[16+hl:]...)
	return reseal(out)
}

func TestWriteReadRoundTrip(t *testing.T) {
	for _, m := range []*Model{tinyModel(), randomModel(t, 1, 7, 300, 0.3), {K: 1, V: 1, Phi: []float64{1}, Vocab: []string{"ü"}}} {
		got, err := Read(bytes.NewReader(encode(t, m)))
		if err != nil {
			t.Fatalf("Read(Write(model K=%d V=%d)): %v", m.K, m.V, err)
		}
		if diff := cmp.Diff(m, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Read(Write(m)) differs from m (-want +got):\n%s", diff)
		}
	}
}

func TestGoldenFile(t *testing.T) {
	// The golden file pins format version 1: if this test fails, the
	// format changed and FormatVersion must be raised, with a reader for
	// version 1 kept.
	path := filepath.Join("testdata", "model-v1.golden")
	m := tinyModel()
	b := encode(t, m)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("Write(tinyModel()) differs from %s (%d bytes vs %d)", path, len(b), len(want))
	}
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("Load(%s) (-want +got):\n%s", path, diff)
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.ftm")
	m := randomModel(t, 2, 5, 100, 1)
	if err := Save(path, m); err != nil {
		t.Fatalf("Save: %v", err)
	}
	m2 := randomModel(t, 3, 5, 100, 1)
	if err := Save(path, m2); err != nil {
		t.Fatalf("Save over an existing file: %v", err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if diff := cmp.Diff(m2, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Load(Save(m)) (-want +got):\n%s", diff)
	}
	bad := randomModel(t, 4, 5, 100, 1)
	bad.Phi[0] = math.NaN()
	if err := Save(filepath.Join(dir, "bad.ftm"), bad); err == nil {
		t.Error("Save(invalid model) = nil; want an error")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"model.ftm"}, names); diff != "" {
		t.Errorf("directory after saves (-want +got): %s; temporary or invalid files were left", diff)
	}
	if err := Save(filepath.Join(dir, "nil.ftm"), nil); err == nil || !strings.Contains(err.Error(), "nil model") {
		t.Errorf("Save(nil) = %v; want a nil model error", err)
	}
	if err := Save(filepath.Join(dir, "missing", "m.ftm"), m); err == nil {
		t.Error("Save into a missing directory = nil; want an error")
	}
}

func TestReadErrors(t *testing.T) {
	good := encode(t, tinyModel())
	hl := binary.LittleEndian.Uint32(good[12:16])
	hdr := string(good[16 : 16+hl])
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte{}, good...)) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{name: "empty", data: nil, want: "not a fedtopic model file"},
		{name: "text", data: []byte("hello, world\n"), want: "not a fedtopic model file"},
		{name: "newer version", data: edit(func(b []byte) []byte { b[8] = 2; return reseal(b) }),
			want: "model file format version 2 is newer than this fedtopic reads (version 1)"},
		{name: "version zero", data: edit(func(b []byte) []byte { b[8] = 0; return reseal(b) }),
			want: "unknown model file format version 0 (this fedtopic reads version 1)"},
		{name: "magic only", data: good[:8], want: "truncated"},
		{name: "cut in phi", data: good[:len(good)-20], want: "truncated"},
		{name: "checksum", data: edit(func(b []byte) []byte { b[len(b)-10] ^= 1; return b }), want: "checksum mismatch"},
		{name: "row sum", data: edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[len(b)-12:], math.Float64bits(0.75))
			return reseal(b)
		}), want: "topic: read model: row 1 of Phi sums to 1.25"},
		{name: "NaN", data: edit(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[len(b)-12:], math.Float64bits(math.NaN()))
			return reseal(b)
		}), want: "Phi[1][3] = NaN"},
		{name: "huge shape", data: withHeader(t, good, strings.Replace(hdr, `"k":2,"v":4`, `"k":1000000,"v":1000000`, 1)),
			want: "K×V ≤"},
		{name: "shape mismatch", data: withHeader(t, good, strings.Replace(hdr, `"k":2,"v":4`, `"k":4,"v":2`, 1)),
			want: "vocabulary has 4 words, header says V = 2"},
		{name: "bad header JSON", data: withHeader(t, good, "{"), want: "header"},
		{name: "encoding", data: withHeader(t, good, strings.Replace(hdr, "float64le", "float32le", 1)),
			want: `Φ encoding "float32le"`},
		{name: "alpha length", data: withHeader(t, good, strings.Replace(hdr, `"alpha":[0.1,0.2]`, `"alpha":[0.1]`, 1)),
			want: "Alpha has 1 entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tt.data))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Read() error = %v; want one containing %q", err, tt.want)
			}
			path := filepath.Join(t.TempDir(), "m.ftm")
			if err := os.WriteFile(path, tt.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Load(path)
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("Load() error = %v; want one naming %s", err, path)
			}
		})
	}
}

func TestReadEveryPrefixAndBitFlip(t *testing.T) {
	good := encode(t, tinyModel())
	for n := range len(good) {
		_, err := Read(bytes.NewReader(good[:n]))
		if err == nil {
			t.Fatalf("Read(first %d of %d bytes) = nil error; want an error", n, len(good))
		}
		if n >= 8 && !errors.Is(err, ErrTruncated) {
			t.Errorf("Read(first %d of %d bytes) = %v; want ErrTruncated", n, len(good), err)
		}
	}
	// Every single-bit corruption must be caught: CRC-32C detects all
	// single-bit errors, and a flip that breaks the structure first is
	// reported by the structural check.
	for i := range good {
		for bit := range 8 {
			b := append([]byte{}, good...)
			b[i] ^= 1 << bit
			if _, err := Read(bytes.NewReader(b)); err == nil {
				t.Fatalf("Read(model with byte %d bit %d flipped) = nil error; want an error", i, bit)
			}
		}
	}
}

func TestLoadTrailingData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.ftm")
	if err := os.WriteFile(path, append(encode(t, tinyModel()), 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "1 more than its header describes") {
		t.Errorf("Load(file with a trailing byte) = %v; want an error about trailing data", err)
	}
}

func TestReadBoundedAllocation(t *testing.T) {
	// A header claiming K×V = 2^32 entries (32 GiB of Φ) followed by
	// nothing: Read must fail on truncation having allocated only about
	// what the input held.
	good := encode(t, tinyModel())
	hl := binary.LittleEndian.Uint32(good[12:16])
	hdr := strings.Replace(string(good[16:16+hl]), `"k":2,"v":4`, `"k":1073741824,"v":4`, 1)
	data := withHeader(t, good, hdr)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTruncated) {
		t.Errorf("Read(header claiming 2^32 entries) = %v; want ErrTruncated", err)
	}
	// The reader allocates in 1 MiB chunks; 16 MiB leaves room for
	// the test's own allocations.
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Errorf("Read(header claiming 2^32 entries) allocated %d bytes; want under 16 MiB", got)
	}
}

func FuzzRead(f *testing.F) {
	good := encode(f, tinyModel())
	f.Add(good)
	f.Add(good[:40])
	f.Add(encode(f, randomModel(f, 5, 3, 20, 1)))
	f.Add([]byte("FEDTOPIC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Whatever Read accepts is valid and survives a round trip.
		again, err := Read(bytes.NewReader(encode(t, m)))
		if err != nil {
			t.Fatalf("Read(Write(Read(data))): %v", err)
		}
		if diff := cmp.Diff(m, again, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()); diff != "" {
			t.Fatalf("round trip changed the model (-first +second):\n%s", diff)
		}
	})
}
