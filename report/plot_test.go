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
	want := "Output tokens per second\n" +
		"10 |  ** \n" +
		"   |  ** \n" +
		"   |  ** \n" +
		"   |  ** \n" +
		"   |  ** \n" +
		"   | *** \n" +
		"   | *** \n" +
		"   | *** \n" +
		"   | ****\n" +
		" 0 | ****\n" +
		"   +-----\n" +
		"    0 4 s\n\n"
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
