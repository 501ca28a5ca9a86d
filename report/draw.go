package report

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Sizes of the drawings. PNGs are drawn at pngDPI, so a chart 8 inches
// wide is 1200 pixels.
const (
	chartWidth  = 8 * vg.Inch
	panelHeight = 3.2 * vg.Inch
	pngDPI      = 150
)

// Save draws c into dir as Name.svg and Name.png.
func Save(dir string, c Chart) error {
	svg, png, err := Render(c)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, c.Name+".svg"), svg, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, c.Name+".png"), png, 0o644)
}

// Render draws c as SVG and as PNG.
func Render(c Chart) (svg, png []byte, err error) {
	if len(c.Panels) == 0 {
		return nil, nil, fmt.Errorf("report: chart %q has no panels", c.Name)
	}
	w, h := size(c)
	sc := vgsvg.New(w, h)
	if err := drawChart(draw.New(sc), c); err != nil {
		return nil, nil, err
	}
	var sb bytes.Buffer
	if _, err := sc.WriteTo(&sb); err != nil {
		return nil, nil, err
	}
	ic := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(pngDPI), vgimg.UseBackgroundColor(color.White))
	if err := drawChart(draw.New(ic), c); err != nil {
		return nil, nil, err
	}
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: ic}).WriteTo(&pb); err != nil {
		return nil, nil, err
	}
	return sb.Bytes(), pb.Bytes(), nil
}

// size returns a chart's drawing size: CDM panels are as tall as their
// rows need, other panels panelHeight each.
func size(c Chart) (w, h vg.Length) {
	for _, p := range c.Panels {
		if p.Kind == CDM {
			h += cdmHeight(p)
		} else {
			h += panelHeight
		}
	}
	return chartWidth, h
}

func drawChart(dc draw.Canvas, c Chart) (err error) {
	// gonum/plot panics on data it cannot draw (say, a log axis whose
	// range holds no positive value); that is an error of this chart.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("report: chart %q: %v", c.Name, r)
		}
	}()
	// Panels are stacked from the top; their heights differ for CDM.
	top := dc.Max.Y
	for i, p := range c.Panels {
		ph := panelHeight
		if p.Kind == CDM {
			ph = cdmHeight(p)
		}
		sub := dc
		sub.Max.Y, sub.Min.Y = top, top-ph
		top -= ph
		title := p.Title
		if i == 0 {
			title = join(c.Title, p.Title)
		}
		if p.Kind == CDM {
			drawCDM(sub, title, p)
			continue
		}
		pl, err := newPlot(title, p)
		if err != nil {
			return fmt.Errorf("report: chart %q: %w", c.Name, err)
		}
		pl.Draw(sub)
	}
	return nil
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ": " + b
}

// newPlot builds the gonum plot of a Lines, Steps or Bars panel.
func newPlot(title string, p Panel) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = title
	pl.X.Label.Text, pl.Y.Label.Text = p.XLabel, p.YLabel
	pl.Legend.Top = true
	pl.Add(plotter.NewGrid())
	pl.Y.Tick.Marker = numberTicks{}
	if p.Kind != Bars {
		pl.X.Tick.Marker = numberTicks{}
	}
	if p.LogX {
		pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	if p.LogY {
		pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	}
	switch p.Kind {
	case Lines:
		if !p.LogY {
			pl.Y.Min = 0 // rates start at nothing: a flat line must look flat
		}
		for i, s := range p.Series {
			if len(s.X) != len(s.Y) {
				return nil, fmt.Errorf("series %q: %d x for %d y", s.Label, len(s.X), len(s.Y))
			}
			pts := make(plotter.XYs, 0, len(s.X))
			for k := range s.X {
				if p.LogY && s.Y[k] <= 0 || p.LogX && s.X[k] <= 0 {
					continue // a log axis cannot show it
				}
				pts = append(pts, plotter.XY{X: s.X[k], Y: s.Y[k]})
			}
			if len(pts) == 0 {
				continue
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.Label, err)
			}
			l.Color = plotutil.Color(i)
			l.Width = vg.Points(1.5)
			pl.Add(l)
			if len(pts) <= 12 { // few points: show where they are
				sc, _ := plotter.NewScatter(pts)
				sc.GlyphStyle.Color, sc.GlyphStyle.Shape, sc.GlyphStyle.Radius = plotutil.Color(i), draw.CircleGlyph{}, vg.Points(2.5)
				pl.Add(sc)
			}
			if s.Label != "" && len(p.Series) > 1 { // one series: the title names it
				if err := labelEnd(pl, p, s.Label, pts[len(pts)-1], plotutil.Color(i)); err != nil {
					return nil, err
				}
			}
		}
	case Steps:
		for i, s := range p.Series {
			if len(s.X) != len(s.Y)+1 {
				return nil, fmt.Errorf("histogram %q: %d edges for %d bins", s.Label, len(s.X), len(s.Y))
			}
			// The outline closes at the baseline: 0, or on a log axis a
			// tenth of the lowest bin.
			base := 0.0
			if p.LogY {
				base = math.Inf(1)
				for _, y := range s.Y {
					if y > 0 {
						base = min(base, y/10)
					}
				}
				if math.IsInf(base, 1) {
					continue
				}
				pl.Y.Min = base
			}
			pts := plotter.XYs{{X: s.X[0], Y: base}}
			for k, y := range s.Y {
				y = max(y, base)
				pts = append(pts, plotter.XY{X: s.X[k], Y: y}, plotter.XY{X: s.X[k+1], Y: y})
			}
			poly, err := plotter.NewPolygon(append(pts, plotter.XY{X: s.X[len(s.X)-1], Y: base}))
			if err != nil {
				return nil, fmt.Errorf("histogram %q: %w", s.Label, err)
			}
			c := plotutil.Color(i)
			r, g, b, _ := c.RGBA()
			poly.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 0x80}
			poly.LineStyle.Color = c
			pl.Add(poly)
			if s.Label != "" && len(p.Series) > 1 {
				pl.Legend.Add(s.Label, poly)
			}
		}
	case Bars:
		if err := addBars(pl, p); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown panel kind %q", p.Kind)
	}
	return pl, nil
}

