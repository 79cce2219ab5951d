package main

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a bar with a rate and the time left on a terminal and is
// silent otherwise (pipes, files, CI logs, tests).
type progress struct {
	bar *progressbar.ProgressBar
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newProgress returns a bar counting up to total units (e.g. tokens sampled
// over all iterations), drawn on w only if w is a terminal.
func newProgress(w io.Writer, total int64, description, unit string) *progress {
	if !isTerminal(w) || total <= 0 {
		return &progress{}
	}
	bar := progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(description),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(unit),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionClearOnFinish(),
	)
	return &progress{bar: bar}
}

// Set moves the bar to n units done.
func (p *progress) Set(n int64) {
	if p.bar != nil {
		_ = p.bar.Set64(n)
	}
}

// Done removes the bar.
func (p *progress) Done() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}
