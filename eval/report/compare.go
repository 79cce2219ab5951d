package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// compareID is the experiment id of the method comparison's result file
// (compare.jsonl of fedtopic experiment compare).
const compareID = "Compare"

// frontierPoint is one private model on the frontier: its method, the
// target ε per document (+Inf without noise) and its utility.
type frontierPoint struct {
	method string
	eps    float64
	perp   float64
}

// reference is a non-private model the private ones are measured against:
// a party alone or the pooled model.
type reference struct {
	name string
	perp float64
}

// compareResults is what the comparison's rows say, read once.
type compareResults struct {
	methods     []string // private methods in order of first appearance
	points      []frontierPoint
	parties     []reference
	pooled      *reference
	unreachable map[string][]float64 // method → targets no setting meets
	targets     []float64            // finite targets, ascending
	inf         bool                 // some method ran without noise
	maxDocLen   string
	clipEpsilon string // ε per document of the private quantile that chose the clip; "" when fixed
	vocabulary  string
	composed    []composedPoint
	smoothed    map[string]float64 // party → its own topics beside a uniform topic
}

// composedPoint is one party's composed model: its own topics beside a
// private method's federated topics at a target ε.
type composedPoint struct {
	method, party string
	eps           float64
	perp          float64
}

// readCompare collects the comparison's rows.
func readCompare(x experiment) compareResults {
	res := compareResults{unreachable: map[string][]float64{}, smoothed: map[string]float64{}}
	for _, row := range x.rows {
		role, method := row["role"].text, row["method"].text
		perp, hasPerp := row["perplexity"]
		switch role {
		case "setup":
			if c, ok := row["max_doc_length"]; ok {
				res.maxDocLen = c.text
			} else if c, ok := row["clip"]; ok {
				res.maxDocLen = c.text
			}
			if c, ok := row["clip_epsilon"]; ok && c.isNum {
				res.clipEpsilon = fmt.Sprintf("%.4g", c.num)
			}
			res.vocabulary = row["vocabulary"].text
		case "party":
			if hasPerp && perp.isNum {
				res.parties = append(res.parties, reference{name: row["party"].text + " alone", perp: perp.num})
			}
		case "pooled":
			if hasPerp && perp.isNum {
				res.pooled = &reference{name: "pooled (non-private)", perp: perp.num}
			}
		case "smoothed":
			if hasPerp && perp.isNum {
				res.smoothed[row["party"].text] = perp.num
			}
		case "composed":
			t := row["target_epsilon"]
			if t.isNum && hasPerp && perp.isNum {
				res.composed = append(res.composed, composedPoint{method: method, party: row["party"].text, eps: t.num, perp: perp.num})
			}
		case "private":
			t := row["target_epsilon"]
			eps := t.num
			if !t.isNum {
				if t.text != "inf" {
					continue
				}
				eps = math.Inf(1)
			}
			res.methods = appendNew(res.methods, method)
			if row["status"].text == "unreachable" {
				res.unreachable[method] = append(res.unreachable[method], eps)
				continue
			}
			if !hasPerp || !perp.isNum {
				continue
			}
			res.points = append(res.points, frontierPoint{method: method, eps: eps, perp: perp.num})
			if math.IsInf(eps, 1) {
				res.inf = true
			} else if !slices.Contains(res.targets, eps) {
				res.targets = append(res.targets, eps)
			}
		}
	}
	slices.Sort(res.targets)
	return res
}

// compareSection shows every comparison found: the privacy–utility
// frontier and the recommendation computed from it.
func compareSection(runs []*run) (section, error) {
	s := section{ID: "compare", Title: "Which method?"}
	n := 0
	for _, r := range runs {
		for _, x := range r.exps {
			if x.id != compareID {
				continue
			}
			n++
			file := x.name
			if r.name != "" {
				file = r.name + "/" + x.name
			}
			res := readCompare(x)
			b := block{Heading: "Privacy–utility frontier — " + file}
			b.Paras = append(b.Paras, recommendation(res))
			if len(res.points) > 0 {
				fig, err := frontierChart(res, file, n).draw()
				if err != nil {
					return s, err
				}
				b.Figures = []figure{fig}
			}
			if t, ok := frontierTable(res); ok {
				b.Tables = []table{t}
			}
			var notes []string
			switch {
			case res.maxDocLen != "" && res.clipEpsilon != "":
				notes = append(notes, fmt.Sprintf("Every private method clipped documents to %s tokens, chosen by a private quantile at ε = %s per document, included in every ε shown.", res.maxDocLen, res.clipEpsilon))
			case res.maxDocLen != "":
				notes = append(notes, fmt.Sprintf("Every private method clipped documents to %s tokens.", res.maxDocLen))
			}
			if res.vocabulary != "" {
				notes = append(notes, "Vocabulary: "+res.vocabulary+".")
			}
			b.Notes = append(b.Notes, strings.Join(notes, " "))
			s.Blocks = append(s.Blocks, b)
		}
	}
	if n > 0 {
		s.Intro = []string{"Every private method was calibrated to each target ε per document by its own privacy accounting, tuned on development documents and measured on held-out documents; each party alone and the pooled data are the non-private references. Lower perplexity is better."}
	}
	return s, nil
}

