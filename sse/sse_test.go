package sse

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// splitReader returns at most 1..max bytes per Read, chosen at random.
type splitReader struct {
	data []byte
	rng  *rand.Rand
	max  int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1 + r.rng.IntN(r.max)
	n = min(n, len(r.data), len(p))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func readAll(t *testing.T, r *Reader) []string {
	t.Helper()
	var out []string
	for {
		line, _, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, string(line))
	}
}

func TestLinesInAnySplit(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"data: a\n\ndata: b\n\n", []string{"data: a", "data: b"}},
		{"data: a\r\n\r\ndata: b\r\n", []string{"data: a", "data: b"}},
		{"  x  \n\t\v\f\r\n y", []string{"x", "y"}},
		{"last without newline", []string{"last without newline"}},
		{"", nil},
		{"\n\n\n", nil},
		{"a\rb\n", []string{"a\rb"}},
		{strings.Repeat("z", 10000) + "\nshort\n", []string{strings.Repeat("z", 10000), "short"}},
	}
	for _, c := range cases {
		for seed := range 50 {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			sr := &splitReader{data: []byte(c.in), rng: rng, max: 1 + seed%9}
			got := readAll(t, NewReader(sr, 0))
			if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
				t.Fatalf("%q seed %d: got %q, want %q", c.in, seed, got, c.want)
			}
		}
	}
}

// timedReader records when each Read returned, and returns one piece per Read.
type timedReader struct {
	pieces []string
	times  []time.Time
}

func (r *timedReader) Read(p []byte) (int, error) {
	if len(r.pieces) == 0 {
		r.times = append(r.times, time.Now())
		return 0, io.EOF
	}
	n := copy(p, r.pieces[0])
	r.pieces[0] = r.pieces[0][n:]
	if r.pieces[0] == "" {
		r.pieces = r.pieces[1:]
	}
	time.Sleep(time.Millisecond) // make the instants distinct
	r.times = append(r.times, time.Now())
	return n, nil
}

func TestTimestampIsTheCompletingRead(t *testing.T) {
	// Read 0 brings two whole lines and the start of a third; read 1 ends it;
	// read 2 brings a line without '\n', completed by the EOF of read 3.
	tr := &timedReader{pieces: []string{"a\nb\nc", "c\n", "d"}}
	r := NewReader(tr, 0)
	wantRead := []int{0, 0, 1, 3}
	wantLine := []string{"a", "b", "cc", "d"}
	var ats []time.Time
	for i := 0; ; i++ {
		line, at, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(line) != wantLine[i] {
			t.Fatalf("line %d = %q, want %q", i, line, wantLine[i])
		}
		ats = append(ats, at)
	}
	if len(ats) != len(wantRead) {
		t.Fatalf("got %d lines", len(ats))
	}
	// time.Now() taken inside Read precedes the Reader's stamp, and the next
	// Read's stamp follows it.
	for i, k := range wantRead {
		if ats[i].Before(tr.times[k]) || (k+1 < len(tr.times) && !ats[i].Before(tr.times[k+1])) {
			t.Errorf("line %q stamped %v, not by read %d", wantLine[i], ats[i], k)
		}
	}
}

func TestLineNumbers(t *testing.T) {
	r := NewReader(strings.NewReader("a\n\n\nb\nc"), 0)
	for _, want := range []int{1, 4, 5} {
		if _, _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if r.Line() != want {
			t.Errorf("Line() = %d, want %d", r.Line(), want)
		}
	}
}

func TestLineTooLong(t *testing.T) {
	r := NewReader(strings.NewReader("ok\n"+strings.Repeat("x", 5000)+"\n"), 4096)
	if line, _, err := r.Next(); err != nil || string(line) != "ok" {
		t.Fatalf("first line: %q, %v", line, err)
	}
	_, _, err := r.Next()
	if !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("got %v, want ErrLineTooLong", err)
	}
	if !strings.Contains(err.Error(), "line 2") {
		t.Errorf("error does not name the line: %v", err)
	}
	// A line just under the limit fits.
	r = NewReader(strings.NewReader(strings.Repeat("y", 4095)+"\n"), 4096)
	if line, _, err := r.Next(); err != nil || len(line) != 4095 {
		t.Fatalf("got %d bytes, %v", len(line), err)
	}
}

func TestBrokenStreamDropsFragment(t *testing.T) {
	src := io.MultiReader(strings.NewReader("data: 1\n\ndata: {\"par"), iotest.ErrReader(io.ErrUnexpectedEOF))
	r := NewReader(src, 0)
	if line, _, err := r.Next(); err != nil || string(line) != "data: 1" {
		t.Fatalf("got %q, %v", line, err)
	}
	if line, _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %q, %v; want unexpected EOF", line, err)
	}
}

