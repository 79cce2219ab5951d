package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compareLines is a small comparison: two parties, the pooled model, two
// methods at ε = 1, 4 and ∞, one unreachable budget.
const compareLines = `{"plot": {"x": "doc_epsilon", "y": "perplexity", "series": ["method"]}}
{"role": "setup", "max_doc_length": 16, "vocabulary": "public: 100 words"}
{"role": "party", "method": "lda", "party": "p1", "perplexity": 900}
{"role": "party", "method": "lda", "party": "p2", "perplexity": 700}
{"role": "pooled", "method": "lda", "perplexity": 500}
{"role": "private", "method": "pctd-ssp", "target_epsilon": 1, "doc_epsilon": 1, "perplexity": 800}
{"role": "private", "method": "pctd-ssp", "target_epsilon": 4, "doc_epsilon": 4, "perplexity": 650}
{"role": "private", "method": "pctd-ssp", "target_epsilon": "inf", "perplexity": 520}
{"role": "private", "method": "ftm", "target_epsilon": 1, "status": "unreachable", "reason": "costs more"}
{"role": "private", "method": "ftm", "target_epsilon": 4, "doc_epsilon": 4, "perplexity": 690}
{"role": "private", "method": "ftm", "target_epsilon": "inf", "perplexity": 600}
`

