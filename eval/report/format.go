package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Metric keys the report knows how to label; others are shown by name.
const (
	MetricPerplexity    = "perplexity"     // document-completion perplexity, lower is better
	MetricLogLikelihood = "log_likelihood" // total held-out log-likelihood in nats, higher is better
)

// metricLabels are the axis and column labels of known metrics, with
// units and direction.
var metricLabels = map[string]string{
	MetricPerplexity:          "Held-out perplexity (lower is better)",
	MetricLogLikelihood:       "Held-out log-likelihood, nats (higher is better)",
	"held_out_log_likelihood": "Held-out log-likelihood, nats (higher is better)",
	"umass":                   "UMass coherence (higher is better)",
	"npmi":                    "NPMI coherence (higher is better)",
	"embedding_coherence":     "Embedding coherence (higher is better)",
	"diversity":               "Topic diversity (higher is better)",
	"topic_diversity":         "Topic diversity (higher is better)",
	"accuracy":                "Accuracy (higher is better)",
	"macro_f1":                "Macro F1 (higher is better)",
	"f1":                      "F1 (higher is better)",
	"auc":                     "ROC AUC (higher is better)",
}

// metricName is the short name of a metric in tables.
func metricName(key string) string {
	switch key {
	case MetricPerplexity:
		return "Perplexity"
	case MetricLogLikelihood, "held_out_log_likelihood":
		return "Log-likelihood (nats)"
	case "umass":
		return "UMass"
	case "npmi":
		return "NPMI"
	case "topic_diversity", "diversity":
		return "Diversity"
	}
	return strings.ReplaceAll(key, "_", " ")
}

// formatNumber shows x with four significant digits, without exponent
// for magnitudes between 1e-3 and 1e9, and ∞ for infinities.
func formatNumber(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "∞"
	case math.IsInf(x, -1):
		return "−∞"
	case math.IsNaN(x):
		return "—"
	case x == math.Trunc(x) && math.Abs(x) < 1e15:
		return groupDigits(strconv.FormatFloat(x, 'f', 0, 64))
	case math.Abs(x) >= 1e-3 && math.Abs(x) < 1e9:
		digits := max(0, 3-int(math.Floor(math.Log10(math.Abs(x)))))
		return groupDigits(strconv.FormatFloat(x, 'f', digits, 64))
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// groupDigits puts thin spaces between groups of three digits of the
// integer part of a formatted number of five or more digits.
func groupDigits(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "−", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if len(intPart) >= 5 {
		var b strings.Builder
		for i, c := range intPart {
			if i > 0 && (len(intPart)-i)%3 == 0 {
				b.WriteString("\u2009")
			}
			b.WriteRune(c)
		}
		intPart = b.String()
	}
	if hasFrac {
		return sign + intPart + "." + frac
	}
	return sign + intPart
}

// byteUnit is a decimal unit of bytes.
type byteUnit struct {
	name string
	size float64
}

// unitFor returns the largest decimal byte unit not above max (B at
// least).
func unitFor(maxBytes float64) byteUnit {
	units := []byteUnit{{"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}}
	for _, u := range units {
		if maxBytes >= u.size {
			return u
		}
	}
	return byteUnit{"B", 1}
}

// formatBytes shows n bytes in decimal units (1 kB = 1000 B).
func formatBytes(n int64) string {
	u := unitFor(float64(n))
	if u.size == 1 {
		return strconv.FormatInt(n, 10) + " B"
	}
	return strconv.FormatFloat(float64(n)/u.size, 'f', 1, 64) + " " + u.name
}

// formatEpsilon shows a privacy parameter; values beyond 1e300 stand for
// no privacy (JSON cannot carry +Inf).
func formatEpsilon(x float64) string {
	if x > 1e300 {
		return "∞"
	}
	return formatNumber(x)
}

// formatDelta shows δ: 0 as "0", small values in scientific notation.
func formatDelta(x float64) string {
	if x == 0 {
		return "0"
	}
	if x < 1e-3 {
		return strings.Replace(strconv.FormatFloat(x, 'g', 3, 64), "e-0", "e-", 1)
	}
	return formatNumber(x)
}

// formatDuration shows d rounded to a readable precision.
func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "—"
	case d < time.Millisecond:
		return d.String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(10 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// plural returns "n thing" or "n things".
func plural(n int, thing string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", thing)
	}
	if strings.HasSuffix(thing, "y") {
		thing = strings.TrimSuffix(thing, "y") + "ie"
	}
	return fmt.Sprintf("%s %ss", groupDigits(strconv.Itoa(n)), thing)
}