// infX is where ε = ∞ is drawn: one step beyond the largest finite target
// on the logarithmic axis.
func infX(res compareResults) float64 {
	if len(res.targets) == 0 {
		return 1
	}
	return res.targets[len(res.targets)-1] * 3
}

// frontierChart plots perplexity against the target ε, one line per
// method, the references as horizontal lines.
func frontierChart(res compareResults, file string, n int) chart {
	c := chart{id: fmt.Sprintf("compare-%d", n), title: "Held-out perplexity against the privacy budget",
		xLabel: "ε per document (target)", yLabel: "Held-out perplexity", logX: true}
	for i, m := range res.methods {
		sr := series{name: m, style: i}
		for _, p := range res.points {
			if p.method != m {
				continue
			}
			x := p.eps
			if math.IsInf(x, 1) {
				x = infX(res)
			}
			sr.xs, sr.ys = append(sr.xs, x), append(sr.ys, p.perp)
		}
		if len(sr.xs) > 0 {
			c.series = append(c.series, sr)
		}
	}
	style := len(res.methods)
	for _, ref := range res.parties {
		c.refs = append(c.refs, refLine{name: ref.name, y: ref.perp, style: style})
		style++
	}
	if res.pooled != nil {
		c.refs = append(c.refs, refLine{name: res.pooled.name, y: res.pooled.perp, style: style})
	}
	c.caption = fmt.Sprintf("From %s: one line per private method; horizontal lines are each party alone and the pooled model, all non-private.", file)
	if res.inf {
		c.caption += fmt.Sprintf(" The points at ε = %s are the methods without noise (ε = ∞).", formatNumber(infX(res)))
	}
	return c
}

