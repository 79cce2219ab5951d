//go:build unix

package report_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fedtopic/fedtopic/corpus"
	"github.com/fedtopic/fedtopic/corpus/synth"
	"github.com/fedtopic/fedtopic/eval"
	"github.com/fedtopic/fedtopic/eval/report"
	"github.com/fedtopic/fedtopic/internal/rng"
	"github.com/fedtopic/fedtopic/sim"
	"github.com/fedtopic/fedtopic/sim/adlda"
	"github.com/fedtopic/fedtopic/topic"
)

// Environment variables of the browser test.
const (
	// requireBrowserEnv, set to 1, makes the browser tests mandatory: a
	// missing Chromium or chromedriver fails them instead of skipping
	// them. .ci/run sets it, so CI never passes by not looking.
	requireBrowserEnv = "FEDTOPIC_REQUIRE_BROWSER"
	// artifactsEnv names a directory to keep the report and its
	// screenshot in, for a person to look at.
	artifactsEnv = "FEDTOPIC_BROWSER_ARTIFACTS"
)

// chromiumFlags start Chromium headless and quiet: no sandbox (CI runs as
// root), no GPU, and nothing that reaches for the network.
var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--no-first-run", "--disable-component-update", "--disable-sync", "--disable-extensions",
	"--disable-default-apps", "--hide-scrollbars", "--window-size=1280,2400",
}

// browserAction is what a browser test does on this machine.
type browserAction int

const (
	browserRun  browserAction = iota // both programs found: run the test
	browserSkip                      // one is missing and the test is optional
	browserFail                      // one is missing and the test is required, or the setting is wrong
)

// browserVerdict decides whether a browser test runs, skips or fails, from
// the paths found for chromium and chromedriver ("" when not found) and
// the value of requireBrowserEnv. The message says what is missing and
// which Debian packages to install.
func browserVerdict(chromium, driver, require string) (browserAction, string) {
	var required bool
	switch require {
	case "", "0":
	case "1":
		required = true
	default:
		return browserFail, fmt.Sprintf("%s=%q: want 1 (the browser tests are mandatory) or 0 or unset (they skip without a browser)", requireBrowserEnv, require)
	}
	if chromium != "" && driver != "" {
		return browserRun, ""
	}
	var missing []string
	if chromium == "" {
		missing = append(missing, "chromium")
	}
	if driver == "" {
		missing = append(missing, "chromedriver")
	}
	if required {
		return browserFail, fmt.Sprintf("%s not found and %s=1: install the Debian packages chromium and chromium-driver", strings.Join(missing, " and "), requireBrowserEnv)
	}
	return browserSkip, fmt.Sprintf("%s not found: install the Debian packages chromium and chromium-driver to run this test (%s=1 makes it mandatory)", strings.Join(missing, " and "), requireBrowserEnv)
}

