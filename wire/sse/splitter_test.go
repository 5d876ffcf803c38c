package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// numbered is a line passed on and its number (Line()) then.
type numbered struct {
	line string
	n    int
}

// splitResult is what a Splitter or a Reader made of a stream.
type splitResult struct {
	lines []numbered
	last  int // Line() at the end (meaningful without error)
	err   error
}

func (r splitResult) String() string {
	var b strings.Builder
	for _, l := range r.lines {
		fmt.Fprintf(&b, "%d:%q ", l.n, l.line)
	}
	return fmt.Sprintf("lines [%s], last line %d, err %v", strings.TrimSpace(b.String()), r.last, r.err)
}

// agree reports whether two results have the same lines, numbers and
// final line count, and whether both or neither failed.
func (r splitResult) agree(o splitResult) bool {
	if len(r.lines) != len(o.lines) || (r.err == nil) != (o.err == nil) || (r.err == nil && r.last != o.last) {
		return false
	}
	for i := range r.lines {
		if r.lines[i] != o.lines[i] {
			return false
		}
	}
	return true
}

// split passes pieces through a Splitter, Feed for each and End, as the
// event loop does. Each piece is in a buffer overwritten after Feed
// returns: the Splitter must keep none of it.
func split(s *Splitter, pieces []string) splitResult {
	s.Reset()
	var r splitResult
	fn := func(line []byte) error {
		r.lines = append(r.lines, numbered{string(line), s.Line()})
		return nil
	}
	var buf []byte
	for _, p := range pieces {
		buf = append(buf[:0], p...)
		err := s.Feed(buf, fn)
		for i := range buf {
			buf[i] = '#'
		}
		if err != nil {
			r.err = err
			return r
		}
	}
	r.err = s.End(fn)
	r.last = s.Line()
	return r
}

// read reads the same pieces, one per Read, with a Reader.
func read(maxLine int, pieces []string) splitResult {
	rd := NewReader(&pieceReader{pieces: append([]string(nil), pieces...)}, maxLine)
	var r splitResult
	for {
		line, _, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				r.err = err
			}
			r.last = rd.Line()
			return r
		}
		r.lines = append(r.lines, numbered{string(line), rd.Line()})
	}
}

