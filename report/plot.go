package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"benchserve/metrics"
)

// Plot draws --plot-throughput's two charts, output tokens and concurrent
// requests per second, as text. The reference draws the same series with
// termplotlib and gnuplot; this needs neither.
func Plot(w io.Writer, s metrics.Summary) error {
	if len(s.TokensPerSecond) == 0 {
		_, err := fmt.Fprintln(w, "(no successful request: nothing to plot)")
		return err
	}
	var b strings.Builder
	chart(&b, "Output tokens per second", s.TokensPerSecond)
	chart(&b, "Concurrent requests per second", s.ConcurrentPerSecond)
	_, err := io.WriteString(w, b.String())
	return err
}

const (
	plotRows = 10
	plotCols = 60
	// minCols: a short run's seconds are drawn wider, so that its time
	// labels fit under the chart apart.
	minCols = 20
)

// chart draws ys as columns of '*' (each column the largest value of the
// seconds it covers), with the y range on the left and time below.
func chart(b *strings.Builder, title string, ys []int) {
	cols := min(len(ys), plotCols)
	per := (len(ys) + cols - 1) / cols // seconds per column
	cols = (len(ys) + per - 1) / per
	col := make([]int, cols)
	top := 0
	for i, y := range ys {
		col[i/per] = max(col[i/per], y)
		top = max(top, y)
	}
	w := 1 // characters per column
	if cols < minCols {
		w = (minCols + cols - 1) / cols
	}
	label := strconv.Itoa(top)
	pad := len(label)
	fmt.Fprintf(b, "%s\n", title)
	for r := plotRows; r >= 1; r-- {
		switch r {
		case plotRows:
			fmt.Fprintf(b, "%*s |", pad, label)
		case 1:
			fmt.Fprintf(b, "%*s |", pad, "0")
		default:
			fmt.Fprintf(b, "%*s |", pad, "")
		}
		for _, v := range col {
			// A column reaches row r when v is at least r/rows of the top;
			// any non-zero value shows at least one mark.
			mark := " "
			if top > 0 && (v*plotRows >= r*top || (r == 1 && v > 0)) {
				mark = "*"
			}
			b.WriteString(strings.Repeat(mark, w))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "%*s +%s\n", pad, "", strings.Repeat("-", cols*w))
	if len(ys) == 1 { // one second: one label
		fmt.Fprintf(b, "%*s  0 s\n\n", pad, "")
		return
	}
	// The first second's label under the first column, the last one's
	// ending under the last, at least a space between them.
	end := strconv.Itoa(len(ys)-1) + " s"
	fmt.Fprintf(b, "%*s  0%*s\n\n", pad, "", max(cols*w-1, len(end)+1), end)
}
