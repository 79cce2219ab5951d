package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// palette is the Okabe–Ito colour-blind-safe palette (Okabe and Ito,
// "Color Universal Design", 2008), without its yellow, which is unreadable
// on white; series past its end reuse colours with another marker shape.
var palette = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xFF}, // blue
	{0xD5, 0x5E, 0x00, 0xFF}, // vermillion
	{0x00, 0x9E, 0x73, 0xFF}, // bluish green
	{0xCC, 0x79, 0xA7, 0xFF}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xFF}, // orange
	{0x56, 0xB4, 0xE9, 0xFF}, // sky blue
	{0x00, 0x00, 0x00, 0xFF}, // black
}

// glyphs are the marker shapes, cycled more slowly than the colours so
// every (colour, shape) pair differs for the first 35 series.
var glyphs = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.BoxGlyph{}, draw.TriangleGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}}

// styleOf returns the colour and marker of series number i.
func styleOf(i int) (color.RGBA, draw.GlyphDrawer, string) {
	c := palette[i%len(palette)]
	g := glyphs[(i/len(palette))%len(glyphs)]
	return c, g, glyphName(g)
}

// glyphName names a marker shape for the HTML legend.
func glyphName(g draw.GlyphDrawer) string {
	switch g.(type) {
	case draw.BoxGlyph:
		return "square"
	case draw.TriangleGlyph:
		return "triangle"
	case draw.PyramidGlyph:
		return "pyramid"
	case draw.CrossGlyph:
		return "cross"
	}
	return "circle"
}

// series is one line (or set of points) of a chart.
type series struct {
	name   string
	xs, ys []float64
	style  int  // index of the colour and marker
	dashed bool // reference or secondary lines
	noLine bool // points only
}

// refLine is a horizontal reference line, such as a baseline's quality.
type refLine struct {
	name  string
	y     float64
	style int
}

// barGroup is one group of bars: one value per category.
type barGroup struct {
	name   string
	values []float64
	style  int
}

// chart is what a figure shows, before it is drawn.
type chart struct {
	id, title, caption string
	xLabel, yLabel     string
	series             []series
	refs               []refLine
	intX               bool     // integer x ticks (rounds)
	logX               bool     // logarithmic x axis
	zeroX, zeroY       bool     // axes start at 0 (counts, bytes)
	categories         []string // bar charts: x categories
	bars               []barGroup
}

// legendEntry is one line of a figure's HTML legend.
type legendEntry struct {
	Name   string
	Color  string // CSS colour
	Dashed bool
	Marker string // marker shape name, "" for reference lines and bars
	Bar    bool
}

// figure is a drawn chart, ready for the template.
type figure struct {
	ID, Title, Caption string
	SVG                template.HTML
	Legend             []legendEntry
	Points             int // data points drawn
}

// Chart size: wide enough for long axis labels, short enough that two
// fit on a screen.
const (
	chartWidth  = 7.2 * vg.Inch
	chartHeight = 3.4 * vg.Inch
)

// draw renders c as an inline SVG figure with an HTML legend. Points that
// are not finite cannot be drawn and are left out; the caption says how
// many.
func (c chart) draw() (figure, error) {
	p := plot.New()
	sansSerif(p)
	p.X.Label.Text = c.xLabel
	p.Y.Label.Text = c.yLabel
	p.X.Label.Padding = vg.Points(4)
	p.Y.Label.Padding = vg.Points(4)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xE4}
	grid.Horizontal.Color = color.Gray{Y: 0xE4}
	if len(c.bars) > 0 {
		grid.Vertical.Width = 0
	}
	p.Add(grid)

	fig := figure{ID: c.id, Title: c.title, Caption: c.caption}
	dropped := 0
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		xys := make(plotter.XYs, 0, len(s.xs))
		for i := range s.xs {
			x, y := s.xs[i], s.ys[i]
			if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) || (c.logX && x <= 0) {
				dropped++
				continue
			}
			xys = append(xys, plotter.XY{X: x, Y: y})
			xmin, xmax = min(xmin, x), max(xmax, x)
		}
		if len(xys) == 0 {
			continue
		}
		col, glyph, gname := styleOf(s.style)
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return figure{}, fmt.Errorf("report: plot %s: %w", c.id, err)
		}
		line.Color = col
		line.Width = vg.Points(1.6)
		if s.dashed {
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		points.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Points(2.6), Shape: glyph}
		if !s.noLine && len(xys) > 1 {
			p.Add(line)
		}
		if len(xys) <= 60 || s.noLine {
			p.Add(points)
		}
		fig.Points += len(xys)
		fig.Legend = append(fig.Legend, legendEntry{Name: s.name, Color: cssColor(col), Dashed: s.dashed, Marker: gname})
	}
	if len(c.refs) > 0 && !(xmin <= xmax) {
		xmin, xmax = 0, 1
	}
	if xmin == xmax {
		xmin, xmax = xmin-0.5, xmax+0.5
	}
	for _, r := range c.refs {
		if math.IsNaN(r.y) || math.IsInf(r.y, 0) {
			dropped++
			continue
		}
		col, _, _ := styleOf(r.style)
		line, err := plotter.NewLine(plotter.XYs{{X: xmin, Y: r.y}, {X: xmax, Y: r.y}})
		if err != nil {
			return figure{}, fmt.Errorf("report: plot %s: %w", c.id, err)
		}
		line.Color = col
		line.Width = vg.Points(1.2)
		line.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		p.Add(line)
		fig.Points++
		fig.Legend = append(fig.Legend, legendEntry{Name: r.name, Color: cssColor(col), Dashed: true})
	}
	if len(c.bars) > 0 {
		if err := addBars(p, c, &fig); err != nil {
			return figure{}, err
		}
	}
	if fig.Points == 0 {
		return figure{}, fmt.Errorf("report: plot %s: no finite data to draw", c.id)
	}
	switch {
	case c.logX:
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	case c.intX:
		p.X.Tick.Marker = intTicks{}
	case len(c.bars) == 0:
		p.X.Tick.Marker = niceTicks{}
	}
	p.Y.Tick.Marker = niceTicks{}
	if c.zeroY {
		p.Y.Min = 0
	}
	if c.zeroX {
		p.X.Min = 0
	}
	if dropped > 0 {
		fig.Caption = strings.TrimSpace(fig.Caption + fmt.Sprintf(" %s that could not be drawn (infinite or undefined) %s left out.", plural(dropped, "value"), wasWere(dropped)))
	}

	canvas := vgsvg.New(chartWidth, chartHeight)
	p.Draw(draw.New(canvas))
	var buf bytes.Buffer
	if _, err := canvas.WriteTo(&buf); err != nil {
		return figure{}, fmt.Errorf("report: plot %s: %w", c.id, err)
	}
	svg, err := inlineSVG(buf.Bytes(), c.title, fig.Points)
	if err != nil {
		return figure{}, fmt.Errorf("report: plot %s: %w", c.id, err)
	}
	fig.SVG = svg
	return fig, nil
}

