package report

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
)

func TestDecodeRecord(t *testing.T) {
	const (
		r1       = `{"type": "round", "round": 1, "attempt": 1, "committed": true, "replied": ["a"], "bytes": [{"party": "a", "up": 10, "down": 20}], "metrics": {"perplexity": 900}}`
		r2       = `{"type": "round", "round": 2, "attempt": 1, "committed": true, "replied": ["a"], "metrics": {"perplexity": 800}, "duration_s": 1.5}`
		r2failed = `{"type": "round", "round": 2, "attempt": 1, "committed": false, "dropped": ["a"], "error": "quorum"}`
		r2replay = `{"type": "round", "round": 2, "attempt": 2, "committed": true, "metrics": {"perplexity": 790}}`
		sum      = `{"type": "summary", "algorithm": "ftm", "parties": ["a"], "epsilon": [{"party": "a", "epsilon": 3, "delta": 1e-6, "releases": 3}]}`
	)
	tests := []struct {
		name                string
		in                  string
		wantRounds          []int
		wantFailed          int
		wantSummary         bool
		wantErr             string
		wantFirstPerplexity float64
		wantNotes           int
	}{
		{name: "rounds and summary", in: r1 + "\n" + r2 + "\n" + sum + "\n", wantRounds: []int{1, 2}, wantSummary: true, wantFirstPerplexity: 900},
		{name: "blank lines and no final newline", in: "\n" + r1 + "\n\n" + r2, wantRounds: []int{1, 2}, wantFirstPerplexity: 900},
		{name: "failed attempt kept apart", in: r1 + "\n" + r2failed + "\n" + r2, wantRounds: []int{1, 2}, wantFailed: 1, wantFirstPerplexity: 900},
		{name: "replayed round replaces the first record", in: r1 + "\n" + r2 + "\n" + r2replay + "\n", wantRounds: []int{1, 2}, wantFirstPerplexity: 900, wantNotes: 1},
		{name: "lines without a type", in: `{"round": 1, "committed": true}`, wantRounds: []int{1}},
		{name: "rounds sorted", in: r2 + "\n" + r1, wantRounds: []int{1, 2}, wantFirstPerplexity: 900},
		{name: "summary only", in: sum, wantSummary: true},
		{name: "empty", in: "\n\n", wantErr: "rec.jsonl: no rounds and no summary"},
		{name: "not JSON", in: r1 + "\nround 2\n", wantErr: "rec.jsonl line 2: not a JSON object"},
		{name: "neither round nor summary", in: `{"hello": 1}`, wantErr: `line 1: line of type ""`},
		{name: "unknown type", in: `{"type": "party", "round": 1}`, wantErr: `line 1: line of type "party"`},
		{name: "line after summary", in: sum + "\n" + r1, wantErr: "line 2: a line after the summary line"},
		{name: "negative bytes", in: `{"type": "round", "round": 1, "committed": true, "bytes": [{"party": "a", "up": -1}]}`, wantErr: "want a party and byte counts ≥ 0"},
		{name: "negative duration", in: `{"type": "round", "round": 1, "committed": true, "duration_s": -2}`, wantErr: "duration -2 s"},
		{name: "bad privacy event", in: `{"type": "round", "round": 1, "committed": true, "spent": [{"party": "a", "events": [{"mechanism": "laplace", "count": 1}]}]}`, wantErr: `party a: privacy: event "laplace"`},
		{name: "bad spend", in: `{"type": "round", "round": 1, "committed": true, "epsilon": [{"party": "a", "epsilon": -1}]}`, wantErr: "party a: ε = -1"},
		{name: "summary of the wrong shape", in: `{"type": "summary", "parties": [{"id": "a"}]}`, wantErr: "line 1: summary: json"},
		{name: "model outside the run directory", in: `{"type": "summary", "models": {"global": "../other/model"}}`, wantErr: `model path "../other/model"`},
		{name: "wrong type", in: `{"type": "round", "round": "one"}`, wantErr: "line 1: round line: json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec, err := decodeRecord(strings.NewReader(tt.in), "rec.jsonl")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("decodeRecord = %v; want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeRecord: %v", err)
			}
			var got []int
			for _, rl := range rec.rounds {
				got = append(got, rl.Round)
			}
			if !slices.Equal(got, tt.wantRounds) || len(rec.failed) != tt.wantFailed || (rec.summary != nil) != tt.wantSummary {
				t.Errorf("decodeRecord: rounds %v, %d failed, summary %v; want %v, %d, %v", got, len(rec.failed), rec.summary != nil, tt.wantRounds, tt.wantFailed, tt.wantSummary)
			}
			if len(rec.notes) != tt.wantNotes {
				t.Errorf("decodeRecord notes = %q, want %d", rec.notes, tt.wantNotes)
			}
			if len(rec.rounds) > 0 && rec.rounds[0].Metrics[MetricPerplexity] != tt.wantFirstPerplexity {
				t.Errorf("round %d perplexity = %v, want %v", rec.rounds[0].Round, rec.rounds[0].Metrics[MetricPerplexity], tt.wantFirstPerplexity)
			}
		})
	}
}

