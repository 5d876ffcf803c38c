// Package sse reads a streamed HTTP response body line by line, as aiohttp's
// StreamReader does for the reference tool: split on '\n', strip surrounding
// whitespace, skip empty lines. Each line comes with the index of the Read
// that completed it, so that a caller can tell lines that came together.
//
// The package knows nothing of time. A Reader returns a line as soon as the
// Read that completes it has returned, before it reads again, so a caller
// that times lines hands the Reader an io.Reader that notes when each of its
// Reads returned: the last Read it noted when Next returns is the line's, and
// parsing the line never shows up in its time.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxLine is the longest line a Reader accepts unless told otherwise.
const DefaultMaxLine = 64 << 20

// initialSize is small: the connection's own buffer absorbs the system
// calls, a chunk is a few hundred bytes, and one buffer is held per stream.
// It doubles for a longer line.
const initialSize = 1 << 10

// ErrLineTooLong is wrapped by the error Next returns for a line longer than
// the Reader's limit.
var ErrLineTooLong = errors.New("line too long")

// Reader splits a stream into trimmed, non-empty lines. It reuses one buffer:
// a line returned by Next is valid only until the following call.
type Reader struct {
	r       io.Reader
	buf     []byte
	start   int // first unconsumed byte
	end     int // end of the bytes read so far
	scanned int // bytes in buf[start:scanned] hold no '\n'
	max     int
	line    int   // number of '\n'-separated lines consumed, empty ones included
	reads   int   // Reads that returned bytes
	err     error // sticky error from r
}

// NewReader returns a Reader of r that accepts lines up to maxLine bytes
// (DefaultMaxLine when maxLine <= 0).
func NewReader(r io.Reader, maxLine int) *Reader {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	s := &Reader{max: maxLine}
	s.Reset(r)
	return s
}

// Reset makes the Reader read from r, keeping its buffer.
func (s *Reader) Reset(r io.Reader) {
	s.r = r
	s.start, s.end, s.scanned, s.line = 0, 0, 0, 0
	s.reads = 0
	s.err = nil
}

// BufferSize is the size of the buffer the Reader holds (for pools that do
// not want to keep a huge one).
func (s *Reader) BufferSize() int { return cap(s.buf) }

// Line is the 1-based number, counting empty lines, of the line Next last
// returned.
func (s *Reader) Line() int { return s.line }

// Next returns the next non-empty line, stripped of ASCII whitespace, and
// its read index: the number of Reads since Reset that had returned bytes
// when the line was complete (at its '\n', or at the end of the stream for
// a last line without one). Lines with the same index came in one Read.
// Next reads only when it holds no whole line, so the last Read the
// underlying reader served before Next returned is the one that completed
// the line. At the end of the stream it returns io.EOF; a last line without
// '\n' is returned first. Other errors come from the underlying reader (a
// partial last line is then dropped), or wrap ErrLineTooLong; with an
// error, the index is the number of Reads that returned bytes.
func (s *Reader) Next() ([]byte, int, error) {
	for {
		if i := bytes.IndexByte(s.buf[s.scanned:s.end], '\n'); i >= 0 {
			nl := s.scanned + i
			raw := s.buf[s.start:nl]
			s.start = nl + 1
			s.scanned = s.start
			s.line++
			if line := trim(raw); len(line) > 0 {
				return line, s.reads, nil
			}
			continue
		}
		s.scanned = s.end
		if s.err != nil {
			// A last line without '\n' counts only at a clean end: after a
			// broken connection it is a fragment.
			if s.err == io.EOF && s.start < s.end {
				raw := s.buf[s.start:s.end]
				s.start, s.scanned = s.end, s.end
				s.line++
				if line := trim(raw); len(line) > 0 {
					return line, s.reads, nil
				}
			}
			return nil, s.reads, s.err
		}
		if err := s.fill(); err != nil {
			return nil, s.reads, err
		}
	}
}

