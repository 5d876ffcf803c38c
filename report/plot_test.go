package report

import (
	"strings"
	"testing"

	"benchserve/metrics"
)

func TestPlot(t *testing.T) {
	var b strings.Builder
	s := metrics.Summary{TokensPerSecond: []int{0, 5, 10, 10, 2}, ConcurrentPerSecond: []int{1, 2, 2, 2, 1}}
	if err := Plot(&b, s); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// 5 seconds, 4 characters each: 20 columns.
	want := "Output tokens per second\n" +
		"10 |        ********    \n" +
		"   |        ********    \n" +
		"   |        ********    \n" +
		"   |        ********    \n" +
		"   |        ********    \n" +
		"   |    ************    \n" +
		"   |    ************    \n" +
		"   |    ************    \n" +
		"   |    ****************\n" +
		" 0 |    ****************\n" +
		"   +--------------------\n" +
		"    0                4 s\n\n"
	if !strings.HasPrefix(out, want) {
		t.Errorf("got\n%s\nwant prefix\n%s", out, want)
	}
	if !strings.Contains(out, "Concurrent requests per second\n2 |") {
		t.Errorf("no concurrency chart:\n%s", out)
	}

	// A long run is folded into at most plotCols columns.
	long := make([]int, 1000)
	long[999] = 7
	b.Reset()
	Plot(&b, metrics.Summary{TokensPerSecond: long, ConcurrentPerSecond: long})
	for _, line := range strings.Split(b.String(), "\n") {
		if len(line) > plotCols+8 {
			t.Errorf("line too wide (%d): %q", len(line), line)
		}
	}
	b.Reset()
	Plot(&b, metrics.Summary{})
	if !strings.Contains(b.String(), "nothing to plot") {
		t.Errorf("empty plot: %q", b.String())
	}
}

// A short run (2 s: seconds 0, 1 and 2) has its time labels apart, under
// a chart of at least minCols columns; a one-second run has one label.
func TestPlotShortRun(t *testing.T) {
	for _, c := range []struct {
		ys   []int
		axis string
	}{
		{[]int{3, 7, 1}, "  +---------------------\n   0                 2 s\n"},
		{[]int{3, 7}, "  +--------------------\n   0                1 s\n"},
		{[]int{3}, "  +--------------------\n   0 s\n"},
	} {
		var b strings.Builder
		chart(&b, "t", c.ys)
		if !strings.HasSuffix(b.String(), c.axis+"\n") {
			t.Errorf("%v:\n%s\nwant the axis\n%s", c.ys, b.String(), c.axis)
		}
	}
}