// findBrowser returns the paths of chromium and chromedriver (Debian
// packages chromium and chromium-driver). Without them it skips the test,
// or fails it when requireBrowserEnv is 1.
func findBrowser(t *testing.T) (chromium, driver string) {
	t.Helper()
	look := func(names ...string) string {
		for _, n := range names {
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		return ""
	}
	chromium = look("chromium", "/usr/bin/chromium", "chromium-browser")
	driver = look("chromedriver", "/usr/bin/chromedriver")
	switch action, msg := browserVerdict(chromium, driver, os.Getenv(requireBrowserEnv)); action {
	case browserSkip:
		t.Skip(msg)
	case browserFail:
		t.Fatal(msg)
	}
	return chromium, driver
}

// TestBrowserVerdict checks when the browser tests run, skip or fail: a
// machine with only Go skips them with a line naming the packages to
// install, and with requireBrowserEnv=1 (as in CI) a missing browser is a
// failure.
func TestBrowserVerdict(t *testing.T) {
	const (
		chromium = "/usr/bin/chromium"
		driver   = "/usr/bin/chromedriver"
	)
	tests := []struct {
		name             string
		chromium, driver string
		require          string
		want             browserAction
		wantMsg          []string // substrings of the message
	}{
		{"both found", chromium, driver, "", browserRun, nil},
		{"both found, required", chromium, driver, "1", browserRun, nil},
		{"none, optional", "", "", "", browserSkip, []string{"chromium and chromedriver not found", "chromium-driver", requireBrowserEnv + "=1"}},
		{"none, 0", "", "", "0", browserSkip, []string{"install the Debian packages chromium and chromium-driver"}},
		{"no driver, optional", chromium, "", "", browserSkip, []string{"chromedriver not found", "chromium-driver"}},
		{"no chromium, optional", "", driver, "", browserSkip, []string{"chromium not found"}},
		{"none, required", "", "", "1", browserFail, []string{"not found and " + requireBrowserEnv + "=1", "chromium-driver"}},
		{"no driver, required", chromium, "", "1", browserFail, []string{"chromedriver not found"}},
		{"bad setting", chromium, driver, "yes", browserFail, []string{requireBrowserEnv + `="yes"`}},
		{"bad setting, none", "", "", "true", browserFail, []string{`"true"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := browserVerdict(tt.chromium, tt.driver, tt.require)
			if got != tt.want {
				t.Errorf("browserVerdict(%q, %q, %q) = %d (%q), want %d", tt.chromium, tt.driver, tt.require, got, msg, tt.want)
			}
			for _, sub := range tt.wantMsg {
				if !strings.Contains(msg, sub) {
					t.Errorf("browserVerdict(%q, %q, %q) message %q, want it to contain %q", tt.chromium, tt.driver, tt.require, msg, sub)
				}
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("message %q has several lines, want one", msg)
			}
		})
	}
}

// simulation is a seeded AD-LDA federation over a synthetic corpus split
// into parties of sizes 1:2:…:n, with the last tenth of the documents held
// out for perplexity after every round.
type simulation struct {
	parties, rounds, k, v, docs int
	docLen                      float64
}

// seededRun simulates a small federation — three parties, five rounds,
// seed 7 — and writes its run directory as fedtopic simulate does.
func seededRun(t testing.TB, dir string) {
	simulatedRun(t, dir, simulation{parties: 3, rounds: 5, k: 4, v: 40, docs: 240, docLen: 30})
}

// simulatedRun runs s and writes its run directory: run.jsonl, the global
// model and each party's local model.
func simulatedRun(t testing.TB, dir string, s simulation) {
	t.Helper()
	data, err := synth.Generate(synth.Config{K: s.k, V: s.v, Docs: s.docs, DocLen: s.docLen, Structure: synth.Planted}, rng.Derive(7, "synth"))
	if err != nil {
		t.Fatal(err)
	}
	train := s.docs * 9 / 10
	test := data.Corpus.Subset(seq(train, s.docs))
	sizes := make([]float64, s.parties)
	for i := range sizes {
		sizes[i] = float64(i + 1)
	}
	parts, err := corpus.Split(data.Corpus.Subset(seq(0, train)), corpus.SplitSpec{Sizes: sizes}, rng.Derive(7, "split"))
	if err != nil {
		t.Fatal(err)
	}
	vocab := make([]string, s.v)
	for w := range vocab {
		vocab[w] = fmt.Sprintf("w%04d", w)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rec, err := os.Create(filepath.Join(dir, report.RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	metrics := func(_ int, m *topic.Model) (map[string]float64, error) {
		p, err := eval.Perplexity(context.Background(), m, test, topic.InferConfig{Seed: 1, Workers: 1})
		if err != nil {
			return nil, err
		}
		return map[string]float64{report.MetricPerplexity: p.Perplexity, report.MetricLogLikelihood: p.LogLikelihood}, nil
	}
	res, err := sim.Run(context.Background(), sim.Scenario{
		Algorithm: adlda.Algorithm, Params: json.RawMessage(fmt.Sprintf(`{"k": %d, "rounds": %d}`, s.k, s.rounds)),
		Corpora: parts, Vocab: vocab, Seed: 7, Record: rec, Metrics: metrics,
	})
	if err != nil {
		t.Fatalf("sim.Run: %v", err)
	}
	if err := topic.Save(filepath.Join(dir, report.GlobalModelFile), res.Global); err != nil {
		t.Fatal(err)
	}
	for i, m := range res.Locals {
		if m != nil {
			if err := topic.Save(filepath.Join(dir, fmt.Sprintf("p%d%s", i+1, report.PartyModelSuffix)), m); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// BenchmarkWriteSimulated measures the figure of issue 6 on a simulated
// run: the report of a 10-round, 5-party AD-LDA run at K = 50 over 5,000
// words (six model files of 50 × 5,000 probabilities) renders in under
// 2 s and weighs under 2 MB.
func BenchmarkWriteSimulated(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	simulatedRun(b, dir, simulation{parties: 5, rounds: 10, k: 50, v: 5000, docs: 5000, docLen: 60})
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := report.Write(context.Background(), &buf, []string{dir}, report.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len()), "bytes/report")
}

func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// plotInfo is what the page's script reports of one plot.
type plotInfo struct {
	Label  string  `json:"label"`
	Points int     `json:"points"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Paths  int     `json:"paths"`  // path elements with a drawn extent
	Texts  int     `json:"texts"`  // text elements
	Legend int     `json:"legend"` // legend entries beneath the plot
}

// inspectScript measures every plot as laid out: its rendered size, the
// path elements that have a non-empty bounding box, its texts and the
// legend entries of its figure.
const inspectScript = `
return Array.from(document.querySelectorAll("figure svg.plot")).map(function (svg) {
	var r = svg.getBoundingClientRect();
	var paths = Array.from(svg.querySelectorAll("path")).filter(function (p) {
		var b = p.getBBox();
		return b.width > 0 || b.height > 0;
	});
	return {
		label: svg.getAttribute("aria-label"),
		points: parseInt(svg.getAttribute("data-points"), 10),
		width: r.width, height: r.height,
		paths: paths.length,
		texts: svg.querySelectorAll("text").length,
		legend: svg.closest("figure").querySelectorAll("ul.legend li").length
	};
});`

// TestReportInBrowser renders the report of a small seeded run in headless
// Chromium, as a person would open it, and checks that it loads without a
// console message, that every plot is laid out at a readable size and
// draws its data, and that the screenshot is not blank. With
// FEDTOPIC_BROWSER_ARTIFACTS set, the report and the screenshot are kept
// there for a person to look at.
func TestReportInBrowser(t *testing.T) {
	chromium, driverPath := findBrowser(t)
	dir := t.TempDir()
	run := filepath.Join(dir, "adlda-3-parties")
	seededRun(t, run)
	page := filepath.Join(dir, "report.html")
	if err := report.WriteFile(context.Background(), page, []string{run}, report.Options{Title: "Seeded AD-LDA run"}); err != nil {
		t.Fatalf("WriteFile: %v", err)
	}

	wd := startDriver(t, driverPath, chromium, dir)
	logs := wd.load(t, page)
	if len(logs) > 0 {
		t.Errorf("the report logged %d console messages, want none:\n%s", len(logs), strings.Join(logs, "\n"))
	}
	var title string
	wd.exec(t, "return document.title;", &title)
	if title != "Seeded AD-LDA run" {
		t.Errorf("document.title = %q, want %q", title, "Seeded AD-LDA run")
	}
	var plots []plotInfo
	wd.exec(t, inspectScript, &plots)
	// Convergence (perplexity, log-likelihood), traffic per party, bytes
	// against quality; AD-LDA releases no ε, so no privacy–utility plot.
	if len(plots) < 4 {
		t.Errorf("%d plots on the page, want at least 4: %+v", len(plots), plots)
	}
	for _, p := range plots {
		// At 1280 px the figures are 760 px wide less padding; a plot
		// drawn smaller than 400×150 px would be unreadable.
		if p.Width < 400 || p.Height < 150 {
			t.Errorf("plot %q is %.0f×%.0f px, want at least 400×150", p.Label, p.Width, p.Height)
		}
		// vgsvg draws the frame, ticks and grid as paths too; a plot with
		// data has more than its axes (2) and grid lines.
		if p.Points < 2 || p.Paths < 6 {
			t.Errorf("plot %q draws %d data points in %d visible paths, want data", p.Label, p.Points, p.Paths)
		}
		if p.Texts < 4 || p.Legend < 1 {
			t.Errorf("plot %q has %d texts and %d legend entries, want axis labels, ticks and a legend", p.Label, p.Texts, p.Legend)
		}
	}
	shot := wd.screenshot(t)
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	b := img.Bounds()
	if b.Dx() < 1000 || b.Dy() < 2000 {
		t.Errorf("screenshot is %d×%d px, want the whole page at 1280 px wide", b.Dx(), b.Dy())
	}
	// A blank page is one colour; a rendered report has text and plots in
	// several colours. Sample a grid of pixels.
	colours := map[[3]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
		}
	}
	if len(colours) < 20 {
		t.Errorf("screenshot has %d distinct colours, want a rendered page (≥ 20)", len(colours))
	}
	if keep := os.Getenv(artifactsEnv); keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
		html, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string][]byte{"report.html": html, "report.png": shot} {
			if err := os.WriteFile(filepath.Join(keep, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("report and screenshot kept in %s", keep)
	}
}

// TestBrowserCatchesErrors tests the test: a page that fails to load a
// resource must show up as a console message, so an empty log means the
// report loaded cleanly and not that nothing was listened to.
func TestBrowserCatchesErrors(t *testing.T) {
	chromium, driverPath := findBrowser(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "broken.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><head><title>broken</title></head><body><img src="missing.png" alt=""></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	wd := startDriver(t, driverPath, chromium, dir)
	if logs := wd.load(t, page); len(logs) == 0 {
		t.Errorf("a page with a missing image logged nothing; the console check would miss errors")
	}
}

// webDriver is a minimal W3C WebDriver client for chromedriver on
// loopback.
type webDriver struct {
	base    string // http://127.0.0.1:PORT/session/ID
	client  *http.Client
	timeout time.Duration
}

// startDriver starts chromedriver on a free loopback port and a Chromium
// session; both are stopped when the test ends.
func startDriver(t *testing.T, driverPath, chromium, dir string) *webDriver {
	t.Helper()
	// Port 0: chromedriver picks a free loopback port and prints it.
	cmd := exec.Command(driverPath, "--port=0", "--allowed-ips=127.0.0.1", "--log-level=SEVERE")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // Chromium joins the group and goes with it
	out := &portWatcher{port: make(chan int, 1)}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromedriver: %v", err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	var port int
	select {
	case port = <-out.port:
	case <-time.After(20 * time.Second):
		t.Fatalf("chromedriver did not say its port within 20 s; its output:\n%s", out)
	}
	wd := &webDriver{base: fmt.Sprintf("http://127.0.0.1:%d", port), client: &http.Client{Timeout: 60 * time.Second}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		var status struct {
			Ready bool `json:"ready"`
		}
		if err := wd.call(http.MethodGet, "/status", nil, &status); err == nil && status.Ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("chromedriver on port %d not ready after 20 s; its output:\n%s", port, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName": "chrome",
		"goog:chromeOptions": map[string]any{
			"binary": chromium,
			"args":   append(append([]string{}, chromiumFlags...), "--user-data-dir="+filepath.Join(dir, "chromium-profile")),
		},
		"goog:loggingPrefs": map[string]string{"browser": "ALL"},
	}}}
	var session struct {
		SessionID string `json:"sessionId"`
	}
	if err := wd.call(http.MethodPost, "/session", caps, &session); err != nil {
		t.Fatalf("start Chromium through chromedriver: %v\n%s", err, out)
	}
	wd.base += "/session/" + session.SessionID
	t.Cleanup(func() { wd.call(http.MethodDelete, "", nil, nil) })
	return wd
}

// portLine is chromedriver's announcement of its port.
var portLine = regexp.MustCompile(`started successfully on port (\d+)`)

// portWatcher collects chromedriver's output and sends the port it
// announces.
type portWatcher struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	port chan int // buffered: one port
	sent bool
}

// Write implements io.Writer.
func (w *portWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if m := portLine.FindSubmatch(w.buf.Bytes()); m != nil && !w.sent {
		n, _ := strconv.Atoi(string(m[1])) // \d+ of a port number
		w.port <- n
		w.sent = true
	}
	return len(p), nil
}

// String returns the output so far.
func (w *portWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// call sends one WebDriver command and decodes its "value" into v.
func (wd *webDriver) call(method, path string, body, v any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, wd.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := wd.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return fmt.Errorf("%s %s: %s: %w", method, path, raw, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, env.Value)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(env.Value, v)
}

// load opens the page file, makes the window as tall as the page, and
// returns the browser's console messages (every level) since the session
// began.
func (wd *webDriver) load(t *testing.T, path string) []string {
	t.Helper()
	u := url.URL{Scheme: "file", Path: path}
	if err := wd.call(http.MethodPost, "/url", map[string]string{"url": u.String()}, nil); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	var height float64
	wd.exec(t, "return document.documentElement.scrollHeight;", &height)
	if err := wd.call(http.MethodPost, "/window/rect", map[string]float64{"width": 1280, "height": max(height+100, 2400)}, nil); err != nil {
		t.Fatalf("resize the window to the page: %v", err)
	}
	var entries []struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	}
	if err := wd.call(http.MethodPost, "/se/log", map[string]string{"type": "browser"}, &entries); err != nil {
		t.Fatalf("read the browser log: %v", err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Level+": "+e.Message)
	}
	return out
}

// exec runs a script in the page and decodes its result into v.
func (wd *webDriver) exec(t *testing.T, script string, v any) {
	t.Helper()
	if err := wd.call(http.MethodPost, "/execute/sync", map[string]any{"script": script, "args": []any{}}, v); err != nil {
		t.Fatalf("run script in the page: %v", err)
	}
}

// screenshot returns a PNG of the window.
func (wd *webDriver) screenshot(t *testing.T) []byte {
	t.Helper()
	var b64 string
	if err := wd.call(http.MethodGet, "/screenshot", nil, &b64); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("screenshot: %v", errors.Join(err))
	}
	return b
}