// TestRunAccessors checks what the sections read from a record: metric
// series, traffic, privacy spend and release counts.
func TestRunAccessors(t *testing.T) {
	in := `{"type": "round", "round": 1, "attempt": 1, "committed": true, "replied": ["a", "b"], "bytes": [{"party": "a", "up": 10, "down": 20}, {"party": "b", "up": 1, "down": 2}], "metrics": {"perplexity": 900}, "party_metrics": [{"party": "b", "metrics": {"perplexity": 950}}], "spent": [{"party": "a", "events": [{"mechanism": "laplace", "epsilon": 0.5, "unit": "word occurrence", "count": 3}]}], "epsilon": [{"party": "a", "epsilon": 1.5, "unit": "word occurrence", "accountant": "pure", "releases": 3}, {"party": "b", "epsilon": 0, "releases": 0}]}
{"type": "round", "round": 2, "attempt": 1, "committed": false, "replied": ["a"], "dropped": ["b"], "bytes": [{"party": "a", "up": 100, "down": 0}], "spent": [{"party": "a", "events": [{"mechanism": "laplace", "epsilon": 0.5, "unit": "word occurrence", "count": 3}]}]}
{"type": "round", "round": 2, "attempt": 2, "committed": true, "replied": ["a", "b"], "bytes": [{"party": "a", "up": 30, "down": 40}], "metrics": {"perplexity": 700}, "spent": [{"party": "a", "events": [{"mechanism": "rrp", "epsilon": 1, "delta": 1e-6, "unit": "word occurrence", "count": 1, "assumption": "Zipf-like topics"}]}], "epsilon": [{"party": "a", "epsilon": 4, "delta": 1e-6, "unit": "word occurrence", "accountant": "basic", "releases": 7}, {"party": "b", "error": "no events"}]}
`
	rec, err := decodeRecord(strings.NewReader(in), "run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r := &run{rec: rec}
	r.parties = partyOrder(r)
	if want := []string{"a", "b"}; !slices.Equal(r.parties, want) {
		t.Errorf("parties = %v, want %v", r.parties, want)
	}
	xs, ys := r.metricSeries(MetricPerplexity)
	if !slices.Equal(xs, []float64{1, 2}) || !slices.Equal(ys, []float64{900, 700}) {
		t.Errorf("metricSeries = %v, %v; want [1 2], [900 700]", xs, ys)
	}
	if v, ok := r.finalMetric(MetricPerplexity); !ok || v != 700 {
		t.Errorf("finalMetric = %v, %v; want 700, true", v, ok)
	}
	if v, ok := r.finalPartyMetric("b", MetricPerplexity); !ok || v != 950 {
		t.Errorf("finalPartyMetric(b) = %v, %v; want 950, true", v, ok)
	}
	if _, ok := r.finalPartyMetric("a", MetricPerplexity); ok {
		t.Errorf("finalPartyMetric(a) found a metric; party a recorded none")
	}
	_, up, down := r.partyBytes("a")
	if !slices.Equal(up, []int64{10, 30}) || !slices.Equal(down, []int64{20, 40}) {
		t.Errorf("partyBytes(a) = %v, %v; want [10 30], [20 40] (committed rounds only)", up, down)
	}
	if got, want := r.totalBytes(), int64(10+20+1+2+100+30+40); got != want {
		t.Errorf("totalBytes = %d, want %d (failed attempts included)", got, want)
	}
	sp := r.partySpend("a")
	if !sp.known || sp.epsilon != 4 || sp.delta != 1e-6 || sp.releases != 7 || sp.accountant != "basic" || sp.unit != "word occurrence" {
		t.Errorf("partySpend(a) = %+v; want ε 4, δ 1e-6, 7 releases, accountant basic, unit word occurrence from the last round", sp)
	}
	if !slices.Equal(sp.mechanisms, []string{"laplace", "rrp"}) || !slices.Equal(sp.assumptions, []string{"Zipf-like topics"}) {
		t.Errorf("partySpend(a) mechanisms %v, assumptions %v; want [laplace rrp], [Zipf-like topics]", sp.mechanisms, sp.assumptions)
	}
	if sp := r.partySpend("b"); sp.known || sp.releases != 0 || sp.problem != "no events" {
		t.Errorf("partySpend(b) = %+v; want the accountant's problem and nothing known", sp)
	}
	if eps, ok := r.maxEpsilon(); !ok || eps != 4 {
		t.Errorf("maxEpsilon = %v, %v; want 4, true", eps, ok)
	}
}

func TestDecodeExperiment(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		wantCols   []string
		wantSpec   plotSpec
		wantPlot   bool
		wantSeries []string
		wantErr    string
	}{
		{
			name:       "inferred axes and series",
			in:         `{"method": "ftm", "epsilon": 8, "tau": 0.2, "perplexity": 700}` + "\n" + `{"method": "ftm", "epsilon": 9, "tau": 0.2, "perplexity": 650, "seed": 3}`,
			wantCols:   []string{"method", "epsilon", "tau", "perplexity", "seed"},
			wantSpec:   plotSpec{X: "epsilon", Y: "perplexity", Series: []string{"method"}, XLabel: "ε per party", YLabel: metricLabels[MetricPerplexity]},
			wantPlot:   true,
			wantSeries: []string{"ftm"},
		},
		{
			name:       "plot line chooses axes",
			in:         `{"plot": {"x": "tau", "y": "perplexity", "series": ["epsilon"]}}` + "\n" + `{"epsilon": 8, "tau": 0.1, "perplexity": 700}` + "\n" + `{"epsilon": 9, "tau": 0.1, "perplexity": 650}`,
			wantCols:   []string{"epsilon", "tau", "perplexity"},
			wantSpec:   plotSpec{X: "tau", Y: "perplexity", Series: []string{"epsilon"}, XLabel: "Threshold τ", YLabel: metricLabels[MetricPerplexity]},
			wantPlot:   true,
			wantSeries: []string{"epsilon 8", "epsilon 9"},
		},
		{
			name:     "no numeric pair",
			in:       `{"method": "ftm", "note": "ok"}`,
			wantCols: []string{"method", "note"},
		},
		{name: "not an object", in: `{"a": 1}` + "\n" + `[1]`, wantErr: "line 2: not a JSON object"},
		{name: "duplicate key", in: `{"a": 1, "a": 2}`, wantErr: `line 1: key "a" appears twice`},
		{name: "empty", in: "\n", wantErr: "holds no result lines"},
		{name: "bad plot line", in: `{"plot": {"x": 3}}`, wantErr: "line 1: plot: json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := decodeExperiment(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("decodeExperiment = %v; want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeExperiment: %v", err)
			}
			if !slices.Equal(x.cols, tt.wantCols) {
				t.Errorf("columns = %v, want %v", x.cols, tt.wantCols)
			}
			spec, ok := x.resolvedSpec()
			if ok != tt.wantPlot {
				t.Fatalf("resolvedSpec ok = %v, want %v (spec %+v)", ok, tt.wantPlot, spec)
			}
			if !ok {
				return
			}
			if spec.X != tt.wantSpec.X || spec.Y != tt.wantSpec.Y || !slices.Equal(spec.Series, tt.wantSpec.Series) || spec.XLabel != tt.wantSpec.XLabel || spec.YLabel != tt.wantSpec.YLabel {
				t.Errorf("resolvedSpec = %+v, want %+v", spec, tt.wantSpec)
			}
			var series []string
			for _, row := range x.rows {
				series = appendNew(series, spec.seriesOf(row))
			}
			if !slices.Equal(series, tt.wantSeries) {
				t.Errorf("series = %v, want %v", series, tt.wantSeries)
			}
		})
	}
}

