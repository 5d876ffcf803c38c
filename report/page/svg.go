// Package page writes benchserve's HTML pages (report and compare): one
// self-contained file, its charts SVG written here (no script, no
// network at view time, vector for print), each data point a circle with
// a <title> the browser shows on hover.
package page

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// Series is one line (or set of points) of a chart.
type Series struct {
	Name string    `json:"name"`
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
}

// Ref is a reference line: an SLO bound (horizontal) or a load (vertical).
type Ref struct {
	At    float64 `json:"at"`
	Label string  `json:"label"`
}

// Chart is one SVG chart.
type Chart struct {
	ID     string   `json:"id"`
	Title  string   `json:"title"`
	XLabel string   `json:"x_label"`
	YLabel string   `json:"y_label"`
	Series []Series `json:"series"`
	// Bars draws the first series as a histogram: X are the bins' left
	// edges, Width their width.
	Bars  bool    `json:"bars,omitempty"`
	Width float64 `json:"bin_width,omitempty"`
	// Scatter draws points without joining them.
	Scatter bool  `json:"scatter,omitempty"`
	HRefs   []Ref `json:"h_refs,omitempty"`
	VRefs   []Ref `json:"v_refs,omitempty"`
	// Band shades [Band[0], Band[1]] on the x axis (a search's interval).
	Band []float64 `json:"band,omitempty"`
}

