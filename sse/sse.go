// Package sse reads a streamed HTTP response body line by line, as aiohttp's
// StreamReader does for the reference tool: split on '\n', strip surrounding
// whitespace, skip empty lines. Each line comes with the instant at which its
// last byte arrived, taken before any parsing, so that parsing cost never
// shows up in the measured latencies.
package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"benchserve/internal/hist"
	"benchserve/internal/netstamp"
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
	line    int       // number of '\n'-separated lines consumed, empty ones included
	at      time.Time // when the bytes of the last Read arrived
	floor   time.Time // no stamp is earlier
	stamps  Arrivals  // r, when it knows when its bytes arrived
	err     error     // sticky error from r
	// reads counts the Reads that returned bytes, kernelReads those of
	// them timed with the kernel's receive time.
	reads, kernelReads int
	// delay is how long the bytes of the last kernel-timed Read waited
	// to be read (0 for a Read timed when it returned); delays, when set,
	// counts each.
	delay  time.Duration
	delays *hist.H
}

// Arrivals is a reader that knows when the bytes it last returned reached
// the machine: the kernel's receive time in Unix nanoseconds, 0 when
// unknown (see internal/netstamp). A Reader over one stamps each line
// with that instant rather than with the end of its Read, so that a
// reader that gets round to the bytes late still times them right.
type Arrivals interface{ LastArrival() int64 }

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
	s.stamps, _ = r.(Arrivals)
	s.start, s.end, s.scanned, s.line = 0, 0, 0, 0
	s.at, s.floor = time.Time{}, time.Time{}
	s.err = nil
	s.reads, s.kernelReads = 0, 0
	s.delay, s.delays = 0, nil
}

// SetDelays makes the Reader count in h how long the bytes of each
// kernel-timed Read waited in the socket: from the kernel's receive time
// of the newest bytes to the Read's return. Reset forgets h.
func (s *Reader) SetDelays(h *hist.H) { s.delays = h }

// Reads is the number of Reads that returned bytes so far: lines that
// Next returned with the same Reads came in one Read, and share its time.
func (s *Reader) Reads() int { return s.reads }

// Delay is how long the bytes of the Read that completed the last line
// waited in the socket (0 when that Read had no kernel receive time).
func (s *Reader) Delay() time.Duration { return s.delay }

// KernelTimed reports whether every Read that returned bytes since Reset
// was timed with the kernel's receive time (false if none returned any).
func (s *Reader) KernelTimed() bool { return s.reads > 0 && s.kernelReads == s.reads }

// SetFloor makes t the earliest instant a line may be stamped with (the
// request's send time, against a wall clock stepped while it ran).
func (s *Reader) SetFloor(t time.Time) { s.floor = t }

// BufferSize is the size of the buffer the Reader holds (for pools that do
// not want to keep a huge one).
func (s *Reader) BufferSize() int { return cap(s.buf) }

// Line is the 1-based number, counting empty lines, of the line Next last
// returned.
func (s *Reader) Line() int { return s.line }

// Next returns the next non-empty line, stripped of ASCII whitespace, and the
// time at which the Read that completed it returned. At the end of the stream
// it returns io.EOF; a last line without '\n' is returned first. Other errors
// come from the underlying reader (a partial last line is then dropped), or
// wrap ErrLineTooLong.
func (s *Reader) Next() ([]byte, time.Time, error) {
	for {
		if i := bytes.IndexByte(s.buf[s.scanned:s.end], '\n'); i >= 0 {
			nl := s.scanned + i
			raw := s.buf[s.start:nl]
			s.start = nl + 1
			s.scanned = s.start
			s.line++
			if line := trim(raw); len(line) > 0 {
				return line, s.at, nil
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
					return line, s.at, nil
				}
			}
			return nil, s.at, s.err
		}
		if err := s.fill(); err != nil {
			return nil, s.at, err
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
	var kernel bool
	var delay time.Duration
	s.at, delay, kernel = stamp(s.stamps, n, s.floor, s.at)
	if n > 0 {
		s.reads++
		s.delay = delay
		if kernel {
			s.kernelReads++
			if s.delays != nil {
				s.delays.Add(delay)
			}
		}
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

// Stamp is when the n bytes a Read just returned arrived: now, or the
// kernel's receive time when stamps (the reader as an Arrivals, or nil)
// knows it (kernel is then true); never before floor nor before prev, the
// stamp of the Read before.
func Stamp(stamps Arrivals, n int, floor, prev time.Time) (at time.Time, kernel bool) {
	at, _, kernel = stamp(stamps, n, floor, prev)
	return at, kernel
}

// stamp is Stamp that also returns how long the bytes waited to be read:
// from their kernel receive time to now (0 without one).
func stamp(stamps Arrivals, n int, floor, prev time.Time) (at time.Time, delay time.Duration, kernel bool) {
	now := time.Now()
	at = now
	if stamps != nil && n > 0 {
		if k := netstamp.At(now, stamps.LastArrival()); !k.Equal(now) {
			at, delay, kernel = k, now.Sub(k), true
		}
	}
	if at.Before(floor) {
		at = floor
	}
	if at.Before(prev) {
		at = prev
	}
	return at, delay, kernel
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
