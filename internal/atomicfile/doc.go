// Package atomicfile writes files so that a reader, or a restart after a
// crash, sees either the old content or the complete new content, never a
// part: the data go to a temporary file in the same directory, which is
// fsynced, renamed over the target, and the directory fsynced.
//
//	err := atomicfile.Write("model.bin", 0o644, func(w io.Writer) error {
//		return m.Write(w)
//	})
package atomicfile
