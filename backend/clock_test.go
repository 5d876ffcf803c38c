package backend

import (
	"io"
	"strings"
	"testing"
	"time"

	"benchserve/internal/hist"
	"benchserve/wire/sse"
)

// receiveReader returns one line a Read, each with the receive time the
// test gives it.
type receiveReader struct {
	lines []string
	ns    []int64
	last  int64
}

func (r *receiveReader) Read(p []byte) (int, error) {
	if len(r.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.lines[0])
	r.lines, r.last, r.ns = r.lines[1:], r.ns[0], r.ns[1:]
	return n, nil
}

func (r *receiveReader) LastArrival() int64 { return r.last }

// readLine reads one line through clk and returns it with its time.
func readLine(t *testing.T, r *sse.Reader, clk *readClock) (string, time.Time) {
	t.Helper()
	line, _, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return string(line), clk.at
}

// A line is timed with the kernel's receive time of its Read's bytes when
// the body knows it, else when the Read returned; never before the floor
// nor before the line before.
func TestClockStampsLines(t *testing.T) {
	now := time.Now()
	wall := now.UnixNano()
	floor := now.Add(-20 * time.Millisecond)
	var clk readClock
	var delays hist.Few
	clk.reset(&receiveReader{
		lines: []string{"data: a\n", "data: b\n", "data: c\n", "data: d\n", "data: e\n"},
		ns: []int64{
			wall - int64(10*time.Millisecond), // arrived 10 ms ago
			wall - int64(30*time.Millisecond), // before the floor (a stepped clock)
			wall - int64(5*time.Millisecond),  // 5 ms ago
			0,                                 // unknown: the read's own time
			wall + int64(time.Hour),           // in the future: the read's own time
		},
	}, floor, &delays)
	r := sse.NewReader(&clk, 0)
	want := []struct {
		line     string
		min, max time.Duration // from now
		kernel   bool          // a delay is counted
	}{
		{"data: a", -10 * time.Millisecond, -10 * time.Millisecond, true},
		{"data: b", -10 * time.Millisecond, -10 * time.Millisecond, true}, // not before the line before
		{"data: c", -5 * time.Millisecond, -5 * time.Millisecond, true},
		{"data: d", 0, time.Second, false},
		{"data: e", 0, time.Second, false},
	}
	slack := time.Millisecond // the wall and monotonic clocks, read apart
	for i, w := range want {
		line, at := readLine(t, r, &clk)
		d := at.Sub(now)
		if line != w.line || d < w.min-slack || d > w.max+slack {
			t.Errorf("%q at %v from now, want %q within [%v, %v]", line, d, w.line, w.min, w.max)
		}
		if (clk.delay > 0) != w.kernel {
			t.Errorf("%q: delay %v, kernel-timed %v", line, clk.delay, w.kernel)
		}
		if got := delays.Count(); i < 3 && got != uint64(i+1) || i >= 3 && got != 3 {
			t.Errorf("after %q: %d delays counted", line, got)
		}
	}
	if clk.kernelTimed() {
		t.Error("kernelTimed with two reads timed at the read")
	}

	clk.reset(&receiveReader{lines: []string{"a\n", "b\n"}, ns: []int64{wall - 1000, wall - 500}}, time.Time{}, nil)
	r.Reset(&clk)
	for range 2 {
		readLine(t, r, &clk)
	}
	if !clk.kernelTimed() {
		t.Error("not kernelTimed with every read stamped")
	}
	clk.reset(strings.NewReader("a\n"), time.Time{}, nil)
	r.Reset(&clk)
	readLine(t, r, &clk)
	if clk.kernelTimed() {
		t.Error("kernelTimed over a reader without stamps")
	}
	clk.reset(strings.NewReader(""), time.Time{}, nil)
	r.Reset(&clk)
	if _, _, err := r.Next(); err != io.EOF || clk.kernelTimed() {
		t.Errorf("an empty body: %v, kernelTimed %v", err, clk.kernelTimed())
	}

	// The floor alone: a stamp before it is moved up to it.
	clk.reset(&receiveReader{lines: []string{"x\n"}, ns: []int64{wall - int64(time.Second)}}, floor, nil)
	r.Reset(&clk)
	if _, at := readLine(t, r, &clk); !at.Equal(floor) {
		t.Errorf("stamp before the floor: %v, want the floor %v", at, floor)
	}
}

// A last line without '\n' is timed by the Read that ended the stream.
func TestClockLastLineAtTheEnd(t *testing.T) {
	var clk readClock
	clk.reset(strings.NewReader("data: x"), time.Time{}, nil)
	r := sse.NewReader(&clk, 0)
	before := time.Now()
	_, at := readLine(t, r, &clk)
	if at.Before(before) || clk.reads != 1 {
		t.Errorf("stamped %v before the read, %d reads", before.Sub(at), clk.reads)
	}
}

// A whole body is timed once, at its newest bytes' receive time, and never
// before the floor.
func TestWholeArrival(t *testing.T) {
	now := time.Now()
	wall := now.UnixNano()
	body := &receiveReader{last: wall - int64(8*time.Millisecond)}
	at, kernel := wholeArrival(body, 10, now.Add(-time.Second))
	if d := now.Sub(at); !kernel || d < 7*time.Millisecond || d > 9*time.Millisecond {
		t.Errorf("whole body: %v ago, kernel %v; want 8 ms ago, kernel", d, kernel)
	}
	if at, _ = wholeArrival(body, 10, now); !at.Equal(now) {
		t.Errorf("before the floor: %v, want the floor", at)
	}
	if _, kernel = wholeArrival(body, 0, time.Time{}); kernel {
		t.Error("an empty body kernel-timed")
	}
	if at, kernel = wholeArrival(strings.NewReader(""), 10, time.Time{}); kernel || at.Before(now) {
		t.Errorf("a body without receive times: kernel %v, %v before now", kernel, now.Sub(at))
	}
}