func TestResetReusesBuffer(t *testing.T) {
	r := NewReader(strings.NewReader(strings.Repeat("q", 9000)+"\n"), 0)
	readAll(t, r)
	size := r.BufferSize()
	r.Reset(bytes.NewReader([]byte("one\ntwo\n")))
	if got := readAll(t, r); strings.Join(got, ",") != "one,two" {
		t.Fatalf("after Reset: %q", got)
	}
	if r.BufferSize() != size {
		t.Errorf("buffer reallocated: %d -> %d", size, r.BufferSize())
	}
}

func TestNoAllocationPerLine(t *testing.T) {
	data := []byte(strings.Repeat("data: {\"choices\":[{\"text\":\"hi\"}]}\n\n", 200))
	br := bytes.NewReader(data)
	r := NewReader(br, 0)
	allocs := testing.AllocsPerRun(20, func() {
		br.Reset(data)
		r.Reset(br)
		for {
			if _, _, err := r.Next(); err != nil {
				break
			}
		}
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per 200-line stream", allocs)
	}
}

func FuzzReader(f *testing.F) {
	f.Add([]byte("data: a\r\n\r\nb"), uint8(3))
	f.Add([]byte("\n\n x \n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		want := referenceLines(data)
		sr := &splitReader{data: data, rng: rand.New(rand.NewPCG(uint64(step), 1)), max: 1 + int(step%16)}
		got := readAll(t, NewReader(sr, 0))
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

// referenceLines is the simple, allocating version of what Reader does.
func referenceLines(data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if s := strings.Trim(l, " \t\n\r\v\f"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// stampedReader returns one line a Read, each with the receive time the
// test gives it.
type stampedReader struct {
	lines []string
	ns    []int64
	last  int64
}

func (r *stampedReader) Read(p []byte) (int, error) {
	if len(r.lines) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.lines[0])
	r.lines, r.last, r.ns = r.lines[1:], r.ns[0], r.ns[1:]
	return n, nil
}

func (r *stampedReader) LastArrival() int64 { return r.last }

func TestStampedLines(t *testing.T) {
	now := time.Now()
	wall := now.UnixNano()
	floor := now.Add(-20 * time.Millisecond)
	r := NewReader(&stampedReader{
		lines: []string{"data: a\n", "data: b\n", "data: c\n", "data: d\n", "data: e\n"},
		ns: []int64{
			wall - int64(10*time.Millisecond), // arrived 10 ms ago
			wall - int64(30*time.Millisecond), // before the floor (a stepped clock)
			wall - int64(5*time.Millisecond),  // 5 ms ago
			0,                                 // unknown: the read's own time
			wall + int64(time.Hour),           // in the future: the read's own time
		},
	}, 0)
	r.SetFloor(floor)
	want := []struct {
		line     string
		min, max time.Duration // from now
	}{
		{"data: a", -10 * time.Millisecond, -10 * time.Millisecond},
		{"data: b", -10 * time.Millisecond, -10 * time.Millisecond}, // not before the line before
		{"data: c", -5 * time.Millisecond, -5 * time.Millisecond},
		{"data: d", 0, time.Second},
		{"data: e", 0, time.Second},
	}
	slack := time.Millisecond // the wall and monotonic clocks, read apart
	for _, w := range want {
		line, at, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		d := at.Sub(now)
		if string(line) != w.line || d < w.min-slack || d > w.max+slack {
			t.Errorf("%q at %v from now, want %q within [%v, %v]", line, d, w.line, w.min, w.max)
		}
	}
	if r.KernelTimed() {
		t.Error("KernelTimed with two reads timed at the read")
	}
	r.Reset(&stampedReader{lines: []string{"a\n", "b\n"}, ns: []int64{wall - 1000, wall - 500}})
	for range 2 {
		r.Next()
	}
	if !r.KernelTimed() {
		t.Error("not KernelTimed with every read stamped")
	}
	r.Reset(strings.NewReader("a\n"))
	r.Next()
	if r.KernelTimed() {
		t.Error("KernelTimed over a reader without stamps")
	}
	// The floor alone: a stamp before it is moved up to it.
	r.Reset(&stampedReader{lines: []string{"x\n"}, ns: []int64{wall - int64(time.Second)}})
	r.SetFloor(floor)
	if _, at, _ := r.Next(); !at.Equal(floor) {
		t.Errorf("stamp before the floor: %v, want the floor %v", at, floor)
	}
}
