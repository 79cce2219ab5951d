package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// outDir is a run's output directory, written in a temporary directory
// beside it and moved into place only when the run succeeds: a failed or
// interrupted run leaves nothing behind, and a replaced run leaves no
// stale file beside the new one.
type outDir struct {
	path  string // where the run ends up
	tmp   string // where it is written
	force bool   // replace path if it holds files
	done  bool
}

// newOutDir checks path before any work starts — not a file, empty or
// absent unless force, in a directory that can be written — and creates
// the temporary directory the run is written to.
func newOutDir(path string, force bool) (*outDir, error) {
	if path == "" {
		return nil, usagef("--out is required: the directory to write the run to")
	}
	clean := filepath.Clean(path)
	if fi, err := os.Stat(clean); err == nil {
		if !fi.IsDir() {
			return nil, usagef("--out %s: is a file, want a directory", path)
		}
		entries, err := os.ReadDir(clean)
		if err != nil {
			return nil, fmt.Errorf("--out %s: %w", path, err)
		}
		if len(entries) > 0 && !force {
			return nil, usagef("--out %s: already holds %d files or directories (a previous run?): choose another directory, or give --force to replace it", path, len(entries))
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("--out %s: %w", path, err)
	}
	parent := filepath.Dir(clean)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("--out %s: cannot create its parent directory: %w", path, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(clean)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("--out %s: cannot write in %s: %w", path, parent, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("--out %s: %w", path, err)
	}
	return &outDir{path: clean, tmp: tmp, force: force}, nil
}

// commit moves the finished run into place, replacing what was there.
func (o *outDir) commit() error {
	var old string
	if _, err := os.Stat(o.path); err == nil {
		old = o.tmp + ".old"
		if err := os.Rename(o.path, old); err != nil {
			return fmt.Errorf("--out %s: replace: %w", o.path, err)
		}
	}
	if err := os.Rename(o.tmp, o.path); err != nil {
		if old != "" {
			os.Rename(old, o.path)
		}
		return fmt.Errorf("--out %s: %w", o.path, err)
	}
	o.done = true
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

// abandon removes the temporary directory of a run that did not commit.
func (o *outDir) abandon() {
	if !o.done {
		os.RemoveAll(o.tmp)
	}
}

// checkOutFile checks, before any work starts, that a command can write
// the file path: not a directory, not an existing file unless force, in a
// directory that exists and can be written. flag names the setting.
func checkOutFile(path, flag string, force bool) error {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return usagef("%s %s: is a directory, want a file path", flag, path)
	case err == nil && !force:
		return usagef("%s %s: already exists: choose another path, or give --force to overwrite it", flag, path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	dir := filepath.Dir(path)
	probe, err := os.CreateTemp(dir, "."+filepath.Base(path)+".probe-")
	if err != nil {
		return fmt.Errorf("%s %s: cannot write in %s: %w", flag, path, dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}