// addBars adds c's grouped bar chart to p.
func addBars(p *plot.Plot, c chart, fig *figure) error {
	n := len(c.bars)
	width := vg.Points(math.Min(36, 300/float64(n*max(1, len(c.categories)))))
	for i, g := range c.bars {
		vals := make(plotter.Values, len(g.values))
		for j, v := range g.values {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0 // drawn as no bar; the table beside the chart has the value
			} else {
				fig.Points++
			}
			vals[j] = v
		}
		bc, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return fmt.Errorf("report: plot %s: %w", c.id, err)
		}
		col, _, _ := styleOf(g.style)
		bc.Color = col
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
		p.Add(bc)
		fig.Legend = append(fig.Legend, legendEntry{Name: g.name, Color: cssColor(col), Bar: true})
	}
	p.NominalX(c.categories...)
	// The bars of a group straddle their category; leave room for the
	// outer ones, and for the tallest bar under the top of the plot.
	p.X.Min, p.X.Max = -0.5, float64(len(c.categories))-0.5
	top := 0.0
	for _, g := range c.bars {
		for _, v := range g.values {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				top = max(top, v)
			}
		}
	}
	p.Y.Min, p.Y.Max = 0, top*1.08
	return nil
}

// sansSerif sets every text of p to Liberation Sans, the sans-serif face
// gonum/plot measures text with; the page's CSS falls back to
// metric-compatible Arial or Helvetica.
func sansSerif(p *plot.Plot) {
	p.Title.TextStyle.Font.Variant = "Sans"
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font.Variant = "Sans"
		a.Label.TextStyle.Font.Size = vg.Points(11)
		a.Tick.Label.Font.Variant = "Sans"
		a.Tick.Label.Font.Size = vg.Points(10)
	}
	p.Legend.TextStyle.Font.Variant = "Sans"
}

// intTicks marks whole numbers only, at a step of 1, 2 or 5 times a power
// of ten giving at most about ten ticks.
type intTicks struct{}

// Ticks implements plot.Ticker.
func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	step, mults, i := 1.0, []float64{2, 2.5, 2}, 0 // 1, 2, 5, 10, 20, 50, …
	for (hi-lo)/step > 10 {
		step *= mults[i%3]
		i++
	}
	var ticks []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi; v += step {
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
	}
	return ticks
}

// niceTicks labels about six values at a step of 1, 2, 2.5 or 5 times a
// power of ten, with a minor tick between labels; negative values get a
// true minus sign and long integers thin spaces between digit groups.
type niceTicks struct{}

// Ticks implements plot.Ticker.
func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	raw := span / 6
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	if math.Abs(step*math.Pow(10, float64(prec))-math.Round(step*math.Pow(10, float64(prec)))) > 1e-9 {
		prec++ // 2.5 × 10^n
	}
	first := math.Ceil(lo/step - 1e-9)
	var ticks []plot.Tick
	for i := 0; ; i++ {
		v := (first + float64(i)) * step
		if v > hi+step*1e-9 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: groupDigits(strconv.FormatFloat(v, 'f', prec, 64))})
		if m := v + step/2; m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	if m := first*step - step/2; m >= lo {
		ticks = append(ticks, plot.Tick{Value: m})
	}
	return ticks
}

// svgStart matches the XML prolog and the size attributes of the root
// element that vgsvg writes.
var svgStart = regexp.MustCompile(`(?s)^.*?<svg width="[^"]*" height="[^"]*"`)

// inlineSVG turns a standalone SVG document into an element for an HTML
// page: no XML prolog, sized by CSS through its viewBox, labelled for
// screen readers, and carrying the number of data points it draws.
func inlineSVG(doc []byte, title string, points int) (template.HTML, error) {
	loc := svgStart.FindIndex(doc)
	if loc == nil {
		return "", fmt.Errorf("unexpected SVG from vgsvg: %.60q", doc)
	}
	var b strings.Builder
	b.Grow(len(doc))
	fmt.Fprintf(&b, `<svg class="plot" role="img" aria-label="%s" data-points="%d"`, template.HTMLEscapeString(title), points)
	b.Write(doc[loc[1]:])
	return template.HTML(b.String()), nil // produced by vgsvg, which escapes its text
}

// cssColor returns c as #rrggbb.
func cssColor(c color.RGBA) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// wasWere agrees a verb with n.
func wasWere(n int) string {
	if n == 1 {
		return "was"
	}
	return "were"
}