// addBars adds grouped bars: categories along x, one bar per series in
// each group, each bar labelled with its value.
func addBars(pl *plot.Plot, p Panel) error {
	n := len(p.Series)
	if n == 0 {
		return nil
	}
	groupW := chartWidth * 0.8 / vg.Length(max(len(p.Categories), 1))
	w := min(groupW*0.8/vg.Length(n), vg.Points(40))
	for i, s := range p.Series {
		if len(s.Y) != len(p.Categories) {
			return fmt.Errorf("series %q: %d values for %d categories", s.Label, len(s.Y), len(p.Categories))
		}
		b, err := plotter.NewBarChart(plotter.Values(s.Y), w)
		if err != nil {
			return fmt.Errorf("series %q: %w", s.Label, err)
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = (vg.Length(i) - vg.Length(n-1)/2) * w
		pl.Add(b)
		if n > 1 {
			pl.Legend.Add(s.Label, b)
		}
		labels, err := plotter.NewLabels(barLabels(s.Y, b.Offset))
		if err == nil {
			for k := range labels.TextStyle {
				labels.TextStyle[k].Font.Size = vg.Points(7)
				labels.TextStyle[k].XAlign = draw.XCenter
			}
			labels.Offset = vg.Point{X: b.Offset, Y: vg.Points(2)}
			pl.Add(labels)
		}
	}
	pl.NominalX(p.Categories...)
	// Room for the outer bars of the first and last groups, and above
	// the tallest bar for its label and the legend.
	pl.X.Min, pl.X.Max = -0.5, float64(len(p.Categories))-0.5
	top := 0.0
	for _, s := range p.Series {
		for _, v := range s.Y {
			top = max(top, v)
		}
	}
	pl.Y.Min = 0
	pl.Y.Max = max(top*1.2, 1)
	if len(p.Categories) > 6 { // long rows of names: slant them
		pl.X.Tick.Label.Rotation = math.Pi / 6
		pl.X.Tick.Label.XAlign, pl.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		pl.X.Tick.Label.Font.Size = vg.Points(8)
	}
	return nil
}

// barLabels places a value label on each bar.
func barLabels(y []float64, _ vg.Length) plotter.XYLabels {
	xy := make(plotter.XYs, len(y))
	labels := make([]string, len(y))
	for i, v := range y {
		xy[i] = plotter.XY{X: float64(i), Y: v}
		labels[i] = Number(v)
	}
	return plotter.XYLabels{XYs: xy, Labels: labels}
}

// Number formats a measured value for people: three significant digits,
// thousands without decimals.
func Number(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return "-"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a == 0:
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// CrystalDiskMark's look: a green test button, white value boxes.
var (
	cdmGreen  = color.NRGBA{R: 0x2e, G: 0x8b, B: 0x3e, A: 0xff}
	cdmBorder = color.NRGBA{R: 0x9a, G: 0x9a, B: 0x9a, A: 0xff}
	cdmText   = color.NRGBA{A: 0xff}
)

const (
	cdmRowH   = 0.62 * vg.Inch
	cdmHeadH  = 0.8 * vg.Inch
	cdmMargin = 0.15 * vg.Inch
)

func cdmHeight(p Panel) vg.Length {
	return cdmHeadH + vg.Length(len(p.Categories))*cdmRowH + cdmMargin
}

// drawCDM draws CrystalDiskMark's result panel: a title line, a header
// with the column units, then a row per test with its name on a green
// button and the read and write values in boxes.
func drawCDM(c draw.Canvas, title string, p Panel) {
	style := func(size vg.Length, clr color.Color, align draw.XAlignment) draw.TextStyle {
		return draw.TextStyle{Color: clr, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler,
			XAlign: align, YAlign: draw.YCenter}
	}
	rect := func(x0, y0, x1, y1 vg.Length, fill, line color.Color) {
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(fill, pts)
		c.StrokeLines(draw.LineStyle{Color: line, Width: vg.Points(1)}, append(pts, pts[0]))
	}
	x0, x1 := c.Min.X+cdmMargin, c.Max.X-cdmMargin
	y := c.Max.Y - cdmMargin
	c.FillText(style(13, cdmText, draw.XLeft), vg.Point{X: x0, Y: y - 0.15*vg.Inch}, title)
	y -= cdmHeadH
	labelW := (x1 - x0) * 0.22
	colW := (x1 - x0 - labelW) / vg.Length(max(len(p.Series), 1))
	for k, s := range p.Series {
		cx := x0 + labelW + (vg.Length(k)+0.5)*colW
		c.FillText(style(12, cdmText, draw.XCenter), vg.Point{X: cx, Y: y + 0.2*vg.Inch}, s.Label+" [MB/s]")
	}
	pad := vg.Points(3)
	for r, cat := range p.Categories {
		top := y - vg.Length(r)*cdmRowH
		bot := top - cdmRowH + pad
		rect(x0, bot, x0+labelW-pad, top-pad, cdmGreen, cdmGreen)
		test, queue := splitTest(cat)
		mid := (top - pad + bot) / 2
		white := color.NRGBA{R: 0xff, G: 0xff, B: 0xff, A: 0xff}
		if queue == "" {
			c.FillText(style(12, white, draw.XCenter), vg.Point{X: x0 + (labelW-pad)/2, Y: mid}, test)
		} else {
			c.FillText(style(12, white, draw.XCenter), vg.Point{X: x0 + (labelW-pad)/2, Y: mid + 0.1*vg.Inch}, test)
			c.FillText(style(10, white, draw.XCenter), vg.Point{X: x0 + (labelW-pad)/2, Y: mid - 0.11*vg.Inch}, queue)
		}
		for k, s := range p.Series {
			bx := x0 + labelW + vg.Length(k)*colW
			rect(bx, bot, bx+colW-pad, top-pad, color.White, cdmBorder)
			v := "-"
			if r < len(s.Y) && !math.IsNaN(s.Y[r]) {
				v = strconv.FormatFloat(s.Y[r], 'f', 2, 64)
			}
			c.FillText(style(22, cdmText, draw.XRight), vg.Point{X: bx + colW - pad - 0.12*vg.Inch, Y: mid}, v)
		}
	}
}

// splitTest splits "SEQ1M Q8T1" into its two lines.
func splitTest(cat string) (string, string) {
	for i := range len(cat) {
		if cat[i] == ' ' {
			return cat[:i], cat[i+1:]
		}
	}
	return cat, ""
}

// numberTicks are gonum's default ticks labelled for people: 500k, not
// 500000.00.
type numberTicks struct{}

func (numberTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = tickLabel(ticks[i].Value)
		}
	}
	return ticks
}