// frontierTable lists each method's perplexity at every target.
func frontierTable(res compareResults) (table, bool) {
	if len(res.methods) == 0 {
		return table{}, false
	}
	t := table{Caption: "Held-out perplexity by method and target ε per document", Head: []string{"method"}, Num: []bool{false}}
	cols := slices.Clone(res.targets)
	if res.inf {
		cols = append(cols, math.Inf(1))
	}
	for _, e := range cols {
		t.Head = append(t.Head, "ε = "+epsText(e))
		t.Num = append(t.Num, true)
	}
	for _, m := range res.methods {
		row := []string{m}
		for _, e := range cols {
			cell := "—"
			for _, p := range res.points {
				if p.method == m && p.eps == e {
					cell = formatNumber(p.perp)
				}
			}
			if slices.Contains(res.unreachable[m], e) {
				cell = "unreachable"
			}
			row = append(row, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	for _, ref := range append(slices.Clone(res.parties), derefAll(res.pooled)...) {
		row := []string{ref.name}
		for range cols {
			row = append(row, formatNumber(ref.perp))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, true
}

// derefAll returns the reference r points to, if any.
func derefAll(r *reference) []reference {
	if r == nil {
		return nil
	}
	return []reference{*r}
}

// epsText writes a target ε: "4", "∞".
func epsText(e float64) string {
	if math.IsInf(e, 1) {
		return "∞"
	}
	return formatNumber(e)
}

// recommendation is the plain-words answer: at each finite target, the
// best private method and whether it beats every party alone and the
// pooled model; then which budgets were out of reach.
func recommendation(res compareResults) string {
	if len(res.parties) == 0 || len(res.targets) == 0 {
		return "The file holds no private model at a finite budget or no party's own model, so no recommendation can be made."
	}
	best := res.parties[0]
	for _, p := range res.parties[1:] {
		if p.perp < best.perp {
			best = p
		}
	}
	var sents []string
	var first float64 // the smallest target at which some method beats every party
	for _, e := range res.targets {
		var winner *frontierPoint
		var beaten []string
		for i, p := range res.points {
			if p.eps != e {
				continue
			}
			if winner == nil || p.perp < winner.perp {
				winner = &res.points[i]
			}
			if p.perp < best.perp {
				beaten = append(beaten, p.method)
			}
		}
		if winner == nil {
			sents = append(sents, fmt.Sprintf("At ε = %s per document no method could run.", epsText(e)))
			continue
		}
		switch {
		case len(beaten) > 0:
			if first == 0 {
				first = e
			}
			sent := fmt.Sprintf("At ε = %s per document, %s beats every party alone on held-out perplexity (%s against %s for %s, the best party)",
				epsText(e), winner.method, formatNumber(winner.perp), formatNumber(best.perp), strings.TrimSuffix(best.name, " alone"))
			if len(beaten) > 1 {
				sent += fmt.Sprintf("; so do %s", strings.Join(slices.DeleteFunc(beaten, func(m string) bool { return m == winner.method }), ", "))
			}
			sents = append(sents, sent+".")
		default:
			sents = append(sents, fmt.Sprintf("At ε = %s per document, no method beats every party alone: the best, %s, has perplexity %s against %s for %s alone (%.0f%% higher).",
				epsText(e), winner.method, formatNumber(winner.perp), formatNumber(best.perp), strings.TrimSuffix(best.name, " alone"), 100*(winner.perp/best.perp-1)))
		}
	}
	composed, joinAt, joinWith := composedSentences(res)
	sents = append(sents, composed...)
	switch {
	case first > 0:
		sents = append(sents, fmt.Sprintf("Recommendation: with a budget of at least ε = %s per document, use the method named there; below it, each party is better served by its own model.", epsText(first)))
	case joinAt > 0:
		sents = append(sents, fmt.Sprintf("Recommendation: no federated model alone beats %s's own, but with a budget of at least ε = %s per document every party gains by joining %s and keeping its own topics beside the federated ones.",
			strings.TrimSuffix(best.name, " alone"), epsText(joinAt), joinWith))
	default:
		sents = append(sents, fmt.Sprintf("Recommendation: at these budgets no private method is worth joining for held-out perplexity; each party's own model is better, and %s alone is the best of them.", strings.TrimSuffix(best.name, " alone")))
	}
	if res.pooled != nil {
		sents = append(sents, fmt.Sprintf("Without privacy, the pooled model reaches %s.", formatNumber(res.pooled.perp)))
	}
	var unreach []string
	for _, m := range res.methods {
		if es := res.unreachable[m]; len(es) > 0 {
			var ts []string
			for _, e := range es {
				ts = append(ts, epsText(e))
			}
			unreach = append(unreach, fmt.Sprintf("%s at ε = %s", m, strings.Join(ts, ", ")))
		}
	}
	if len(unreach) > 0 {
		sents = append(sents, "Out of reach at any setting: "+strings.Join(unreach, "; ")+".")
	}
	return strings.Join(sents, " ")
}

// composedSentences says, at each finite target, whether joining pays for
// every party that keeps its own model: the method whose composed models
// (a party's own topics beside the federated ones) beat their parties
// alone for the most parties, ties broken by the smallest mean ratio. It
// also returns the smallest target at which every party gains, and with
// which method (0 and "" if none).
func composedSentences(res compareResults) ([]string, float64, string) {
	// A party's reference is the better of its own model and its own
	// topics beside a uniform topic, which it can have without joining.
	alone, ref := map[string]float64{}, map[string]string{}
	for _, p := range res.parties {
		id := strings.TrimSuffix(p.name, " alone")
		alone[id], ref[id] = p.perp, formatNumber(p.perp)
		if sm, ok := res.smoothed[id]; ok {
			ref[id] = fmt.Sprintf("%s, %s smoothed", formatNumber(p.perp), formatNumber(sm))
			alone[id] = min(p.perp, sm)
		}
	}
	var (
		sents    []string
		joinAt   float64
		joinWith string
	)
	for _, e := range res.targets {
		type score struct {
			method       string
			wins         int
			ratio        float64
			n            int
			better, diff []string
		}
		var best *score
		for _, m := range res.methods {
			s := score{method: m}
			for _, c := range res.composed {
				a, ok := alone[c.party]
				if c.method != m || c.eps != e || !ok {
					continue
				}
				s.n++
				s.ratio += c.perp / a
				s.diff = append(s.diff, fmt.Sprintf("%s %s → %s (%+.1f%%)", c.party, ref[c.party], formatNumber(c.perp), 100*(c.perp/a-1)))
				if c.perp < a*(1-composedMargin) {
					s.wins++
					s.better = append(s.better, c.party)
				}
			}
			if s.n == 0 {
				continue
			}
			s.ratio /= float64(s.n)
			if best == nil || s.wins > best.wins || (s.wins == best.wins && s.ratio < best.ratio) {
				best = &s
			}
		}
		switch {
		case best == nil:
		case best.wins == best.n:
			if joinAt == 0 {
				joinAt, joinWith = e, best.method
			}
			sents = append(sents, fmt.Sprintf("At ε = %s per document, joining pays for every party that keeps its own model: its own topics beside %s's federated topics beat it alone%s by more than 1%% (%s).",
				epsText(e), best.method, smoothNote(res), strings.Join(best.diff, ", ")))
		case best.wins > 0:
			sents = append(sents, fmt.Sprintf("At ε = %s per document, a party's own topics beside %s's federated topics beat it alone by more than 1%% for %s only (%s).",
				epsText(e), best.method, strings.Join(best.better, ", "), strings.Join(best.diff, ", ")))
		default:
			sents = append(sents, fmt.Sprintf("At ε = %s per document, no party gains by adding any method's federated topics to its own (the closest, %s: %s).",
				epsText(e), best.method, strings.Join(best.diff, ", ")))
		}
	}
	return sents, joinAt, joinWith
}

// composedMargin is the least relative improvement over a party's
// reference that counts as a gain: one seed's held-out perplexity moves by
// about 1% between runs.
const composedMargin = 0.01

// smoothNote says what the composed models were also measured against
// when the file has the parties' smoothed models.
func smoothNote(res compareResults) string {
	if len(res.smoothed) == 0 {
		return ""
	}
	return ", and beat its own topics smoothed by a uniform topic"
}