const (
	svgW, svgH                     = 760, 330
	padL, padR, padT, padB float64 = 70, 20, 34, 52
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

// SVG renders c.
func (c *Chart) SVG() string {
	x0, x1, y0, y1 := c.bounds()
	xt, yt := ticks(x0, x1), ticks(0, 0)
	if y0 < y1 {
		yt = ticks(y0, y1)
	}
	if len(xt) > 1 {
		x0, x1 = math.Min(x0, xt[0]), math.Max(x1, xt[len(xt)-1])
	}
	if len(yt) > 1 {
		y0, y1 = math.Min(y0, yt[0]), math.Max(y1, yt[len(yt)-1])
	}
	pw, ph := svgW-padL-padR, svgH-padT-padB
	sx := func(v float64) float64 { return padL + (v-x0)/(x1-x0)*pw }
	sy := func(v float64) float64 { return padT + ph - (v-y0)/(y1-y0)*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" viewBox="0 0 %d %d" role="img" aria-label="%s">`, c.ID, svgW, svgH, esc(c.Title))
	fmt.Fprintf(&b, `<text class="title" x="%d" y="20">%s</text>`, svgW/2, esc(c.Title))
	fmt.Fprintf(&b, `<rect class="plot" x="%g" y="%g" width="%g" height="%g"/>`, padL, padT, pw, ph)
	if len(c.Band) == 2 {
		a, z := sx(c.Band[0]), sx(c.Band[1])
		fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%g" width="%.1f" height="%g"><title>%s to %s</title></rect>`, a, padT, math.Max(z-a, 1), ph, num(c.Band[0]), num(c.Band[1]))
	}
	for _, t := range xt {
		fmt.Fprintf(&b, `<line class="grid" x1="%.1f" x2="%.1f" y1="%g" y2="%g"/><text class="tick" x="%.1f" y="%g" text-anchor="middle">%s</text>`,
			sx(t), sx(t), padT, padT+ph, sx(t), padT+ph+16, num(t))
	}
	for _, t := range yt {
		fmt.Fprintf(&b, `<line class="grid" x1="%g" x2="%g" y1="%.1f" y2="%.1f"/><text class="tick" x="%g" y="%.1f" text-anchor="end">%s</text>`,
			padL, padL+pw, sy(t), sy(t), padL-6, sy(t)+4, num(t))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%g" y="%d" text-anchor="middle">%s</text>`, padL+pw/2, svgH-10, esc(c.XLabel))
	fmt.Fprintf(&b, `<text class="axis" transform="translate(16 %g) rotate(-90)" text-anchor="middle">%s</text>`, padT+ph/2, esc(c.YLabel))
	for i, s := range c.Series {
		col := palette[i%len(palette)]
		fmt.Fprintf(&b, `<g class="series" data-name="%s" data-points="%d" fill="%s" stroke="%s">`, esc(s.Name), len(s.X), col, col)
		switch {
		case c.Bars && i == 0:
			for k := range s.X {
				x, w := sx(s.X[k]), sx(s.X[k]+c.Width)-sx(s.X[k])
				fmt.Fprintf(&b, `<rect class="pt" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s–%s: %s</title></rect>`,
					x, sy(s.Y[k]), math.Max(w-1, 0.5), sy(y0)-sy(s.Y[k]), num(s.X[k]), num(s.X[k]+c.Width), num(s.Y[k]))
			}
		default:
			if !c.Scatter && len(s.X) > 1 {
				var d strings.Builder
				for k := range s.X {
					cmd := "L"
					if k == 0 {
						cmd = "M"
					}
					fmt.Fprintf(&d, "%s%.1f %.1f", cmd, sx(s.X[k]), sy(s.Y[k]))
				}
				fmt.Fprintf(&b, `<path class="line" fill="none" d="%s"/>`, d.String())
			}
			r := 2.5
			if c.Scatter {
				r = 1.8
			}
			for k := range s.X {
				fmt.Fprintf(&b, `<circle class="pt" cx="%.1f" cy="%.1f" r="%g"><title>%s: %s = %s, %s = %s</title></circle>`,
					sx(s.X[k]), sy(s.Y[k]), r, esc(s.Name), esc(c.XLabel), num(s.X[k]), esc(c.YLabel), num(s.Y[k]))
			}
		}
		b.WriteString(`</g>`)
	}
	for _, h := range c.HRefs {
		if h.At >= y0 && h.At <= y1 {
			fmt.Fprintf(&b, `<line class="ref" x1="%g" x2="%g" y1="%.1f" y2="%.1f"><title>%s</title></line><text class="reflabel" x="%g" y="%.1f" text-anchor="end">%s</text>`,
				padL, padL+pw, sy(h.At), sy(h.At), esc(h.Label), padL+pw-4, sy(h.At)-4, esc(h.Label))
		}
	}
	for _, v := range c.VRefs {
		if v.At >= x0 && v.At <= x1 {
			fmt.Fprintf(&b, `<line class="ref" x1="%.1f" x2="%.1f" y1="%g" y2="%g"><title>%s</title></line><text class="reflabel" x="%.1f" y="%g">%s</text>`,
				sx(v.At), sx(v.At), padT, padT+ph, esc(v.Label), sx(v.At)+4, padT+12, esc(v.Label))
		}
	}
	if len(c.Series) > 1 {
		for i, s := range c.Series {
			y := padT + 14 + float64(i)*15
			fmt.Fprintf(&b, `<g class="legend"><rect x="%g" y="%g" width="10" height="10" fill="%s"/><text x="%g" y="%g">%s</text></g>`,
				padL+10, y-9, palette[i%len(palette)], padL+24, y, esc(s.Name))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// bounds are the data's extent, with room for the reference lines; the
// y axis starts at 0 for non-negative data.
func (c *Chart) bounds() (x0, x1, y0, y1 float64) {
	x0, y0 = math.Inf(1), math.Inf(1)
	x1, y1 = math.Inf(-1), math.Inf(-1)
	for i, s := range c.Series {
		for k := range s.X {
			x, y := s.X[k], s.Y[k]
			if c.Bars && i == 0 {
				x1 = math.Max(x1, x+c.Width)
			}
			x0, x1, y0, y1 = math.Min(x0, x), math.Max(x1, x), math.Min(y0, y), math.Max(y1, y)
		}
	}
	for _, h := range c.HRefs {
		y1 = math.Max(y1, h.At*1.05)
	}
	for _, v := range c.VRefs {
		x0, x1 = math.Min(x0, v.At), math.Max(x1, v.At)
	}
	if len(c.Band) == 2 {
		x0, x1 = math.Min(x0, c.Band[0]), math.Max(x1, c.Band[1])
	}
	if math.IsInf(x0, 1) {
		return 0, 1, 0, 1
	}
	if y0 > 0 {
		y0 = 0
	}
	if x1 <= x0 {
		x0, x1 = x0-1, x1+1
	}
	if y1 <= y0 {
		y1 = y0 + 1
	}
	return x0, x1, y0, y1
}

// ticks are about 6 round values (1, 2 or 5 times a power of ten) over
// [a, b].
func ticks(a, b float64) []float64 {
	if !(b > a) || math.IsInf(a, 0) || math.IsInf(b, 0) {
		return nil
	}
	raw := (b - a) / 6
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			step = m * p
			break
		}
	}
	var out []float64
	for v := math.Floor(a/step) * step; v <= b+step*0.5; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// num is a value for a label: up to 4 significant digits.
func num(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e5 || math.Abs(v) < 1e-3:
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.4g", v)
}

func esc(s string) string { return html.EscapeString(s) }
