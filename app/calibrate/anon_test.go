package calibrate

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseRssAnon(t *testing.T) {
	status := "Name:\tbenchserve\nVmRSS:\t   51200 kB\nRssAnon:\t   20480 kB\nRssFile:\t   30720 kB\n"
	for _, c := range []struct {
		name, text string
		want       int64
		ok         bool
	}{
		{"a live process", status, 20480, true},
		{"the last line, no newline", "VmRSS:\t 10 kB\nRssAnon:\t 7 kB", 7, true},
		{"an exited process (no memory lines)", "Name:\tsleep\nState:\tZ (zombie)\n", 0, false},
		{"empty", "", 0, false},
		{"not RssAnon", "RssAnonX:\t5 kB\nVmRSS:\t5 kB\n", 0, false},
		{"another unit", "RssAnon:\t20 MB\n", 0, false},
		{"no number", "RssAnon:\t kB\n", 0, false},
		{"not a number", "RssAnon:\tmany kB\n", 0, false},
		{"negative", "RssAnon:\t-4 kB\n", 0, false},
	} {
		got, ok := parseRssAnon([]byte(c.text))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: parseRssAnon = %d, %v; want %d, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// The sampler reads at once and on every tick, keeps the largest value,
// skips failed reads and ends when stopped.
func TestSampleMax(t *testing.T) {
	values := []struct {
		kb int64
		ok bool
	}{{100, true}, {300, true}, {0, false}, {250, true}, {900, false}}
	var reads int
	read := func() (int64, bool) {
		v := values[reads]
		reads++
		return v.kb, v.ok
	}
	tick := make(chan time.Time)
	stop := make(chan struct{})
	type result struct {
		peak int64
		n    int
	}
	done := make(chan result)
	go func() {
		peak, n := sampleMax(read, tick, stop)
		done <- result{peak, n}
	}()
	for range len(values) - 1 { // an unbuffered send returns once the sampler has it
		tick <- time.Time{}
	}
	close(stop)
	r := <-done
	if reads != len(values) || r.peak != 300 || r.n != 3 {
		t.Errorf("%d reads, peak %d from %d; want %d reads, peak 300 from 3", reads, r.peak, r.n, len(values))
	}

	// No successful read: nothing measured.
	stop = make(chan struct{})
	close(stop)
	if peak, n := sampleMax(func() (int64, bool) { return 5, false }, nil, stop); peak != 0 || n != 0 {
		t.Errorf("no successful read: peak %d from %d", peak, n)
	}
}

func TestPerStreamKB(t *testing.T) {
	a := Scale{Streams: 1000, Completed: 1000, PeakAnonMB: 30}
	b := Scale{Streams: 10000, Completed: 10000, PeakAnonMB: 100.3125}
	// 70.3125 MiB over 9,000 streams: 8 KiB a stream.
	if got := perStreamKB(a, b); math.Abs(got-8) > 1e-9 {
		t.Errorf("perStreamKB = %v, want 8", got)
	}
	failed := b
	failed.Completed = -1
	noAnon := b
	noAnon.PeakAnonMB = math.NaN()
	for name, c := range map[string][2]Scale{"a failed run": {a, failed}, "the same count": {a, a}, "not measured": {a, noAnon}} {
		if got := perStreamKB(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("%s: perStreamKB = %v, want NaN", name, got)
		}
	}
}

func TestWriteSlope(t *testing.T) {
	slope := func(scs ...Scale) string {
		var b strings.Builder
		writeSlope(&b, scs)
		return b.String()
	}
	a := Scale{Streams: 1000, Completed: 1000, PeakAnonMB: 30}
	b := Scale{Streams: 10000, Completed: 10000, PeakAnonMB: 100.3125}
	if got, want := slope(a, Scale{Streams: 5000}, b), "\nKB per stream (RssAnon slope, 1,000→10,000): 8.0\n"; got != want {
		t.Errorf("slope line %q, want %q", got, want)
	}
	b.PeakAnonMB = math.NaN() // not Linux
	if got, want := slope(a, b), "\nKB per stream (RssAnon slope, 1,000→10,000): -\n"; got != want {
		t.Errorf("slope line %q, want %q", got, want)
	}
	if got := slope(a); got != "" {
		t.Errorf("one scale point: %q, want no line", got)
	}
}

func TestScaleCounts(t *testing.T) {
	for _, c := range []struct {
		in   []int
		want string
	}{
		{nil, ""}, {[]int{0}, ""}, {[]int{10000, 1000}, "1,000 and 10,000"}, {[]int{500, 500}, "500"},
		{[]int{3, 1000000, 20}, "3, 20 and 1,000,000"},
	} {
		got, err := Options{ScaleStreams: c.in, ScaleOutputLen: 32}.scaleCounts()
		if err != nil || countList(got) != c.want {
			t.Errorf("scaleCounts(%v) = %v, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, o := range []Options{{ScaleStreams: []int{1000, 0}, ScaleOutputLen: 32}, {ScaleStreams: []int{-1}, ScaleOutputLen: 32}} {
		if err := o.Check(); err == nil || !strings.HasPrefix(err.Error(), "--scale-streams: ") {
			t.Errorf("Check(%v) = %v, want an error naming --scale-streams", o.ScaleStreams, err)
		}
	}
	if err := (Options{ScaleStreams: []int{1000}}).Check(); err == nil || !strings.HasPrefix(err.Error(), "--scale-output-len ") {
		t.Errorf("Check(no output length) = %v", err)
	}
	if err := (Options{ScaleStreams: []int{0}}).Check(); err != nil {
		t.Errorf("Check(scale points skipped) = %v", err)
	}
}
