package report_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/fedtopic/fedtopic/eval/report"
)

// A run record as `fedtopic simulate` writes it: one line per round, then
// a summary line.
const runRecord = `{"type": "round", "round": 1, "attempt": 1, "committed": true, "replied": ["p1", "p2"], "bytes": [{"party": "p1", "up": 41000, "down": 90000}, {"party": "p2", "up": 52000, "down": 90000}], "spent": [{"party": "p1", "events": [{"mechanism": "laplace", "epsilon": 1, "unit": "word occurrence", "count": 1}]}, {"party": "p2", "events": [{"mechanism": "laplace", "epsilon": 1, "unit": "word occurrence", "count": 1}]}], "epsilon": [{"party": "p1", "epsilon": 1, "delta": 0, "unit": "word occurrence", "accountant": "pure", "releases": 1}, {"party": "p2", "epsilon": 1, "delta": 0, "unit": "word occurrence", "accountant": "pure", "releases": 1}], "duration_s": 0.9, "metrics": {"perplexity": 910}}
{"type": "round", "round": 2, "attempt": 1, "committed": true, "replied": ["p1", "p2"], "bytes": [{"party": "p1", "up": 40000, "down": 90000}, {"party": "p2", "up": 51000, "down": 90000}], "spent": [{"party": "p1", "events": [{"mechanism": "laplace", "epsilon": 1, "unit": "word occurrence", "count": 1}]}, {"party": "p2", "events": [{"mechanism": "laplace", "epsilon": 1, "unit": "word occurrence", "count": 1}]}], "epsilon": [{"party": "p1", "epsilon": 2, "delta": 0, "unit": "word occurrence", "accountant": "pure", "releases": 2}, {"party": "p2", "epsilon": 2, "delta": 0, "unit": "word occurrence", "accountant": "pure", "releases": 2}], "duration_s": 0.85, "metrics": {"perplexity": 640}}
{"type": "summary", "run": "clinics", "algorithm": "ftm", "parties": ["p1", "p2"], "seed": 7, "rounds": 2, "epsilon": [{"party": "p1", "epsilon": 2, "delta": 0, "unit": "word occurrence", "accountant": "pure", "releases": 2}, {"party": "p2", "epsilon": 2, "delta": 0, "unit": "word occurrence", "accountant": "pure", "releases": 2}], "duration_s": 1.9, "metrics": {"perplexity": 640}, "baselines": [{"kind": "pooled", "metrics": {"perplexity": 600}}]}
`

func ExampleWrite() {
	tmp, err := os.MkdirTemp("", "report-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "clinics") // the run directory
	if err := os.Mkdir(dir, 0o755); err != nil {
		fmt.Println(err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, report.RecordFile), []byte(runRecord), 0o644); err != nil {
		fmt.Println(err)
		return
	}

	var page bytes.Buffer
	if err := report.Write(context.Background(), &page, []string{dir}, report.Options{Title: "Two clinics"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range regexp.MustCompile(`<h2>(.*)</h2>`).FindAllSubmatch(page.Bytes(), -1) {
		fmt.Printf("section: %s\n", m[1])
	}
	for _, m := range regexp.MustCompile(`aria-label="([^"]*)" data-points="(\d+)"`).FindAllSubmatch(page.Bytes(), -1) {
		fmt.Printf("plot: %s, %s points\n", m[1], m[2])
	}
	// Output:
	// section: Setup
	// section: Privacy statement
	// section: Convergence
	// section: Communication
	// section: Parties
	// plot: ε spent against rounds — clinics, 2 points
	// plot: Perplexity against rounds, 3 points
	// plot: Bytes per party per round — clinics, 4 points
	// plot: Perplexity against cumulative traffic, 2 points
}
