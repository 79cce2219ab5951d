package report

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/fedtopic/fedtopic/internal/atomicfile"
)

// Defaults of Options fields left at zero.
const (
	DefaultTitle    = "fedtopic report"
	DefaultTopWords = 10
)

// Options configures a report. The zero value means the documented
// defaults.
type Options struct {
	// Title heads the page; "" means DefaultTitle.
	Title string `json:"title"`
	// TopWords is the number of words shown per topic; 0 means
	// DefaultTopWords. At most 50.
	TopWords int `json:"top_words"`
}

// Validate reports every invalid field of o, joined with errors.Join.
func (o Options) Validate() error {
	var errs []error
	if o.TopWords < 0 || o.TopWords > 50 {
		errs = append(errs, fmt.Errorf("report: top_words = %d, want 1 to 50 (0 = %d)", o.TopWords, DefaultTopWords))
	}
	if strings.ContainsAny(o.Title, "\n\r") {
		errs = append(errs, fmt.Errorf("report: title %q: want a single line", o.Title))
	}
	return errors.Join(errs...)
}

func (o Options) withDefaults() Options {
	if o.Title == "" {
		o.Title = DefaultTitle
	}
	if o.TopWords == 0 {
		o.TopWords = DefaultTopWords
	}
	return o
}

//go:embed report.html.tmpl style.css
var assets embed.FS

// Write reads the run directories and writes one self-contained HTML
// report to w: inline CSS and SVG, no script, nothing fetched from the
// network. A directory without a run record stands for its subdirectories
// that have one. The output depends only on the files read and opts.
func Write(ctx context.Context, w io.Writer, runDirs []string, opts Options) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts = opts.withDefaults()
	if len(runDirs) == 0 {
		return errors.New("report: no run directories given")
	}
	runs, err := loadRuns(ctx, runDirs)
	if err != nil {
		return err
	}
	pg, err := buildPage(ctx, runs, opts)
	if err != nil {
		return err
	}
	tmpl, err := template.New("report.html.tmpl").Funcs(template.FuncMap{
		"num": func(num []bool, i int) bool { return i < len(num) && num[i] },
	}).ParseFS(assets, "report.html.tmpl")
	if err != nil {
		return fmt.Errorf("report: template: %w", err) // embedded: a programmer error, caught by every test
	}
	css, err := assets.ReadFile("style.css")
	if err != nil {
		return fmt.Errorf("report: style: %w", err)
	}
	pg.CSS = template.CSS(css)
	bw := bufio.NewWriterSize(w, 1<<16)
	if err := tmpl.Execute(bw, pg); err != nil {
		return fmt.Errorf("report: write: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("report: write: %w", err)
	}
	return nil
}

// WriteFile writes the report of Write to path atomically: a reader never
// sees half a report, and a failure leaves an existing file as it was.
func WriteFile(ctx context.Context, path string, runDirs []string, opts Options) error {
	var buf bytes.Buffer
	if err := Write(ctx, &buf, runDirs, opts); err != nil {
		return err
	}
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
