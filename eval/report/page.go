package report

import (
	"context"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fedtopic/fedtopic/fed"
	"github.com/fedtopic/fedtopic/privacy"
	"github.com/fedtopic/fedtopic/topic"
)

// page is what the template renders.
type page struct {
	Title    string
	Lead     []string
	CSS      template.CSS
	Sections []section
}

// section is one top-level part of the report, listed in its contents.
type section struct {
	ID, Title string
	Intro     []string
	Blocks    []block
}

// block is a titled group of paragraphs, definitions, figures and tables;
// a collapsed block is folded away under its heading.
type block struct {
	Heading   string
	Collapsed bool
	Paras     []string
	Defs      []def
	Figures   []figure
	Tables    []table
	Notes     []string
}

// def is one term of a definition list: a description, or a list of
// items.
type def struct {
	Term, Desc string
	Items      []string
}

// table is an HTML table; Num marks right-aligned numeric columns.
type table struct {
	Caption string
	Class   string
	Head    []string
	Num     []bool
	Rows    [][]string
	Note    string
}

// buildPage turns the runs into the page's sections; empty sections are
// left out.
func buildPage(ctx context.Context, runs []*run, opts Options) (*page, error) {
	pg := &page{Title: opts.Title}
	var recorded []*run
	for _, r := range runs {
		if r.hasRecord() {
			recorded = append(recorded, r)
		}
	}
	names := make([]string, len(runs))
	for i, r := range runs {
		names[i] = r.name
	}
	pg.Lead = append(pg.Lead, fmt.Sprintf("Made from %s: %s. Every number on this page comes from the run records, model files and experiment results in %s; nothing was recomputed.",
		plural(len(runs), "directory"), strings.Join(names, ", "), thisOrThese(len(runs))))

	builders := []func() (section, error){
		func() (section, error) { return setupSection(recorded), nil },
		func() (section, error) { return privacySection(recorded) },
		func() (section, error) { return convergenceSection(recorded) },
		func() (section, error) { return communicationSection(recorded) },
		func() (section, error) { return privacyUtilitySection(recorded) },
		func() (section, error) { return partiesSection(recorded) },
		func() (section, error) { return topicsSection(runs, opts.TopWords), nil },
		func() (section, error) { return compareSection(runs) },
		func() (section, error) { return experimentsSection(runs) },
	}
	for _, build := range builders {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		s, err := build()
		if err != nil {
			return nil, err
		}
		if len(s.Blocks) > 0 || len(s.Intro) > 0 {
			pg.Sections = append(pg.Sections, s)
		}
	}
	return pg, nil
}