// fill reads once more into the buffer, making room first.
func (s *Reader) fill() error {
	if s.start == s.end {
		s.start, s.end, s.scanned = 0, 0, 0
	}
	if s.end == len(s.buf) {
		if s.start > 0 {
			n := copy(s.buf, s.buf[s.start:s.end])
			s.scanned -= s.start
			s.start, s.end = 0, n
		} else {
			if len(s.buf) >= s.max {
				return fmt.Errorf("sse: line %d: %w: more than %d bytes", s.line+1, ErrLineTooLong, s.max)
			}
			size := max(2*len(s.buf), initialSize)
			size = min(size, s.max)
			nb := make([]byte, size)
			copy(nb, s.buf[:s.end])
			s.buf = nb
		}
	}
	if s.r == nil {
		s.err = io.EOF
		return nil
	}
	n, err := s.r.Read(s.buf[s.end:])
	if n > 0 {
		s.reads++
	}
	if n < 0 || n > len(s.buf)-s.end {
		return errors.New("sse: reader returned an invalid count")
	}
	s.end += n
	if err != nil {
		s.err = err
	}
	return nil
}

// trim strips what Python's bytes.strip() strips: space, \t, \n, \r, \v, \f.
func trim(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && isSpace(b[i]) {
		i++
	}
	for j > i && isSpace(b[j-1]) {
		j--
	}
	return b[i:j]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// Splitter is the push form of Reader, for a caller that is handed a
// stream's bytes as they come (an event loop) rather than reading them:
// Feed takes the bytes of one read and passes on the lines they complete.
// A line wholly inside the bytes given is passed as a slice of them, not
// copied; only a line still open at the end of a read is kept.
type Splitter struct {
	buf  []byte // the open line
	max  int
	line int
}

// NewSplitter returns a Splitter that accepts lines up to maxLine bytes
// (DefaultMaxLine when maxLine <= 0).
func NewSplitter(maxLine int) *Splitter {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	return &Splitter{max: maxLine}
}

// Reset forgets the open line and the count of lines.
func (s *Splitter) Reset() { s.buf, s.line = s.buf[:0], 0 }

// BufferSize is the size of the buffer the Splitter holds.
func (s *Splitter) BufferSize() int { return cap(s.buf) }

// Line is the 1-based number, counting empty lines, of the last line
// passed on.
func (s *Splitter) Line() int { return s.line }

// Feed passes each non-empty line that b completes, stripped, to fn, and
// keeps the rest of b as the open line. It stops at fn's first error and
// returns it; a line longer than the limit is an error wrapping
// ErrLineTooLong.
func (s *Splitter) Feed(b []byte, fn func(line []byte) error) error {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		// A line and its '\n' fit in max bytes, as in a Reader's
		// buffer they must.
		if i < 0 {
			if len(s.buf)+len(b) >= s.max {
				return s.tooLong()
			}
			s.buf = append(s.buf, b...)
			return nil
		}
		raw := b[:i]
		if len(s.buf) > 0 {
			if len(s.buf)+i >= s.max {
				return s.tooLong()
			}
			s.buf = append(s.buf, raw...)
			raw = s.buf
		} else if i >= s.max {
			return s.tooLong()
		}
		b = b[i+1:]
		s.line++
		line := trim(raw)
		s.buf = s.buf[:0] // raw may be buf: fn must be done with it before the next Feed
		if len(line) > 0 {
			if err := fn(line); err != nil {
				return err
			}
		}
	}
	return nil
}

// End passes on the open line, if any, at the clean end of the stream.
func (s *Splitter) End(fn func(line []byte) error) error {
	if len(s.buf) == 0 {
		return nil
	}
	raw := s.buf
	s.buf = s.buf[:0]
	s.line++
	if line := trim(raw); len(line) > 0 {
		return fn(line)
	}
	return nil
}

func (s *Splitter) tooLong() error {
	s.buf = s.buf[:0]
	return fmt.Errorf("sse: line %d: %w: more than %d bytes", s.line+1, ErrLineTooLong, s.max)
}
