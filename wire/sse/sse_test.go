package sse

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// splitReader returns at most 1..max bytes per Read, chosen at random, and
// counts its Reads.
type splitReader struct {
	data  []byte
	rng   *rand.Rand
	max   int
	reads int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := 1 + r.rng.IntN(r.max)
	n = min(n, len(r.data), len(p))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	r.reads++
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

// readSplit reads the lines of sr, checking each one's read index: the
// Reads sr has served (every one returned bytes) when Next returned it.
func readSplit(t *testing.T, sr *splitReader) []string {
	t.Helper()
	r := NewReader(sr, 0)
	var out []string
	for {
		line, read, err := r.Next()
		if read != sr.reads {
			t.Fatalf("after line %d: read index %d, but %d Reads served", len(out), read, sr.reads)
		}
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
			got := readSplit(t, sr)
			if strings.Join(got, "|") != strings.Join(c.want, "|") || len(got) != len(c.want) {
				t.Fatalf("%q seed %d: got %q, want %q", c.in, seed, got, c.want)
			}
		}
	}
}

// pieceReader returns one piece per Read and counts its Reads, the last
// one (io.EOF) included.
type pieceReader struct {
	pieces []string
	calls  int
}

func (r *pieceReader) Read(p []byte) (int, error) {
	r.calls++
	if len(r.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.pieces[0])
	r.pieces[0] = r.pieces[0][n:]
	if r.pieces[0] == "" {
		r.pieces = r.pieces[1:]
	}
	return n, nil
}

// A line comes with the index of the Read that completed it, and Next
// returns it before reading again: the last Read served is the line's,
// which is what a caller that times its Reads relies on.
func TestReadIndexIsTheCompletingRead(t *testing.T) {
	// Read 1 brings two whole lines and the start of a third; read 2 ends
	// it; read 3 brings a line without '\n', completed by the EOF of read 4.
	pr := &pieceReader{pieces: []string{"a\nb\nc", "c\n", "d"}}
	r := NewReader(pr, 0)
	want := []struct {
		line        string
		read, calls int
	}{{"a", 1, 1}, {"b", 1, 1}, {"cc", 2, 2}, {"d", 3, 4}}
	for _, w := range want {
		line, read, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if string(line) != w.line || read != w.read || pr.calls != w.calls {
			t.Errorf("%q: read index %d after %d Reads; want %q, %d after %d", line, read, pr.calls, w.line, w.read, w.calls)
		}
	}
	if _, read, err := r.Next(); err != io.EOF || read != 3 || pr.calls != 4 {
		t.Errorf("at the end: %v, read index %d after %d Reads; want io.EOF, 3 after 4", err, read, pr.calls)
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
		got := readSplit(t, sr)
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