func TestCompareFileName(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{{"compare.jsonl", true}, {"compare-wordnet.jsonl", true}, {"mycompare.jsonl", false}, {"compare.json", false}} {
		m := experimentFile.FindStringSubmatch(tt.name)
		if got := m != nil && m[3] != ""; got != tt.want {
			t.Errorf("%q read as the comparison: %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestCompareRecommendation(t *testing.T) {
	x, err := decodeExperiment(strings.NewReader(compareLines))
	if err != nil {
		t.Fatal(err)
	}
	got := recommendation(readCompare(x))
	for _, want := range []string{
		"At ε = 1 per document, no method beats every party alone: the best, pctd-ssp, has perplexity 800 against 700 for p2 alone (14% higher).",
		"At ε = 4 per document, pctd-ssp beats every party alone on held-out perplexity (650 against 700 for p2, the best party); so do ftm.",
		"Recommendation: with a budget of at least ε = 4 per document",
		"Without privacy, the pooled model reaches 500.",
		"Out of reach at any setting: ftm at ε = 1.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("recommendation = %q; want it to contain %q", got, want)
		}
	}
	// Without any winner the advice is to stay alone.
	x, err = decodeExperiment(strings.NewReader(strings.ReplaceAll(compareLines, `"perplexity": 650`, `"perplexity": 750`)))
	if err != nil {
		t.Fatal(err)
	}
	x.rows = x.rows[:len(x.rows)-2] // drop ftm at 4 and ∞
	got = recommendation(readCompare(x))
	if want := "no private method is worth joining"; !strings.Contains(got, want) {
		t.Errorf("recommendation = %q; want it to contain %q", got, want)
	}
}

func TestCompareSectionRendered(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "compare.jsonl"), []byte(compareLines), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(context.Background(), &buf, []string{dir}, Options{}); err != nil {
		t.Fatalf("Write = %v", err)
	}
	html := buf.String()
	for _, want := range []string{"Which method?", "Privacy–utility frontier", "p2 alone", "pooled (non-private)", "unreachable", "ε = ∞", "clipped documents to 16 tokens"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestCompareClipNote: the note on the clip says when a private quantile
// chose it, at what ε, and that every ε shown includes it; a fixed clip
// gets no such words.
func TestCompareClipNote(t *testing.T) {
	const fixed = `{"role": "setup", "max_doc_length": 16, "vocabulary": "public: 100 words"}`
	for _, tt := range []struct {
		name, setup string
		want        string
		absent      string
	}{
		{"fixed", fixed, "Every private method clipped documents to 16 tokens.", "private quantile"},
		{"private quantile",
			`{"role": "setup", "max_doc_length": 29, "clip": 29, "clip_source": "private quantile", "clip_quantile": 0.95, "clip_epsilon": 0.1, "clip_max": 1000, "clip_releases": {"p1": 29, "p2": 31}, "vocabulary": "public: 100 words"}`,
			"Every private method clipped documents to 29 tokens, chosen by a private quantile at ε = 0.1 per document, included in every ε shown.", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			x, err := decodeExperiment(strings.NewReader(strings.Replace(compareLines, fixed, tt.setup, 1)))
			if err != nil {
				t.Fatal(err)
			}
			x.id = compareID
			s, err := compareSection([]*run{{exps: []experiment{x}}})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Blocks) != 1 || len(s.Blocks[0].Notes) != 1 {
				t.Fatalf("section %+v; want one block with one note", s.Blocks)
			}
			got := s.Blocks[0].Notes[0]
			if !strings.Contains(got, tt.want) {
				t.Errorf("note = %q; want it to contain %q", got, tt.want)
			}
			if tt.absent != "" && strings.Contains(got, tt.absent) {
				t.Errorf("note = %q; want no %q", got, tt.absent)
			}
		})
	}
}

// TestCompareComposedRecommendation checks the advice when no federated
// model beats the best party but the parties' composed models (their own
// topics beside the federated ones) beat them alone: for every party at
// ε = 4, for one party at ε = 1.
func TestCompareComposedRecommendation(t *testing.T) {
	lines := strings.ReplaceAll(compareLines, `"perplexity": 650`, `"perplexity": 750`)
	lines = strings.ReplaceAll(lines, `"doc_epsilon": 4, "perplexity": 690`, `"doc_epsilon": 4, "perplexity": 790`)
	lines += `{"role": "composed", "method": "pctd-ssp", "party": "p1", "target_epsilon": 1, "perplexity": 850}
{"role": "composed", "method": "pctd-ssp", "party": "p2", "target_epsilon": 1, "perplexity": 710}
{"role": "composed", "method": "pctd-ssp", "party": "p1", "target_epsilon": 4, "perplexity": 820}
{"role": "composed", "method": "pctd-ssp", "party": "p2", "target_epsilon": 4, "perplexity": 680}
{"role": "composed", "method": "ftm", "party": "p1", "target_epsilon": 4, "perplexity": 890}
{"role": "composed", "method": "ftm", "party": "p2", "target_epsilon": 4, "perplexity": 699}
`
	x, err := decodeExperiment(strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	got := recommendation(readCompare(x))
	for _, want := range []string{
		"At ε = 1 per document, a party's own topics beside pctd-ssp's federated topics beat it alone by more than 1% for p1 only (p1 900 → 850 (-5.6%), p2 700 → 710 (+1.4%)).",
		"At ε = 4 per document, joining pays for every party that keeps its own model: its own topics beside pctd-ssp's federated topics beat it alone by more than 1% (p1 900 → 820 (-8.9%), p2 700 → 680 (-2.9%)).",
		"Recommendation: no federated model alone beats p2's own, but with a budget of at least ε = 4 per document every party gains by joining pctd-ssp and keeping its own topics beside the federated ones.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("recommendation = %q; want it to contain %q", got, want)
		}
	}
	if strings.Contains(got, "no private method is worth joining") {
		t.Errorf("recommendation = %q; advises against joining although every party gains at ε = 4", got)
	}
}

// TestCompareComposedAgainstSmoothed checks that a composed model is
// measured against the party's own topics smoothed by a uniform topic,
// which the party can have without joining: beating the bare model alone
// is not enough.
func TestCompareComposedAgainstSmoothed(t *testing.T) {
	lines := compareLines + `{"role": "smoothed", "method": "lda+uniform", "party": "p1", "perplexity": 830}
{"role": "smoothed", "method": "lda+uniform", "party": "p2", "perplexity": 690}
{"role": "composed", "method": "pctd-ssp", "party": "p1", "target_epsilon": 4, "perplexity": 820}
{"role": "composed", "method": "pctd-ssp", "party": "p2", "target_epsilon": 4, "perplexity": 695}
`
	x, err := decodeExperiment(strings.NewReader(lines))
	if err != nil {
		t.Fatal(err)
	}
	got := recommendation(readCompare(x))
	want := "At ε = 4 per document, a party's own topics beside pctd-ssp's federated topics beat it alone by more than 1% for p1 only (p1 900, 830 smoothed → 820 (-1.2%), p2 700, 690 smoothed → 695 (+0.7%))."
	if !strings.Contains(got, want) {
		t.Errorf("recommendation = %q; want it to contain %q", got, want)
	}
	// Less than 1% better than the reference is not a gain.
	almost := strings.Replace(lines, `"party": "p2", "target_epsilon": 4, "perplexity": 695`, `"party": "p2", "target_epsilon": 4, "perplexity": 686`, 1)
	if x, err = decodeExperiment(strings.NewReader(almost)); err != nil {
		t.Fatal(err)
	}
	if got, want := recommendation(readCompare(x)), "for p1 only (p1 900, 830 smoothed → 820 (-1.2%), p2 700, 690 smoothed → 686 (-0.6%))."; !strings.Contains(got, want) {
		t.Errorf("recommendation = %q; want it to contain %q", got, want)
	}
	lines = strings.Replace(lines, `"party": "p2", "target_epsilon": 4, "perplexity": 695`, `"party": "p2", "target_epsilon": 4, "perplexity": 680`, 1)
	if x, err = decodeExperiment(strings.NewReader(lines)); err != nil {
		t.Fatal(err)
	}
	got = recommendation(readCompare(x))
	want = "joining pays for every party that keeps its own model: its own topics beside pctd-ssp's federated topics beat it alone, and beat its own topics smoothed by a uniform topic by more than 1% (p1 900, 830 smoothed → 820 (-1.2%), p2 700, 690 smoothed → 680 (-1.4%))."
	if !strings.Contains(got, want) {
		t.Errorf("recommendation = %q; want it to contain %q", got, want)
	}
}
