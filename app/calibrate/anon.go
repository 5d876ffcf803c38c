package calibrate

import (
	"bytes"
	"math"
	"strconv"
	"time"
)

// anonInterval is how often a client's anonymous memory is read while it
// runs. The Go heap's resident pages grow in steps and are given back
// slowly, so a peak lasts far longer than this.
const anonInterval = 10 * time.Millisecond

// parseRssAnon reads the RssAnon field of a /proc/PID/status text, in
// KiB; false when it is absent (a process that has exited has none).
func parseRssAnon(status []byte) (int64, bool) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("RssAnon:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, false
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 {
			return 0, false
		}
		return kb, true
	}
	return 0, false
}

// sampleMax reads once, then on each tick until stop is closed, and
// returns the largest value read and how many reads succeeded.
func sampleMax(read func() (int64, bool), tick <-chan time.Time, stop <-chan struct{}) (peak int64, n int) {
	take := func() {
		if v, ok := read(); ok {
			peak, n = max(peak, v), n+1
		}
	}
	take()
	for {
		select {
		case <-stop:
			return peak, n
		case <-tick:
			take()
		}
	}
}

// watchAnon samples the peak anonymous memory of the running process pid
// until the returned function is called, which gives it in MB (MiB); NaN
// where the system does not tell it.
func watchAnon(pid int) func() float64 {
	read, closeFn := anonReader(pid)
	if read == nil {
		return func() float64 { return math.NaN() }
	}
	t := time.NewTicker(anonInterval)
	stop := make(chan struct{})
	done := make(chan float64, 1)
	go func() {
		peak, n := sampleMax(read, t.C, stop)
		if n == 0 {
			done <- math.NaN()
			return
		}
		done <- float64(peak) / 1024
	}()
	return func() float64 {
		t.Stop()
		close(stop)
		v := <-done
		closeFn()
		return v
	}
}

// perStreamKB is the slope of peak anonymous memory between two scale
// points, in KiB per stream; NaN unless both were measured and their
// stream counts differ.
func perStreamKB(a, b Scale) float64 {
	if a.Completed < 0 || b.Completed < 0 || a.Streams == b.Streams {
		return math.NaN()
	}
	return (b.PeakAnonMB - a.PeakAnonMB) * 1024 / float64(b.Streams-a.Streams)
}

// memCell is a memory figure for a table cell: "-" when not measured.
func memCell(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}
