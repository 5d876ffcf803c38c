package http1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// chunked decodes an HTTP/1.1 chunked body from the connection's buffer.
// Unlike net/http's reader, which waits for the rest of a chunk before it
// returns the part it already holds, a Read never blocks once it has bytes
// for the caller: it returns what the buffer holds, and reads the
// connection (once) only when it has nothing. So a complete SSE event in
// a chunk that straddles two TCP segments is handed on when its own bytes
// came, not when the segment that ends the chunk does (after a lost
// segment's retransmission, say), and it carries the receive time of the
// read that brought it.
type chunked struct {
	br      *bufio.Reader
	left    uint64 // data bytes left in the current chunk
	crlf    bool   // the CRLF after a chunk's data is next
	trailer bool   // the last chunk came: trailer lines are next
	err     error  // sticky: io.EOF after the last chunk and its trailer
}

// maxChunkLine bounds a chunk-size line or a trailer line, as net/http does.
const maxChunkLine = 4096

var errChunked = errors.New("malformed chunked encoding")

func (c *chunked) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && c.err == nil {
		switch {
		case c.left > 0:
			if n > 0 && c.br.Buffered() == 0 {
				return n, nil // no second read while holding bytes
			}
			m := uint64(len(p) - n)
			if m > c.left {
				m = c.left
			}
			k, err := c.br.Read(p[n : n+int(m)])
			n += k
			c.left -= uint64(k)
			if c.left == 0 {
				c.crlf = true
			}
			if err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				c.err = err
			}
		case c.crlf:
			if n > 0 && c.br.Buffered() < 2 {
				return n, nil
			}
			c.err = c.readCRLF()
			c.crlf = false
		default:
			if n > 0 && !c.lineBuffered() {
				return n, nil
			}
			if c.trailer {
				c.err = c.readTrailer()
			} else {
				c.err = c.readSize()
			}
		}
	}
	if c.err != nil && (n == 0 || c.err == io.EOF) {
		return n, c.err
	}
	return n, nil
}

// lineBuffered reports whether a whole line is in the buffer.
func (c *chunked) lineBuffered() bool {
	b, _ := c.br.Peek(c.br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

func (c *chunked) readCRLF() error {
	b, err := c.br.Peek(2)
	if err != nil {
		return unexpected(err)
	}
	if b[0] != '\r' || b[1] != '\n' {
		return errChunked
	}
	c.br.Discard(2)
	return nil
}

// readSize reads a chunk-size line. The last chunk (size 0) is followed
// by the trailer.
func (c *chunked) readSize() error {
	line, err := readChunkLine(c.br)
	if err != nil {
		return err
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i] // a chunk extension
	}
	line = bytes.TrimRight(line, " \t")
	size, ok := parseHex(line)
	if !ok {
		return errChunked
	}
	c.left, c.trailer = size, size == 0
	return nil
}

// readTrailer reads one trailer line, dropped; the blank line ends the
// body, leaving the connection at the next response.
func (c *chunked) readTrailer() error {
	line, err := readChunkLine(c.br)
	switch {
	case err != nil:
		return err
	case len(line) == 0:
		return io.EOF
	}
	return nil
}

// readChunkLine reads one CRLF-terminated line without its CRLF.
func readChunkLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	switch {
	case err == bufio.ErrBufferFull || (err == nil && len(line) > maxChunkLine):
		return nil, errors.New("chunked encoding: line too long")
	case err != nil:
		return nil, unexpected(err)
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseHex parses a chunk size: 1 to 16 hex digits.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}