func TestExperimentFileNames(t *testing.T) {
	tests := []struct {
		name string
		want string // experiment id, "" if not an experiment file
	}{
		{"e1.jsonl", "1"}, {"E8.jsonl", "8"}, {"e3-bytes.jsonl", "3"}, {"e4_classify.jsonl", "4"},
		{"e9.jsonl", ""}, {"run.jsonl", ""}, {"e12.jsonl", ""}, {"e1.json", ""},
		{"attacks.jsonl", "attacks"}, {"attacks-long.jsonl", "attacks"}, {"myattacks.jsonl", ""},
	}
	for _, tt := range tests {
		m := experimentFile.FindStringSubmatch(tt.name)
		got := ""
		if m != nil {
			got = m[1] + m[2]
		}
		if got != tt.want {
			t.Errorf("experiment id of %q = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"integer", formatNumber(650), "650"},
		{"grouped integer", formatNumber(-49007), "−49\u2009007"},
		{"four significant digits", formatNumber(457.61), "457.6"},
		{"small", formatNumber(0.0123456), "0.01235"},
		{"tiny", formatNumber(1.5e-7), "1.5e-07"},
		{"infinite", formatNumber(math.Inf(1)), "∞"},
		{"bytes", formatBytes(999), "999 B"},
		{"kilobytes", formatBytes(85_049), "85.0 kB"},
		{"megabytes", formatBytes(3_300_000), "3.3 MB"},
		{"epsilon", formatEpsilon(2.59441), "2.594"},
		{"no privacy", formatEpsilon(math.MaxFloat64), "∞"},
		{"delta", formatDelta(1e-6), "1e-6"},
		{"zero delta", formatDelta(0), "0"},
		{"duration", formatDuration(1234567 * time.Microsecond), "1.23s"},
		{"plural", plural(3, "directory"), "3 directories"},
		{"singular", plural(1, "topic"), "1 topic"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestTicks(t *testing.T) {
	labels := func(ts []plot.Tick) []string {
		var out []string
		for _, tk := range ts {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	tests := []struct {
		name   string
		ticker plot.Ticker
		lo, hi float64
		want   []string
	}{
		{"rounds 1 to 10", intTicks{}, 1, 10, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}},
		{"rounds 1 to 40", intTicks{}, 1, 40, []string{"5", "10", "15", "20", "25", "30", "35", "40"}},
		{"rounds 0 to 300", intTicks{}, 0, 300, []string{"0", "50", "100", "150", "200", "250", "300"}},
		{"perplexity", niceTicks{}, 444.9, 871.3, []string{"500", "600", "700", "800"}},
		{"log-likelihood", niceTicks{}, -54100, -48700, []string{"−54\u2009000", "−53\u2009000", "−52\u2009000", "−51\u2009000", "−50\u2009000", "−49\u2009000"}},
		{"quarter steps", niceTicks{}, 0, 1.4, []string{"0.00", "0.25", "0.50", "0.75", "1.00", "1.25"}},
		{"from zero", niceTicks{}, 0, 125, []string{"0", "25", "50", "75", "100", "125"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := labels(tt.ticker.Ticks(tt.lo, tt.hi)); !slices.Equal(got, tt.want) {
				t.Errorf("Ticks(%v, %v) labels = %q, want %q", tt.lo, tt.hi, got, tt.want)
			}
		})
	}
}
