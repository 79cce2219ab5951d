package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := WriteBytes(path, 0o644, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(path, 0o600, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new" {
		t.Fatalf("ReadFile = %q, %v; want \"new\", nil", got, err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v; want 0600", st.Mode().Perm())
	}
}

func TestWriteFailureKeepsOld(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteBytes(path, 0o644, []byte("old")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Write error = %v; want it to wrap %v", err, boom)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "old" {
		t.Errorf("after a failed write the file holds %q; want \"old\"", got)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after a failed write; want 1 (temporary file removed)", len(entries))
	}
}

func TestWriteMissingDir(t *testing.T) {
	err := WriteBytes(filepath.Join(t.TempDir(), "no", "such", "f"), 0o644, nil)
	if err == nil {
		t.Fatal("WriteBytes into a missing directory succeeded; want an error")
	}
}
