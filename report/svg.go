package report

import (
	"fmt"
	"html"
	"math"
	"strings"
)

type pt struct{ x, y float64 }

type series struct {
	pts       []pt
	color     string
	label     string
	secondary bool // drawn against the right axis
	dotsOnly  bool
	dashed    bool
}

// chart is an x–y plot with a left axis and an optional right one.
type chart struct {
	xLabel, yLabel, y2Label string
	series                  []series
}

const (
	cw, ch                 = 940, 340
	padL, padR, padT, padB = 70, 80, 30, 50
)

func newChart(x, y, y2 string) *chart { return &chart{xLabel: x, yLabel: y, y2Label: y2} }

func (c *chart) line(p []pt, color, label string, secondary bool) {
	c.series = append(c.series, series{pts: p, color: color, label: label, secondary: secondary})
}

func (c *chart) dots(p []pt, color string) {
	c.series = append(c.series, series{pts: p, color: color, dotsOnly: true})
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var out []float64
	for v := math.Floor(lo/step) * step; v <= hi+step*1e-9; v += step {
		if v >= lo-step*1e-9 {
			out = append(out, v)
		}
	}
	return out
}

func fmtTick(v float64) string {
	if math.Abs(v) < 1e-12 {
		return "0"
	}
	s := fmt.Sprintf("%.4g", v)
	return strings.Replace(s, "-", "−", 1)
}

// bounds of the series on one axis, padded so lines do not touch the frame.
func bounds(ss []series, secondary bool) (xlo, xhi, ylo, yhi float64, ok bool) {
	xlo, ylo = math.Inf(1), math.Inf(1)
	xhi, yhi = math.Inf(-1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.pts {
			xlo, xhi = math.Min(xlo, p.x), math.Max(xhi, p.x)
			if s.secondary == secondary {
				ylo, yhi = math.Min(ylo, p.y), math.Max(yhi, p.y)
				ok = true
			}
		}
	}
	if !ok {
		return 0, 1, 0, 1, false
	}
	if yhi-ylo < 1e-9 {
		ylo, yhi = ylo-0.5, yhi+0.5
	}
	pad := (yhi - ylo) * 0.05
	return xlo, xhi, ylo - pad, yhi + pad, true
}