// logTicks label 1, 2 and 5 times each power of ten when the axis spans
// few decades (gonum's log ticks label powers of ten only, which leaves a
// narrow axis with one label or none), powers of ten otherwise.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return plot.LogTicks{Prec: -1}.Ticks(max(lo, 1e-9), max(hi, lo*10))
	}
	steps := []float64{1, 2, 5}
	if math.Log10(hi/lo) > 3 {
		steps = []float64{1}
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		p := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * p
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			for _, s := range steps {
				if float64(m) == s {
					t.Label = tickLabel(v)
				}
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel formats an axis value compactly: 0.5, 20, 1500, 250k, 1.5M.
func tickLabel(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// labelEnd names a line at its last point, which reads better than a
// legend when several lines end apart (a legend box covers some of them),
// and widens the x axis so that the name fits.
func labelEnd(pl *plot.Plot, p Panel, label string, end plotter.XY, c color.Color) error {
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{end}, Labels: []string{label}})
	if err != nil {
		return err
	}
	l.TextStyle[0].Color = c
	l.TextStyle[0].YAlign = draw.YCenter
	l.TextStyle[0].Font.Size = vg.Points(9)
	l.Offset = vg.Point{X: vg.Points(5)}
	pl.Add(l)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range p.Series {
		for _, x := range s.X {
			lo, hi = min(lo, x), max(hi, x)
		}
	}
	if !p.LogX && hi > lo {
		pl.X.Max = max(pl.X.Max, hi+(hi-lo)*0.12)
	}
	return nil
}