func piecesOf(s string, sizes ...int) []string {
	var out []string
	for i := 0; len(s) > 0; i++ {
		n := len(s)
		if len(sizes) > 0 {
			n = min(sizes[i%len(sizes)], len(s))
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func splitterBytewise(s string) []string { return piecesOf(s, 1) }

func TestSplitter(t *testing.T) {
	type L = numbered
	cases := []struct {
		in   string
		want []numbered
		last int
	}{
		{"data: a\n\ndata: b\n\n", []L{{"data: a", 1}, {"data: b", 3}}, 4},
		{"data: a\r\n\r\ndata: b\r\n", []L{{"data: a", 1}, {"data: b", 3}}, 3},
		{"  x  \n\t\v\f\r\n y", []L{{"x", 1}, {"y", 3}}, 3},
		{"last without newline", []L{{"last without newline", 1}}, 1},
		{"a\n  \t", []L{{"a", 1}}, 2},
		{"", nil, 0},
		{"\n\n\n", nil, 3},
		{"a\rb\n", []L{{"a\rb", 1}}, 1},
		{"a\n\n\nb\nc", []L{{"a", 1}, {"b", 4}, {"c", 5}}, 5},
		{"\x00 \x85\xa0\n", []L{{"\x00 \x85\xa0", 1}}, 1}, // only ASCII whitespace is stripped
		{strings.Repeat("z", 10000) + "\nshort\n", []L{{strings.Repeat("z", 10000), 1}, {"short", 2}}, 2},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	s := NewSplitter(0) // reused across streams, as the event loop does
	for _, c := range cases {
		splits := [][]string{{c.in}, splitterBytewise(c.in)}
		for i := range 30 {
			splits = append(splits, piecesOf(c.in, 1+rng.IntN(1+i)))
		}
		want := splitResult{lines: c.want, last: c.last}
		for _, pieces := range splits {
			if got := split(s, pieces); !got.agree(want) || got.err != nil {
				t.Fatalf("%.40q in %d pieces: %v; want %v", c.in, len(pieces), got, want)
			}
			if got := read(0, pieces); !got.agree(want) {
				t.Fatalf("%.40q in %d pieces, Reader: %v; want %v", c.in, len(pieces), got, want)
			}
		}
	}
}

func TestSplitterLineTooLong(t *testing.T) {
	in := "ok\n" + strings.Repeat("x", 5000) + "\nnot reached\n"
	for _, pieces := range [][]string{{in}, splitterBytewise(in), piecesOf(in, 700)} {
		r := split(NewSplitter(4096), pieces)
		if !errors.Is(r.err, ErrLineTooLong) || len(r.lines) != 1 || r.lines[0].line != "ok" {
			t.Fatalf("in %d pieces: %v; want ok, then ErrLineTooLong", len(pieces), r)
		}
		if !strings.Contains(r.err.Error(), "line 2") {
			t.Errorf("the error does not name the line: %v", r.err)
		}
	}
	// An open line over the limit fails before its '\n' comes.
	s := NewSplitter(8)
	if err := s.Feed([]byte("123456789"), func([]byte) error { return nil }); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("9 bytes open under a limit of 8: %v", err)
	}
	// A line under the limit fits, in any split.
	in = strings.Repeat("y", 4095) + "\n"
	for _, pieces := range [][]string{{in}, splitterBytewise(in), piecesOf(in, 1000)} {
		if r := split(NewSplitter(4096), pieces); r.err != nil || len(r.lines) != 1 || len(r.lines[0].line) != 4095 {
			t.Fatalf("4095 bytes in %d pieces: %v", len(pieces), r.err)
		}
	}
}

// fn's error stops Feed (and End), which return it.
func TestSplitterHandlerError(t *testing.T) {
	stop := errors.New("stop")
	s := NewSplitter(0)
	var got []string
	fn := func(line []byte) error {
		got = append(got, string(line))
		return stop
	}
	if err := s.Feed([]byte("a\nb\nc"), fn); err != stop || strings.Join(got, ",") != "a" {
		t.Errorf("Feed: %v after %q", err, got)
	}
	s.Reset()
	got = nil
	s.Feed([]byte("x"), fn)
	if err := s.End(fn); err != stop || strings.Join(got, ",") != "x" {
		t.Errorf("End: %v after %q", err, got)
	}
}

// Reset forgets an open line and the line count.
func TestSplitterReset(t *testing.T) {
	s := NewSplitter(0)
	s.Feed([]byte("a\nopen"), func([]byte) error { return nil })
	s.Reset()
	r := split(s, []string{"b\n"})
	if r.err != nil || len(r.lines) != 1 || r.lines[0] != (numbered{"b", 1}) {
		t.Errorf("after Reset: %v", r)
	}
}

// A line wholly inside the bytes fed is passed as a slice of them; one
// open at the end of a Feed is kept, and with no allocation once the
// buffer has grown.
func TestSplitterNoCopy(t *testing.T) {
	s := NewSplitter(0)
	b := []byte("data: one\n\ndata: two\n")
	var seen int
	s.Feed(b, func(line []byte) error {
		if i := bytes.Index(b, line); i < 0 || &b[i] != &line[0] {
			t.Errorf("%q is not a slice of the bytes fed", line)
		}
		seen++
		return nil
	})
	if seen != 2 {
		t.Fatalf("%d lines", seen)
	}
	data := []byte(strings.Repeat("data: {\"choices\":[{\"text\":\"hi\"}]}\n\n", 200))
	pieces := [][]byte{}
	for i := 0; i < len(data); i += 37 {
		pieces = append(pieces, data[i:min(i+37, len(data))])
	}
	nop := func([]byte) error { return nil }
	allocs := testing.AllocsPerRun(20, func() {
		s.Reset()
		for _, p := range pieces {
			s.Feed(p, nop)
		}
		s.End(nop)
	})
	if allocs > 0 {
		t.Errorf("%.1f allocations per 200-line stream", allocs)
	}
}

// FuzzSplitter: for any bytes in any pieces, a Splitter passes on the
// lines, with their numbers, that a Reader of the same pieces returns;
// under a small limit both fail or neither does.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("data: a\r\n\r\nb"), []byte{3, 1}, uint8(4))
	f.Add([]byte("\n\n x \n"), []byte{1}, uint8(1))
	f.Add([]byte("ok\nlong line here\nx"), []byte{0, 5, 2}, uint8(15))
	f.Add([]byte("\v\f\t \r\n"), []byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, data, splits []byte, maxLine uint8) {
		var pieces []string
		rest := string(data)
		for _, s := range splits {
			n := min(int(s), len(rest))
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		pieces = append(pieces, rest)

		want := read(0, pieces)
		if want.err != nil {
			t.Fatalf("Reader: %v", want.err)
		}
		for _, p := range [][]string{pieces, {string(data)}, splitterBytewise(string(data))} {
			if got := split(NewSplitter(0), p); !got.agree(want) || got.err != nil {
				t.Fatalf("%q in %q: Splitter %v; Reader %v", data, p, got, want)
			}
		}

		limit := 1 + int(maxLine%32)
		want = read(limit, pieces)
		if want.err != nil && !errors.Is(want.err, ErrLineTooLong) {
			t.Fatalf("Reader: %v", want.err)
		}
		for _, p := range [][]string{pieces, {string(data)}, splitterBytewise(string(data))} {
			got := split(NewSplitter(limit), p)
			if got.err != nil && !errors.Is(got.err, ErrLineTooLong) {
				t.Fatalf("Splitter: %v", got.err)
			}
			if !got.agree(want) {
				t.Fatalf("%q in %q, limit %d: Splitter %v; Reader %v", data, p, limit, got, want)
			}
		}
	})
}