func (c *chart) svg() string {
	xlo, xhi, ylo, yhi, _ := bounds(c.series, false)
	_, _, y2lo, y2hi, has2 := bounds(c.series, true)
	xlo = math.Min(xlo, 0)
	if xhi <= xlo {
		xhi = xlo + 1
	}
	pw, ph := float64(cw-padL-padR), float64(ch-padT-padB)
	X := func(x float64) float64 { return padL + (x-xlo)/(xhi-xlo)*pw }
	Y := func(y, lo, hi float64) float64 { return padT + ph - (y-lo)/(hi-lo)*ph }

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, cw, ch, cw, ch)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`, padL, padT, pw, ph)
	for _, t := range niceTicks(xlo, xhi, 8) {
		x := X(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.1f" stroke="#eee"/>`, x, padT, x, padT+ph)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle">%s</text>`, x, padT+ph+16, fmtTick(t))
	}
	for _, t := range niceTicks(ylo, yhi, 6) {
		y := Y(t, ylo, yhi)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`, padL, y, padL+pw, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="12" text-anchor="end">%s</text>`, padL-6, y+4, fmtTick(t))
	}
	if has2 {
		for _, t := range niceTicks(y2lo, y2hi, 6) {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" fill="#b22">%s</text>`, padL+pw+6, Y(t, y2lo, y2hi)+4, fmtTick(t))
		}
		fmt.Fprintf(&b, `<text transform="translate(%.0f,%.0f) rotate(90)" font-size="13" text-anchor="middle" fill="#b22">%s</text>`,
			float64(cw)-18, padT+ph/2, html.EscapeString(c.y2Label))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%d" font-size="13" text-anchor="middle">%s</text>`, padL+pw/2, ch-10, html.EscapeString(c.xLabel))
	fmt.Fprintf(&b, `<text transform="translate(18,%.0f) rotate(-90)" font-size="13" text-anchor="middle">%s</text>`, padT+ph/2, html.EscapeString(c.yLabel))

	legendX := padL + 10.0
	for _, s := range c.series {
		lo, hi := ylo, yhi
		if s.secondary {
			lo, hi = y2lo, y2hi
		}
		if s.dotsOnly {
			for _, p := range s.pts {
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="1.8" fill="%s" fill-opacity="0.6"/>`, X(p.x), Y(p.y, lo, hi), s.color)
			}
			continue
		}
		var path strings.Builder
		for i, p := range s.pts {
			cmd := "L"
			if i == 0 {
				cmd = "M"
			}
			fmt.Fprintf(&path, "%s%.1f,%.1f ", cmd, X(p.x), Y(p.y, lo, hi))
		}
		if len(s.pts) == 1 {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`, X(s.pts[0].x), Y(s.pts[0].y, lo, hi), s.color)
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(&b, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`, strings.TrimSpace(path.String()), s.color, dash)
		if s.label != "" {
			// The legend sits above the frame, where it cannot hide a line.
			fmt.Fprintf(&b, `<line x1="%.0f" y1="%d" x2="%.0f" y2="%d" stroke="%s" stroke-width="3"/>`, legendX, padT-12, legendX+20, padT-12, s.color)
			fmt.Fprintf(&b, `<text x="%.0f" y="%d" font-size="12">%s</text>`, legendX+25, padT-8, html.EscapeString(s.label))
			legendX += 40 + 7*float64(len(s.label))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}

type bar struct {
	label string // "" for the second and later runs' bar of a category
	n     int
	total int // the share is of this run's episodes
	color string
}

// hbars draws labelled horizontal bars with counts and shares of their run's
// total, in groups of perGroup (one bar per overlaid run).
func hbars(bars []bar, total, perGroup int) string {
	const labelW, gap = 250, 8
	barH := 24
	if perGroup > 1 {
		barH = max(8, 24/perGroup+4)
	}
	h := padT + len(bars)*barH + (len(bars)/max(perGroup, 1))*gap + 40
	maxN := 1
	for _, b := range bars {
		maxN = max(maxN, b.n)
	}
	pw := float64(cw - labelW - 140)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`, cw, h, cw, h)
	for i, br := range bars {
		y := padT + i*barH + (i/max(perGroup, 1))*gap
		w := pw * float64(br.n) / float64(maxN)
		if br.label != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13" text-anchor="end">%s</text>`, labelW-8, y+min(barH*perGroup, 24)/2+5, html.EscapeString(br.label))
		}
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`, labelW, y, w, barH-1, br.color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="12">%d (%.1f%%)</text>`, float64(labelW)+w+6, y+barH/2+5, br.n, 100*float64(br.n)/float64(max(br.total, 1)))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13">number of episodes (of %d)</text>`, labelW, h-12, total)
	b.WriteString("</svg>\n")
	return b.String()
}

// histogram draws one histogram panel at x offset off, half the chart wide,
// with one bar per overlaid run in each bin. With step > 0 the values are
// multiples of step (failure rewards move in 0.1 per stage) and get one bin
// each, centred on them.
func histogram(runs [][]float64, off int, xLabel string, colors []string, nbins int, step float64) string {
	const w, h, pl, pr, pt, pb = cw / 2, 300, 60, 20, 30, 50
	var b strings.Builder
	fmt.Fprintf(&b, `<g transform="translate(%d,0)">`, off)
	pw, ph := float64(w-pl-pr), float64(h-pt-pb)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`, pl, pt, pw, ph)
	fmt.Fprintf(&b, `<text x="%.0f" y="%d" font-size="13" text-anchor="middle">%s</text>`, pl+pw/2, h-10, html.EscapeString(xLabel))
	fmt.Fprintf(&b, `<text transform="translate(16,%.0f) rotate(-90)" font-size="13" text-anchor="middle">episodes</text>`, pt+ph/2)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, vals := range runs {
		for _, v := range vals {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="13" fill="#666" text-anchor="middle">none</text></g>`, pl+pw/2, pt+ph/2)
		return b.String()
	}
	if step > 0 {
		nbins = min(max(int(math.Round((hi-lo)/step))+1, 1), 40)
		lo, hi = lo-step/2, hi+step/2
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-0.05, hi+0.05
	}
	counts := make([][]int, len(runs))
	maxC := 1
	for r, vals := range runs {
		counts[r] = make([]int, nbins)
		for _, v := range vals {
			i := min(max(int(float64(nbins)*(v-lo)/(hi-lo)), 0), nbins-1)
			counts[r][i]++
			maxC = max(maxC, counts[r][i])
		}
	}
	bw := pw / float64(nbins)
	sub := (bw - 2) / float64(len(runs))
	for r := range runs {
		for i, c := range counts[r] {
			bh := ph * float64(c) / float64(maxC)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%d</title></rect>`,
				pl+float64(i)*bw+1+float64(r)*sub, pt+ph-bh, sub, bh, colors[r], c)
		}
	}
	for _, t := range niceTicks(lo, hi, 5) {
		x := pl + (t-lo)/(hi-lo)*pw
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="12" text-anchor="middle">%s</text>`, x, pt+ph+16, fmtTick(t))
	}
	for _, t := range niceTicks(0, float64(maxC), 4) {
		y := pt + ph - ph*t/float64(maxC)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="12" text-anchor="end">%s</text>`, pl-6, y+4, fmtTick(t))
	}
	b.WriteString("</g>")
	return b.String()
}
