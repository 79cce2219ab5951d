package fed

import (
	"bytes"
	"errors"
	"testing"
)

func TestStateRoundTrip(t *testing.T) {
	type meta struct {
		A string
		N int
	}
	blobs := [][]byte{{1, 2, 3}, nil, bytes.Repeat([]byte{9}, 1000)}
	data, err := encodeState("TEST", 3, meta{"x", 5}, blobs...)
	if err != nil {
		t.Fatal(err)
	}
	var m meta
	got, err := decodeState(data, "TEST", 3, &m)
	if err != nil {
		t.Fatalf("decodeState: %v", err)
	}
	if m != (meta{"x", 5}) || len(got) != 3 {
		t.Fatalf("decodeState = %+v, %d blobs; want {x 5}, 3", m, len(got))
	}
	for i := range blobs {
		if !bytes.Equal(got[i], blobs[i]) {
			t.Errorf("blob %d = %v; want %v", i, got[i], blobs[i])
		}
	}
	tests := []struct {
		name    string
		data    []byte
		kind    string
		version uint32
	}{
		{name: "other kind", data: data, kind: "XXXX", version: 3},
		{name: "other version", data: data, kind: "TEST", version: 4},
		{name: "truncated", data: data[:len(data)-40], kind: "TEST", version: 3},
		{name: "too short", data: data[:10], kind: "TEST", version: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := decodeState(tt.data, tt.kind, tt.version, &m); !errors.Is(err, ErrCheckpoint) {
				t.Errorf("decodeState(%s) error = %v; want ErrCheckpoint", tt.name, err)
			}
		})
	}
	for i := range data {
		b := bytes.Clone(data)
		b[i] ^= 1
		if _, err := decodeState(b, "TEST", 3, &m); !errors.Is(err, ErrCheckpoint) {
			t.Fatalf("decodeState with bit 0 of byte %d flipped: %v; want ErrCheckpoint", i, err)
		}
	}
}