func thisOrThese(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

// setupSection describes each run: algorithm, parties, rounds, sizes,
// seed, data and time.
func setupSection(runs []*run) section {
	s := section{ID: "setup", Title: "Setup"}
	if len(runs) == 0 {
		return s
	}
	t := table{
		Caption: "Runs",
		Head:    []string{"Run", "Algorithm", "Parties", "Rounds", "Topics K", "Vocabulary V", "Seed", "Data", "Time", "Traffic"},
		Num:     []bool{false, false, true, true, true, true, true, false, true, true},
	}
	var blocks []block
	failedNote := false
	for _, r := range runs {
		rounds := strconv.Itoa(len(r.rec.rounds))
		if n := len(r.rec.failed); n > 0 {
			rounds += fmt.Sprintf(" (+%d failed)", n)
			failedNote = true
		}
		k, v, seed := r.sum.Topics, r.sum.Vocab, strconv.FormatUint(r.sum.Seed, 10)
		algo := r.sum.Algorithm
		if r.sum.Model != "" {
			algo += " (" + r.sum.Model + ")"
		}
		if g := r.global; g != nil {
			k, v = cmp0(k, g.K), cmp0(v, g.V)
			if algo == "" {
				algo = g.Prov.Method
			}
			if r.rec.summary == nil {
				seed = strconv.FormatUint(g.Prov.Seed, 10)
			}
		}
		if r.rec.summary == nil && r.global == nil {
			seed = "—"
		}
		data := r.sum.Corpus
		if r.sum.Split != "" {
			data = strings.TrimSpace(data + "; split " + r.sum.Split)
		}
		dur := time.Duration(r.sum.DurationS * float64(time.Second))
		if dur == 0 {
			dur = roundTime(r)
		}
		t.Rows = append(t.Rows, []string{r.name, orDash(algo), strconv.Itoa(len(r.parties)), rounds,
			topicsCell(k, r.sum.PartyData), intOrDash(v), seed, orDash(data), formatDuration(dur), formatBytes(r.totalBytes())})

		if len(r.notes) > 0 {
			blocks = append(blocks, block{Heading: "Run " + r.name, Notes: r.notes})
		}
		if len(r.sum.Params) > 0 {
			b := block{Heading: "Parameters of " + r.name, Collapsed: true}
			for _, key := range sortedKeys(r.sum.Params) {
				b.Defs = append(b.Defs, def{Term: key, Desc: r.sum.Params[key]})
			}
			blocks = append(blocks, b)
		}
	}
	t = dropEmptyColumns(t)
	t.Note = "Rounds counts committed rounds"
	if failedNote {
		t.Note += "; failed attempts missed their quorum and released no aggregate"
	}
	t.Note += ". Traffic is every byte the parties sent and received, as encoded on the wire (1 kB = 1000 bytes). Time is the run's wall-clock time."
	s.Blocks = append([]block{{Tables: []table{t}}}, blocks...)
	return s
}

// privacySection is each run's privacy statement (docs/privacy.md):
// unit, neighbouring relation, accountant, ε and δ per party, number of
// releases, and what was released.
func privacySection(runs []*run) (section, error) {
	s := section{ID: "privacy", Title: "Privacy statement"}
	if len(runs) == 0 {
		return s, nil
	}
	s.Intro = []string{"Each party's guarantee covers its own data, and each party's own ledger enforces its budget. The numbers below are what the parties' accountants reported; the report recomputes nothing."}
	for i, r := range runs {
		b := block{}
		if len(runs) > 1 {
			b.Heading = "Run " + r.name
		}
		events := r.events()
		st := fed.Statement{}
		if r.sum.Privacy != nil {
			st = *r.sum.Privacy
		}
		var mechs, units, accountants, assumptions, problems []string
		for _, e := range events {
			mechs = appendNew(mechs, mechanismName(e.Mechanism))
			units = appendNew(units, e.Unit)
			assumptions = appendNew(assumptions, e.Assumption)
		}
		for _, p := range r.parties {
			sp := r.partySpend(p)
			units = appendNew(units, sp.unit)
			accountants = appendNew(accountants, sp.accountant)
			if sp.problem != "" {
				problems = append(problems, fmt.Sprintf("The accountant could not compose party %s's releases: %s.", p, strings.TrimSuffix(sp.problem, ".")))
			}
		}
		for _, u := range modelSpends(r) {
			units = appendNew(units, u)
		}
		unit := st.Unit
		if unit == "" {
			unit = strings.Join(units, "; ")
		}
		released := st.Released
		if len(released) == 0 {
			released = inferReleased(mechs, r)
		}
		notes := append(slices.Clone(st.Notes), problems...)
		for _, a := range assumptions {
			notes = append(notes, "The guarantee is conditional: "+a+".")
		}
		const never = "raw text, token–topic assignments and each party's document–topic proportions θ."
		if !r.private() {
			b.Paras = append(b.Paras, "This run used no differential privacy: no party made a noised release, so no (ε, δ) guarantee holds (ε = ∞). Raw text still never left a party.")
			b.Defs = []def{{Term: "Released", Items: released}, {Term: "Never released", Desc: never}}
			for _, n := range notes {
				b.Defs = append(b.Defs, def{Term: "Note", Desc: n})
			}
			s.Blocks = append(s.Blocks, b)
			continue
		}
		b.Paras = append(b.Paras, fmt.Sprintf("Each party spent the ε and δ in the table below with respect to %s: the differential-privacy cost of its noised releases, composed by its accountant. A release listed below as exact (not noised) is covered by no guarantee.", unitPhrase(unit)))
		neigh := st.Neighbouring
		if neigh == "" && unit != "" && !strings.Contains(unit, ";") {
			neigh = fmt.Sprintf("Two datasets of a party are neighbours if they differ by adding or removing one %s.", unit)
		}
		acc := describeAccountants(accountants)
		switch {
		case acc != "" && st.Accountant != "":
			acc += " (" + st.Accountant + ")"
		case acc == "":
			acc = st.Accountant
		}
		if acc == "" && len(events) > 0 {
			var raw []string
			for _, e := range events {
				raw = appendNew(raw, e.Mechanism)
			}
			acc = inferAccountant(raw) + " (inferred from the mechanisms; the run record does not name the accountant)"
		}
		b.Defs = []def{
			{Term: "Privacy unit", Desc: orUnknown(unit, "not recorded")},
			{Term: "Neighbouring datasets", Desc: orUnknown(neigh, "not recorded")},
			{Term: "Accountant", Desc: orUnknown(acc, "not recorded")},
		}
		if len(mechs) > 0 {
			b.Defs = append(b.Defs, def{Term: "Mechanisms", Desc: strings.Join(mechs, ", ")})
		}
		b.Defs = append(b.Defs, def{Term: "Released", Items: released}, def{Term: "Never released", Desc: never})
		for _, n := range notes {
			b.Defs = append(b.Defs, def{Term: "Note", Desc: n})
		}

		t := table{
			Caption: "Privacy spent per party",
			Head:    []string{"Party", "ε", "δ", "ε per document", "Releases", "Mechanisms", "Budget (ε, δ)"},
			Num:     []bool{false, true, true, true, true, false, true},
		}
		for _, p := range r.parties {
			sp := r.partySpend(p)
			eps, delta, docEps := "not recorded", "—", "—"
			if sp.known {
				eps, delta = formatEpsilon(sp.epsilon), formatDelta(sp.delta)
				if sp.documentEpsilon > 0 {
					docEps = formatEpsilon(sp.documentEpsilon)
				} else if unit == "document" {
					docEps = eps
				}
			}
			budget := "—"
			if sp.budgetEpsilon > 0 {
				budget = fmt.Sprintf("(%s, %s)", formatEpsilon(sp.budgetEpsilon), formatDelta(sp.budgetDelta))
			}
			var mn []string
			for _, m := range sp.mechanisms {
				mn = appendNew(mn, mechanismName(m))
			}
			t.Rows = append(t.Rows, []string{p, eps, delta, docEps, strconv.Itoa(sp.releases), orDash(strings.Join(mn, ", ")), budget})
		}
		t.Note = "ε and δ are totals over the whole run. Releases counts every noised release a party made (a vector of V noised counts is one release), aborted rounds included, since a party that sent is charged. ε per document, where the run recorded it, is the cost at the document level (group privacy over the document length or its clip)."
		b.Tables = []table{dropEmptyColumns(t)}
		if ct, ok := costTable(st.Costs); ok {
			b.Tables = append(b.Tables, ct)
		}
		if p := plainEpsilon(r, st.Costs); p != "" {
			b.Paras = append(b.Paras, p)
		}
		if i < maxCommFigures {
			fig, ok, err := epsilonFigure(r, i, unit)
			if err != nil {
				return s, err
			}
			if ok {
				b.Figures = []figure{fig}
			}
		}
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

// epsilonFigure plots each party's ε spent so far against rounds, when the
// record holds it for at least two rounds.
func epsilonFigure(r *run, i int, unit string) (figure, bool, error) {
	c := chart{
		id:      "epsilon-" + strconv.Itoa(i),
		title:   "ε spent against rounds — " + r.name,
		xLabel:  "Communication round",
		yLabel:  "ε spent so far",
		intX:    true,
		zeroY:   true,
		caption: "Each party's total ε after each committed round, as its accountant composed it over every release so far (failed attempts included).",
	}
	if unit != "" && !strings.Contains(unit, ";") {
		c.yLabel += " (per " + unit + ")"
	}
	enough := false
	for j, p := range r.parties {
		var xs, ys []float64
		for _, rl := range r.rec.rounds {
			for _, pe := range rl.Epsilon {
				if pe.Party == p && pe.Error == "" && pe.Epsilon <= 1e300 {
					xs = append(xs, float64(rl.Round))
					ys = append(ys, pe.Epsilon)
				}
			}
		}
		if len(xs) >= 2 {
			enough = true
		}
		if len(xs) == 0 {
			continue
		}
		// Parties that spent alike would hide each other's lines: draw them
		// as one.
		same := slices.IndexFunc(c.series, func(o series) bool { return slices.Equal(o.xs, xs) && slices.Equal(o.ys, ys) })
		if same >= 0 {
			c.series[same].name = strings.Replace(c.series[same].name, "party ", "parties ", 1) + ", " + p
			continue
		}
		c.series = append(c.series, series{name: "party " + p, xs: xs, ys: ys, style: 1 + j})
	}
	if !enough {
		return figure{}, false, nil
	}
	fig, err := c.draw()
	return fig, err == nil, err
}

// topicsCell shows the number of topics: the global model's, and the
// parties' own where they were recorded and differ from it ("8, 10, 12 per
// party; 30 global").
func topicsCell(global int, parties []fed.PartyData) string {
	var ks []string
	differ := false
	for _, p := range parties {
		if p.Topics > 0 {
			ks = append(ks, strconv.Itoa(p.Topics))
			differ = differ || p.Topics != global
		}
	}
	if !differ || len(ks) != len(parties) {
		return intOrDash(global)
	}
	if global == 0 {
		return strings.Join(ks, ", ") + " per party"
	}
	return fmt.Sprintf("%s per party; %d global", strings.Join(ks, ", "), global)
}

// mechanismName names a privacy mechanism for people.
func mechanismName(m string) string {
	switch m {
	case privacy.MechanismLaplace:
		return "Laplace"
	case privacy.MechanismThresholdedLaplace:
		return "thresholded Laplace"
	case privacy.MechanismGaussian:
		return "Gaussian"
	case privacy.MechanismDiscreteGaussian:
		return "discrete Gaussian"
	case privacy.MechanismSubsampledGaussian:
		return "subsampled Gaussian"
	case privacy.MechanismKRR:
		return "k-ary randomized response"
	case privacy.MechanismTruncatedKRR:
		return "truncated k-ary randomized response"
	case privacy.MechanismRRP:
		return "randomized response with priori"
	case privacy.MechanismPartitionSelection:
		return "partition selection (vocabulary)"
	case privacy.MechanismApproxDP:
		return "a release at the document level (group privacy)"
	}
	return m
}

// costTable shows what each kind of release cost every party, at the
// document level and at the method's own unit.
func costTable(costs []fed.ReleaseCost) (table, bool) {
	if len(costs) == 0 {
		return table{}, false
	}
	t := table{
		Caption: "What each release costs every party",
		Head:    []string{"Release", "ε", "δ", "Unit", "At the method's unit"},
		Num:     []bool{false, true, true, false, false},
		Note:    "A release at a smaller unit than a document is converted to the document level by group privacy: ε per unit times the most units a document holds (documents longer than that were truncated).",
	}
	for _, c := range costs {
		method := "—"
		switch {
		case c.MethodUnit != "" && math.Abs(c.Epsilon-c.MethodEpsilon*float64(c.GroupSize)) <= 1e-9*c.Epsilon:
			method = fmt.Sprintf("ε = %s per %s × %d", formatEpsilon(c.MethodEpsilon), c.MethodUnit, c.GroupSize)
		case c.MethodUnit != "":
			method = fmt.Sprintf("ε = %s per %s; a document holds at most %d", formatEpsilon(c.MethodEpsilon), c.MethodUnit, c.GroupSize)
		}
		t.Rows = append(t.Rows, []string{c.Release, formatEpsilon(c.Epsilon), formatDelta(c.Delta), orDash(c.Unit), method})
	}
	return dropEmptyColumns(t), true
}

// plainEpsilon says in one sentence what the largest ε per document a
// party spent means: the most an observer of everything released can
// multiply its odds that any one document was in that party's data.
func plainEpsilon(r *run, costs []fed.ReleaseCost) string {
	eps := 0.0
	for _, p := range r.parties {
		sp := r.partySpend(p)
		e := sp.documentEpsilon
		if e == 0 && sp.unit == "document" {
			e = sp.epsilon
		}
		eps = math.Max(eps, e)
	}
	if eps == 0 {
		return ""
	}
	var finer string
	for _, c := range costs {
		if c.MethodUnit != "" {
			finer = fmt.Sprintf(" The guarantee is stronger for smaller pieces of a document: ε = %s per %s.", formatEpsilon(c.MethodEpsilon), c.MethodUnit)
		}
	}
	odds := oddsFactor(eps)
	switch {
	case eps <= 1:
		return fmt.Sprintf("In plain words: with ε = %s per document, everything released changes an observer's odds that any one document was in a party's data by at most a factor of %s, a strong guarantee.", formatEpsilon(eps), odds) + finer
	case eps <= 10:
		return fmt.Sprintf("In plain words: with ε = %s per document, everything released changes an observer's odds that any one document was in a party's data by at most a factor of %s: a meaningful guarantee, weaker than the ε ≤ 1 of textbook examples.", formatEpsilon(eps), odds) + finer
	}
	return fmt.Sprintf("In plain words: ε = %s per document allows everything released to change an observer's odds that any one document was in a party's data by a factor of up to %s, so it gives no meaningful formal protection to whole documents.", formatEpsilon(eps), odds) + finer
}

// oddsFactor writes e^ε for people: "2.72", "22,026", "e^334 (a number of
// 146 digits)".
func oddsFactor(eps float64) string {
	if eps <= 20 {
		return formatNumber(math.Exp(eps))
	}
	digits := int(math.Floor(eps/math.Ln10)) + 1
	return fmt.Sprintf("e^%s (a number of %d digits)", formatEpsilon(eps), digits)
}

// unitPhrase says "one word occurrence" for the unit "word occurrence".
func unitPhrase(unit string) string {
	switch {
	case unit == "":
		return "its privacy unit (not recorded)"
	case strings.Contains(unit, ";"):
		return "its privacy units (" + unit + ")"
	}
	return "one " + unit
}

// modelSpends returns the privacy units the global model's provenance
// records.
func modelSpends(r *run) []string {
	if r.global == nil {
		return nil
	}
	var units []string
	for _, p := range r.global.Prov.Privacy {
		units = appendNew(units, p.Unit)
	}
	return units
}

// describeAccountants says what the accountant names of
// privacy/accountant ("pure", "basic", "gdp", "rdp", joined with "+")
// mean.
func describeAccountants(names []string) string {
	var parts []string
	for _, name := range names {
		for _, a := range strings.Split(name, "+") {
			var d string
			switch a {
			case "pure":
				d = "pure ε-DP composition: ε adds up over releases"
			case "basic":
				d = "basic composition: ε and δ add up over releases"
			case "gdp":
				d = "μ-GDP: Gaussian releases compose exactly and convert to (ε, δ) with the analytic Gaussian formula (Balle and Wang 2018)"
			case "rdp":
				d = "Rényi DP with the improved conversion to (ε, δ)"
			default:
				d = a
			}
			parts = appendNew(parts, d)
		}
	}
	if len(parts) > 1 {
		return strings.Join(parts, "; ") + " (the parts' ε and δ are then added)"
	}
	return strings.Join(parts, "")
}

// inferAccountant names the composition that fits mechs, for runs whose
// record does not say.
func inferAccountant(mechs []string) string {
	pure, gauss, rdp := true, true, false
	for _, m := range mechs {
		switch m {
		case "laplace", "thresholded-laplace", "krr", "truncated-krr", "rrp", "partition-selection", "epsilon-delta":
			gauss = false
		case "gaussian":
			pure = false
		default:
			pure, gauss, rdp = false, false, true
		}
	}
	switch {
	case pure:
		return "basic composition: ε and δ add up over releases"
	case gauss:
		return "μ-GDP, exact for Gaussian compositions, converted to (ε, δ) with the analytic Gaussian formula (Balle and Wang 2018)"
	case rdp:
		return "Rényi DP with conversion to (ε, δ)"
	}
	return "composition of the mechanisms' guarantees"
}

// inferReleased lists what a run released, for records that do not say.
func inferReleased(mechs []string, r *run) []string {
	var out []string
	if len(mechs) > 0 {
		out = append(out, "each party's model updates, noised by "+strings.Join(mechs, ", "))
	} else {
		out = append(out, "each party's model updates, without noise")
	}
	out = append(out, "which rounds each party answered and the size of its messages")
	if r.global != nil {
		out = append(out, "the global model (post-processing of the releases)")
	}
	return out
}

// convergenceSection plots held-out quality against rounds.
func convergenceSection(runs []*run) (section, error) {
	s := section{ID: "convergence", Title: "Convergence"}
	if len(runs) == 0 {
		return s, nil
	}
	var b block
	for _, key := range []string{MetricPerplexity, MetricLogLikelihood} {
		c := chart{
			id:     "convergence-" + key,
			title:  metricName(key) + " against rounds",
			xLabel: "Communication round",
			yLabel: metricLabels[key],
			intX:   true,
		}
		style, partySeries := 0, false
		partyLines := len(runs) == 1
		for _, r := range runs {
			xs, ys := r.metricSeries(key)
			if len(xs) > 0 {
				name := r.label()
				if partyLines {
					name = "global model"
				}
				c.series = append(c.series, series{name: name, xs: xs, ys: ys, style: style})
			}
			style++
			if !partyLines {
				continue
			}
			for _, p := range r.parties {
				xs, ys := r.partyMetricSeries(p, key)
				if len(xs) > 0 {
					c.series = append(c.series, series{name: "party " + p + " (local model)", xs: xs, ys: ys, style: style, dashed: true})
					partySeries = true
				}
				style++
			}
		}
		c.refs = baselineRefs(runs, key, &style)
		if len(c.series) == 0 {
			continue
		}
		c.caption = convergenceCaption(key, partySeries, len(c.refs) > 0)
		fig, err := c.draw()
		if err != nil {
			return s, err
		}
		b.Figures = append(b.Figures, fig)
	}
	if len(b.Figures) == 0 {
		s.Intro = []string{"The run records hold no held-out metrics, so convergence cannot be shown. Run the simulation with held-out documents to record them."}
		return s, nil
	}
	b.Tables = append(b.Tables, finalQualityTable(runs))
	s.Blocks = []block{b}
	return s, nil
}

// blackStyle is the style index of black in the palette: the pooled-data
// baseline, a reference for every party.
const blackStyle = 6

// baselineRefs returns the baselines of the runs that recorded metric key
// as reference lines, without duplicates. With one run, a party's
// baseline takes the colour of the party's lines (style 1 + its index)
// and the pooled baseline is black; with several, styles count on from
// *style.
func baselineRefs(runs []*run, key string, style *int) []refLine {
	var refs []refLine
	for _, r := range runs {
		for _, bl := range r.sum.Baselines {
			v, ok := bl.Metrics[key]
			if !ok {
				continue
			}
			name := baselineName(bl)
			if len(runs) > 1 {
				name += " (" + r.name + ")"
			}
			if slices.ContainsFunc(refs, func(x refLine) bool { return x.y == v && strings.HasPrefix(x.name, baselineName(bl)) }) {
				continue
			}
			st := *style
			switch i := r.partyIndex(bl.Party); {
			case len(runs) > 1:
				*style++
			case bl.Kind == "pooled":
				st = blackStyle
			case i >= 0:
				st = 1 + i
			default:
				*style++
			}
			refs = append(refs, refLine{name: name, y: v, style: st})
		}
	}
	return refs
}

// baselineName says what a baseline is.
func baselineName(bl fed.Baseline) string {
	switch {
	case bl.Name != "":
		return bl.Name
	case bl.Kind == "pooled":
		return "pooled data, no privacy"
	case bl.Party != "":
		return "party " + bl.Party + " alone"
	}
	return bl.Kind
}

func convergenceCaption(key string, parties, refs bool) string {
	var b strings.Builder
	switch key {
	case MetricPerplexity:
		b.WriteString("Document-completion perplexity on held-out documents after each round: θ is fitted on half of each test document's tokens and the other half is predicted (Wallach et al. 2009). Lower is better.")
	default:
		b.WriteString("Total log-likelihood of the held-out half of each test document after each round, in nats. Higher is better.")
	}
	if parties {
		b.WriteString(" Dashed lines are the parties' own local models after each round.")
	}
	if refs {
		b.WriteString(" Dotted horizontal lines are baselines trained without federation: each party on its own data alone, and all data pooled.")
	}
	return b.String()
}

// finalQualityTable lists the final held-out metrics of every run, its
// parties' local models and its baselines.
func finalQualityTable(runs []*run) table {
	keys := []string{}
	for _, r := range runs {
		for _, k := range sortedKeys(r.sum.Metrics) {
			keys = appendNew(keys, k)
		}
		for _, rl := range r.rec.rounds {
			for _, k := range sortedKeys(rl.Metrics) {
				keys = appendNew(keys, k)
			}
		}
	}
	slices.SortStableFunc(keys, func(a, b string) int { return metricRank(a) - metricRank(b) })
	t := table{Caption: "Final held-out quality", Head: []string{"Model"}, Num: []bool{false}}
	for _, k := range keys {
		t.Head = append(t.Head, metricName(k))
		t.Num = append(t.Num, true)
	}
	row := func(name string, get func(string) (float64, bool)) {
		cells := []string{name}
		for _, k := range keys {
			if v, ok := get(k); ok {
				cells = append(cells, formatNumber(v))
			} else {
				cells = append(cells, "—")
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	for _, r := range runs {
		row(r.label()+": global model", r.finalMetric)
		for _, p := range r.parties {
			if _, ok := r.finalPartyMetric(p, keys[0]); ok || len(keys) == 0 {
				row(r.name+": party "+p+" local model", func(k string) (float64, bool) { return r.finalPartyMetric(p, k) })
			}
		}
		for _, bl := range r.sum.Baselines {
			row(r.name+": baseline, "+baselineName(bl), func(k string) (float64, bool) { v, ok := bl.Metrics[k]; return v, ok })
		}
	}
	return t
}

// metricRank orders metrics in tables: perplexity, log-likelihood, then
// the rest by name.
func metricRank(key string) int {
	switch key {
	case MetricPerplexity:
		return 0
	case MetricLogLikelihood:
		return 1
	}
	return 2
}

// qualityKey returns the metric that the runs' quality is judged by:
// perplexity if any run recorded it, else the log-likelihood, else "".
func qualityKey(runs []*run) string {
	for _, key := range []string{MetricPerplexity, MetricLogLikelihood} {
		for _, r := range runs {
			if _, ok := r.finalMetric(key); ok {
				return key
			}
		}
	}
	return ""
}

// maxCommFigures bounds the per-run traffic figures, to keep a report of
// a large sweep small; the traffic table covers every run.
const maxCommFigures = 6

// communicationSection plots bytes per party per round and quality against
// cumulative bytes.
func communicationSection(runs []*run) (section, error) {
	s := section{ID: "communication", Title: "Communication"}
	if len(runs) == 0 {
		return s, nil
	}
	var b block
	for i, r := range runs {
		if i == maxCommFigures {
			b.Notes = append(b.Notes, fmt.Sprintf("Traffic per round is drawn for the first %d runs only; the table covers all.", maxCommFigures))
			break
		}
		var peak int64
		for _, p := range r.parties {
			_, up, down := r.partyBytes(p)
			for j := range up {
				peak = max(peak, up[j]+down[j])
			}
		}
		if peak == 0 {
			continue
		}
		u := unitFor(float64(peak))
		c := chart{
			id:      "traffic-" + strconv.Itoa(i),
			title:   "Bytes per party per round — " + r.name,
			xLabel:  "Communication round",
			yLabel:  "Bytes sent + received (" + u.name + ")",
			intX:    true,
			zeroY:   true,
			caption: "What each party sent to and received from the coordinator in each committed round, as encoded on the wire (1 kB = 1000 bytes).",
		}
		for j, p := range r.parties {
			xs, up, down := r.partyBytes(p)
			ys := make([]float64, len(xs))
			for k := range xs {
				ys[k] = float64(up[k]+down[k]) / u.size
			}
			c.series = append(c.series, series{name: "party " + p, xs: xs, ys: ys, style: 1 + j}) // colours as in the convergence plot
		}
		fig, err := c.draw()
		if err != nil {
			return s, err
		}
		b.Figures = append(b.Figures, fig)
	}

	if key := qualityKey(runs); key != "" {
		var peak int64
		for _, r := range runs {
			var cum int64
			for _, n := range r.roundBytes() {
				cum += n
			}
			peak = max(peak, cum)
		}
		u := unitFor(float64(peak))
		c := chart{
			id:     "bytes-quality",
			title:  metricName(key) + " against cumulative traffic",
			xLabel: "Cumulative bytes, all parties, sent + received (" + u.name + ")",
			yLabel: metricLabels[key],
			zeroX:  true,
			caption: "Each point is one round: the global model's held-out quality after it, against all traffic up to and including it. " +
				"A method that is further left at the same quality needs fewer bytes.",
		}
		for i, r := range runs {
			var xs, ys []float64
			var cum int64
			rb := r.roundBytes()
			for j, rl := range r.rec.rounds {
				cum += rb[j]
				if v, ok := rl.Metrics[key]; ok {
					xs = append(xs, float64(cum)/u.size)
					ys = append(ys, v)
				}
			}
			if len(xs) > 0 {
				c.series = append(c.series, series{name: r.label(), xs: xs, ys: ys, style: i})
			}
		}
		if len(c.series) > 0 && peak > 0 {
			fig, err := c.draw()
			if err != nil {
				return s, err
			}
			b.Figures = append(b.Figures, fig)
		}
	}

	t := table{
		Caption: "Traffic per party",
		Head:    []string{"Run", "Party", "Sent", "Received", "Total", "Per round (mean)"},
		Num:     []bool{false, false, true, true, true, true},
		Note:    "Sent is party → coordinator, received is coordinator → party; committed rounds only.",
	}
	for _, r := range runs {
		for _, p := range r.parties {
			_, up, down := r.partyBytes(p)
			var su, sd int64
			for j := range up {
				su += up[j]
				sd += down[j]
			}
			mean := "—"
			if n := len(up); n > 0 {
				mean = formatBytes((su + sd) / int64(n))
			}
			t.Rows = append(t.Rows, []string{r.name, p, formatBytes(su), formatBytes(sd), formatBytes(su + sd), mean})
		}
	}
	if len(t.Rows) > 0 {
		b.Tables = append(b.Tables, t)
	}
	if len(b.Figures) > 0 || len(b.Tables) > 0 {
		s.Blocks = []block{b}
	}
	return s, nil
}

// privacyUtilitySection plots final quality against ε when the runs spent
// at least two different ε.
func privacyUtilitySection(runs []*run) (section, error) {
	s := section{ID: "privacy-utility", Title: "Privacy and utility"}
	key := qualityKey(runs)
	if key == "" {
		return s, nil
	}
	type point struct {
		r        *run
		eps, val float64
	}
	var pts []point
	var open []point // runs without privacy
	distinct := map[float64]bool{}
	for _, r := range runs {
		v, ok := r.finalMetric(key)
		if !ok {
			continue
		}
		eps, ok := r.maxEpsilon()
		switch {
		case !r.private() || eps > 1e300:
			open = append(open, point{r: r, eps: math.Inf(1), val: v})
		case !ok:
			continue // private, but the spend was not recorded
		default:
			pts = append(pts, point{r: r, eps: eps, val: v})
			distinct[eps] = true
		}
	}
	if len(distinct) < 2 {
		return s, nil
	}
	c := chart{
		id:     "privacy-utility",
		title:  metricName(key) + " against ε",
		xLabel: "ε spent per party (largest over parties)",
		yLabel: metricLabels[key],
		caption: "Each point is one run's final global model against the largest total ε any of its parties spent. " +
			"Runs of the same algorithm are joined in order of ε; dotted lines are runs without differential privacy.",
	}
	lo, hi := math.Inf(1), 0.0
	for _, p := range pts {
		lo, hi = min(lo, p.eps), max(hi, p.eps)
	}
	c.logX = hi/lo >= 20
	if c.logX {
		c.xLabel += ", log scale"
	}
	var groups []string
	for _, p := range pts {
		groups = appendNew(groups, algorithmOf(p.r))
	}
	for i, g := range groups {
		var gp []point
		for _, p := range pts {
			if algorithmOf(p.r) == g {
				gp = append(gp, p)
			}
		}
		slices.SortStableFunc(gp, func(a, b point) int { return cmpFloat(a.eps, b.eps) })
		sr := series{name: g, style: i}
		for _, p := range gp {
			sr.xs = append(sr.xs, p.eps)
			sr.ys = append(sr.ys, p.val)
		}
		c.series = append(c.series, sr)
	}
	for i, p := range open {
		c.refs = append(c.refs, refLine{name: p.r.label() + ", no privacy", y: p.val, style: len(groups) + i})
	}
	fig, err := c.draw()
	if err != nil {
		return s, err
	}
	t := table{
		Caption: "Runs by privacy",
		Head:    []string{"Run", "Algorithm", "ε (largest)", "δ (largest)", metricName(key)},
		Num:     []bool{false, false, true, true, true},
	}
	all := append(slices.Clone(pts), open...)
	slices.SortStableFunc(all, func(a, b point) int { return cmpFloat(a.eps, b.eps) })
	for _, p := range all {
		delta := 0.0
		for _, id := range p.r.parties {
			if sp := p.r.partySpend(id); sp.known {
				delta = max(delta, sp.delta)
			}
		}
		t.Rows = append(t.Rows, []string{p.r.name, algorithmOf(p.r), formatEpsilon(p.eps), formatDelta(delta), formatNumber(p.val)})
	}
	s.Blocks = []block{{Figures: []figure{fig}, Tables: []table{t}}}
	return s, nil
}

// algorithmOf names a run's algorithm for grouping.
func algorithmOf(r *run) string {
	a := r.sum.Algorithm
	if a == "" && r.global != nil {
		a = r.global.Prov.Method
	}
	if r.sum.Model != "" {
		a += " (" + r.sum.Model + ")"
	}
	return orUnknown(a, "unknown algorithm")
}

// partiesSection compares the parties of each run: data, participation,
// privacy, traffic and the quality of their models.
func partiesSection(runs []*run) (section, error) {
	s := section{ID: "parties", Title: "Parties"}
	key := qualityKey(runs)
	for i, r := range runs {
		b := block{}
		if len(runs) > 1 {
			b.Heading = "Run " + r.name
		}
		t := table{
			Caption: "Parties",
			Head:    []string{"Party", "Documents", "Tokens", "Rounds answered", "Deadlines missed", "ε", "Traffic"},
			Num:     []bool{false, true, true, true, true, true, true},
		}
		if key != "" {
			t.Head = append(t.Head, metricName(key)+", local model", metricName(key)+", alone")
			t.Num = append(t.Num, true, true)
		}
		var alone, local []float64
		haveAlone, haveLocal := false, false
		for _, p := range r.parties {
			docs, tokens := "—", "—"
			for _, pd := range r.sum.PartyData {
				if pd.Party == p {
					docs, tokens = intOrDash(pd.Docs), intOrDash(pd.Tokens)
				}
			}
			answered, missed := 0, 0
			for _, rl := range r.rec.rounds {
				if slices.Contains(rl.Replied, p) {
					answered++
				}
			}
			for _, rls := range [][]fed.RoundLine{r.rec.rounds, r.rec.failed} {
				for _, rl := range rls {
					if slices.Contains(rl.Dropped, p) {
						missed++
					}
				}
			}
			sp := r.partySpend(p)
			eps := "—"
			switch {
			case !r.private():
				eps = "∞ (no noise)"
			case sp.known:
				eps = formatEpsilon(sp.epsilon)
			}
			_, up, down := r.partyBytes(p)
			var total int64
			for j := range up {
				total += up[j] + down[j]
			}
			row := []string{p, docs, tokens, strconv.Itoa(answered), strconv.Itoa(missed), eps, formatBytes(total)}
			if key != "" {
				lv, lok := r.finalPartyMetric(p, key)
				av, aok := aloneMetric(r, p, key)
				row = append(row, numOrDash(lv, lok), numOrDash(av, aok))
				local, alone = append(local, orNaN(lv, lok)), append(alone, orNaN(av, aok))
				haveLocal, haveAlone = haveLocal || lok, haveAlone || aok
			}
			t.Rows = append(t.Rows, row)
		}
		if len(t.Rows) == 0 {
			continue
		}
		b.Tables = []table{dropEmptyColumns(t)}
		global, gok := r.finalMetric(key)
		if key != "" && gok && (haveLocal || haveAlone) && i < maxCommFigures {
			c := chart{
				id:         "parties-" + strconv.Itoa(i),
				title:      metricName(key) + " per party — " + r.name,
				xLabel:     "Party",
				yLabel:     metricLabels[key],
				categories: r.parties,
				caption:    "For each party: its own model trained on its data alone, its final local model, and the federation's global model, all on the same held-out documents. The global model's bar is the same for every party.",
			}
			if haveAlone {
				c.bars = append(c.bars, barGroup{name: "trained alone (no federation)", values: alone, style: 1})
			}
			if haveLocal {
				c.bars = append(c.bars, barGroup{name: "final local model", values: local, style: 2})
			}
			gv := make([]float64, len(r.parties))
			for j := range gv {
				gv[j] = global
			}
			c.bars = append(c.bars, barGroup{name: "global model", values: gv, style: 0})
			fig, err := c.draw()
			if err != nil {
				return s, err
			}
			b.Figures = []figure{fig}
		}
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

// aloneMetric returns the single-party baseline of party p.
func aloneMetric(r *run, p, key string) (float64, bool) {
	for _, bl := range r.sum.Baselines {
		if bl.Party == p && bl.Kind != "pooled" {
			v, ok := bl.Metrics[key]
			return v, ok
		}
	}
	return 0, false
}

// topicsSection lists the top words of every global model, the party
// topics FTM merged into each, and the parties' local models.
func topicsSection(runs []*run, topN int) section {
	s := section{ID: "topics", Title: "Topics"}
	for _, r := range runs {
		g := r.global
		if g == nil {
			continue
		}
		merged := map[int][]string{}
		for _, m := range r.sum.TopicMerges {
			for _, mt := range m.Members {
				desc := fmt.Sprintf("%s #%d", mt.Party, mt.Topic)
				if mt.Similarity > 0 {
					desc += fmt.Sprintf(" (ρ %.2f)", mt.Similarity)
				}
				merged[m.Global] = append(merged[m.Global], desc)
			}
		}
		t := table{
			Caption: fmt.Sprintf("Global model of %s: %s over %s, top %d words", r.name, plural(g.K, "topic"), plural(g.V, "word"), topN),
			Class:   "topics",
			Head:    []string{"#", "Top words (most probable first)"},
			Num:     []bool{true, false},
		}
		if len(merged) > 0 {
			t.Head = append(t.Head, "Merged from party topics")
			t.Num = append(t.Num, false)
		}
		for k := range g.K {
			row := []string{strconv.Itoa(k), topWords(g.TopWords(k, topN))}
			if len(merged) > 0 {
				row = append(row, orDash(strings.Join(merged[k], ", ")))
			}
			t.Rows = append(t.Rows, row)
		}
		b := block{Tables: []table{t}}
		if len(runs) > 1 {
			b.Heading = "Run " + r.name
		}
		if len(merged) > 0 {
			b.Paras = []string{"Each global topic is the size-weighted average of the party topics in its row: those whose top words overlapped enough (weighted Jaccard similarity ρ) were merged."}
		}
		s.Blocks = append(s.Blocks, b)
		for _, lm := range r.locals {
			lt := table{
				Caption: fmt.Sprintf("Final local model of party %s: %s", lm.party, plural(lm.model.K, "topic")),
				Class:   "topics",
				Head:    []string{"#", "Top words"},
				Num:     []bool{true, false},
			}
			for k := range lm.model.K {
				lt.Rows = append(lt.Rows, []string{strconv.Itoa(k), topWords(lm.model.TopWords(k, topN))})
			}
			s.Blocks = append(s.Blocks, block{Heading: fmt.Sprintf("%s: party %s's local model", r.name, lm.party), Collapsed: true, Tables: []table{lt}})
		}
	}
	return s
}

// topWords joins the words of a topic.
func topWords(ws []topic.WordProb) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Word
	}
	return strings.Join(parts, " · ")
}

// experimentInfo says what each experiment (docs/experiments.md) shows.
var experimentInfo = map[string]string{
	"E1":      "Data scarcity: three parties with unequal, non-IID data; the federated model against each party's own non-private model, on held-out likelihood (FTM Fig. 4, iFTM Fig. 5).",
	"E2":      "Privacy–utility grid over ε and the threshold τ (FTM Fig. 5, iFTM Fig. 6).",
	"E3":      "Likelihood against communication rounds and bytes: FTM against conventional distributed LDA on the pooled data (FTM Fig. 6, iFTM Fig. 7).",
	"E4":      "Classification with topic features: no topics, each party's model, the federated models (iFTM Table 3).",
	"E5":      "PC-TD: perplexity against iterations for several σ, federated against each single party; coherence against K (PC-TD Fig. 2–4).",
	"E6":      "FedLDA: perplexity against iterations for RRP, kRR, t-kRR and no privacy; sweeps of ε, K, δ and the sample ratio (FedLDA Fig. 5, Table 2).",
	"E7":      "FedNMF: embedding coherence and SVM F1/accuracy across methods, K and client counts (FedNMF Tables III–IV, Fig. 2–4).",
	"Attacks": "Privacy attacks: the ε an attack can prove from what each method releases (a lower bound with its confidence) beside the ε the method claims; with noise off the same attacks show their power (docs/attacks.md).",
	"E8":      "Topic-adapted language model: held-out perplexity of the n-gram model alone against adapted with each party's model and with the federated one (FTM §4.5, iFTM §4.5).",
}

// maxExperimentTableRows bounds the rows shown of one experiment.
const maxExperimentTableRows = 200

// experimentsSection shows each experiment result file found: a plot when
// its columns allow one, and its rows.
func experimentsSection(runs []*run) (section, error) {
	s := section{ID: "experiments", Title: "Experiments"}
	n := 0
	for _, r := range runs {
		for _, x := range r.exps {
			n++
			file := x.name
			if r.name != "" {
				file = r.name + "/" + x.name
			}
			b := block{Heading: fmt.Sprintf("%s — %s", x.id, file)}
			if info := experimentInfo[x.id]; info != "" {
				b.Paras = append(b.Paras, info)
			}
			if spec, ok := x.resolvedSpec(); ok {
				title := spec.Title
				if title == "" {
					title = fmt.Sprintf("%s: %s against %s", x.id, strings.ToLower(metricOrColumn(spec.Y)), strings.ToLower(metricOrColumn(spec.X)))
				}
				c := chart{
					id:      "experiment-" + strconv.Itoa(n),
					title:   title,
					xLabel:  spec.XLabel,
					yLabel:  spec.YLabel,
					logX:    spec.LogX,
					caption: fmt.Sprintf("From %s: one line per %s.", file, orUnknown(strings.Join(spec.Series, " and "), "file")),
				}
				intX := true
				var names []string
				for _, row := range x.rows {
					names = appendNew(names, spec.seriesOf(row))
				}
				for i, name := range names {
					sr := series{name: name, style: i}
					type xy struct{ x, y float64 }
					var pts []xy
					for _, row := range x.rows {
						xc, xok := row[spec.X]
						yc, yok := row[spec.Y]
						if xok && yok && spec.seriesOf(row) == name {
							pts = append(pts, xy{xc.num, yc.num})
							intX = intX && xc.num == math.Trunc(xc.num)
						}
					}
					slices.SortStableFunc(pts, func(a, b xy) int { return cmpFloat(a.x, b.x) })
					for _, p := range pts {
						sr.xs = append(sr.xs, p.x)
						sr.ys = append(sr.ys, p.y)
					}
					if len(pts) > 0 {
						c.series = append(c.series, sr)
					}
				}
				c.intX = intX && !c.logX
				if len(c.series) > 0 {
					fig, err := c.draw()
					if err != nil {
						return s, err
					}
					b.Figures = []figure{fig}
				}
			} else {
				b.Notes = append(b.Notes, "No plot: the file has no numeric column to plot against another. Add a line {\"plot\": {\"x\": COLUMN, \"y\": COLUMN}} to choose them.")
			}
			t := table{Caption: "Results", Head: x.cols}
			for _, c := range x.cols {
				num := true
				for _, row := range x.rows {
					if v, ok := row[c]; ok && !v.isNum {
						num = false
					}
				}
				t.Num = append(t.Num, num)
			}
			for i, row := range x.rows {
				if i == maxExperimentTableRows {
					t.Note = fmt.Sprintf("The first %d of %d rows are shown; the file has them all.", maxExperimentTableRows, len(x.rows))
					break
				}
				cells := make([]string, len(x.cols))
				for j, c := range x.cols {
					cells[j] = "—"
					if v, ok := row[c]; ok {
						cells[j] = v.text
					}
				}
				t.Rows = append(t.Rows, cells)
			}
			b.Tables = []table{t}
			s.Blocks = append(s.Blocks, b)
		}
	}
	return s, nil
}

// metricOrColumn names a column by its metric name or its label.
func metricOrColumn(col string) string {
	if _, ok := metricLabels[col]; ok {
		return metricName(col)
	}
	return columnLabel(col)
}

// dropEmptyColumns removes the columns of t that hold no value in any row
// ("—" everywhere), keeping the first.
func dropEmptyColumns(t table) table {
	keep := make([]bool, len(t.Head))
	keep[0] = true
	for _, row := range t.Rows {
		for j, c := range row {
			if c != "—" && j < len(keep) {
				keep[j] = true
			}
		}
	}
	out := t
	out.Head, out.Num, out.Rows = nil, nil, nil
	for j, k := range keep {
		if k {
			out.Head = append(out.Head, t.Head[j])
			out.Num = append(out.Num, j < len(t.Num) && t.Num[j])
		}
	}
	for _, row := range t.Rows {
		var cells []string
		for j, k := range keep {
			if k && j < len(row) {
				cells = append(cells, row[j])
			}
		}
		out.Rows = append(out.Rows, cells)
	}
	return out
}

func orDash(s string) string { return orUnknown(s, "—") }

func orUnknown(s, unknown string) string {
	if s == "" {
		return unknown
	}
	return s
}

func intOrDash(n int) string {
	if n == 0 {
		return "—"
	}
	return groupDigits(strconv.Itoa(n))
}

func numOrDash(v float64, ok bool) string {
	if !ok {
		return "—"
	}
	return formatNumber(v)
}

func orNaN(v float64, ok bool) float64 {
	if !ok {
		return math.NaN()
	}
	return v
}

// cmp0 returns a unless it is zero, else b.
func cmp0(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// roundTime is the duration of a run's committed rounds.
func roundTime(r *run) time.Duration {
	var d time.Duration
	for _, rl := range r.rec.rounds {
		d += time.Duration(rl.DurationS * float64(time.Second))
	}
	return d
}
