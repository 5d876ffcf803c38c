package http1

import (
	"context"
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
func readLine(t *testing.T, r *sse.Reader, clk *ReadClock) (string, time.Time) {
	t.Helper()
	line, _, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	return string(line), clk.At
}

// A line is timed with the kernel's receive time of its Read's bytes when
// the body knows it, else when the Read returned; never before the floor
// nor before the line before.
func TestClockStampsLines(t *testing.T) {
	now := time.Now()
	wall := now.UnixNano()
	floor := now.Add(-20 * time.Millisecond)
	var clk ReadClock
	var delays hist.Few
	clk.Reset(&receiveReader{
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
	if clk.KernelTimed() {
		t.Error("kernelTimed with two reads timed at the read")
	}

	clk.Reset(&receiveReader{lines: []string{"a\n", "b\n"}, ns: []int64{wall - 1000, wall - 500}}, time.Time{}, nil)
	r.Reset(&clk)
	for range 2 {
		readLine(t, r, &clk)
	}
	if !clk.KernelTimed() {
		t.Error("not kernelTimed with every read stamped")
	}
	clk.Reset(strings.NewReader("a\n"), time.Time{}, nil)
	r.Reset(&clk)
	readLine(t, r, &clk)
	if clk.KernelTimed() {
		t.Error("kernelTimed over a reader without stamps")
	}
	clk.Reset(strings.NewReader(""), time.Time{}, nil)
	r.Reset(&clk)
	if _, _, err := r.Next(); err != io.EOF || clk.KernelTimed() {
		t.Errorf("an empty body: %v, kernelTimed %v", err, clk.KernelTimed())
	}

	// The floor alone: a stamp before it is moved up to it.
	clk.Reset(&receiveReader{lines: []string{"x\n"}, ns: []int64{wall - int64(time.Second)}}, floor, nil)
	r.Reset(&clk)
	if _, at := readLine(t, r, &clk); !at.Equal(floor) {
		t.Errorf("stamp before the floor: %v, want the floor %v", at, floor)
	}
}

// A last line without '\n' is timed by the read that brought its bytes
// (the state machine's reading, whichever receiver).
func TestClockLastLineAtTheEnd(t *testing.T) {
	h := &testHandler{done: make(chan struct{})}
	var x Exchange
	x.Init(h)
	before := time.Now()
	x.Body(context.Background(), strings.NewReader("data: x"), before, &Send{Record: &h.rec, Stream: true})
	if len(h.lines) != 1 || h.at[0].Before(before) || h.reads[0] != 1 {
		t.Errorf("lines %q, stamped %v before the read, read %v", h.lines, before.Sub(h.at[0]), h.reads)
	}
}

// A whole body is timed once, at its newest bytes' receive time, and never
// before the floor.
func TestWholeArrival(t *testing.T) {
	whole := func(r io.Reader, floor time.Time) (time.Time, bool) {
		h := &testHandler{done: make(chan struct{})}
		var x Exchange
		x.Init(h)
		x.Body(context.Background(), r, floor, &Send{Record: &h.rec})
		if len(h.at) != 1 || h.whole == "" {
			t.Fatalf("whole body: %+v", h)
		}
		return h.at[0], h.rec.KernelTimed
	}
	now := time.Now()
	wall := now.UnixNano()
	body := func() io.Reader {
		return &receiveReader{lines: []string{"{\"a\":", "1}"}, ns: []int64{wall - int64(20*time.Millisecond), wall - int64(8*time.Millisecond)}}
	}
	at, kernel := whole(body(), now.Add(-time.Second))
	if d := now.Sub(at); !kernel || d < 7*time.Millisecond || d > 9*time.Millisecond {
		t.Errorf("whole body: %v ago, kernel %v; want 8 ms ago, kernel", d, kernel)
	}
	if at, _ = whole(body(), now); !at.Equal(now) {
		t.Errorf("before the floor: %v, want the floor", at)
	}
	if at, kernel = whole(strings.NewReader("{}"), time.Time{}); kernel || at.Before(now) {
		t.Errorf("a body without receive times: kernel %v, %v before now", kernel, now.Sub(at))
	}
}
