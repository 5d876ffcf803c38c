package http1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// inbound decodes an HTTP/1.1 response from bytes handed to it as they
// arrive, in pieces of any size: the push form of http.ReadResponse and
// chunked, which both receivers feed (the event loop reads a socket when
// it is ready and has no goroutine to block in a Read). The head is kept until it is whole
// and then parsed by http.ReadResponse (so both paths read heads alike);
// the body's bytes, chunked or not, are passed on as slices of the bytes
// given, never copied.
type inbound struct {
	req  *http.Request
	head []byte
	resp *http.Response // set once the head is whole
	// raw is a 200's head as it came, whose header fields header parses
	// again when the response has ended: a stream in flight keeps these
	// bytes, not the map of its fields (some 700 bytes a stream).
	raw    []byte
	hasRaw bool

	framing int8
	left    uint64 // chunked: data left in the chunk; length: body left
	chunk   int8   // chunked: what comes next
	line    []byte // chunked: a size or trailer line still open
	done    bool   // the body ended
	extra   bool   // bytes came after the body's end
	got     int64  // bytes fed
	// streamed: a 200's body is read as a stream (else kept whole).
	streamed bool
}

const (
	frameChunked int8 = iota
	frameLength       // Content-Length
	frameClose        // to the end of the connection
	frameNone         // no body (204, 304)
)

const (
	chunkSize    int8 = iota // a chunk-size line
	chunkData                // the chunk's data
	chunkCRLF                // the CRLF after the data
	chunkTrailer             // trailer lines up to the blank one
)

// maxHead bounds a response head, as net/http's default does (it allows
// 10 MiB; no inference server sends more than a few hundred bytes).
const maxHead = 1 << 20

var errHeadTooLong = fmt.Errorf("the response head is longer than %d KiB", maxHead>>10)

func (in *inbound) reset(req *http.Request) {
	*in = inbound{req: req, head: in.head[:0], line: in.line[:0], raw: in.raw[:0]}
}

// header gives a 200's response its header fields back (see raw).
func (in *inbound) header() {
	if !in.hasRaw {
		return
	}
	if resp, err := http.ReadResponse(bufio.NewReaderSize(bytes.NewReader(in.raw), 64), in.req); err == nil {
		in.resp.Header = resp.Header
	}
	in.hasRaw = false
}

// feed takes the next bytes of the response and calls body with each
// piece of the body's data they hold (after the head is whole: see
// in.resp). It returns body's first error.
func (in *inbound) feed(b []byte, body func([]byte) error) error {
	in.got += int64(len(b))
	for len(b) > 0 {
		if in.done {
			in.extra = true
			return nil
		}
		if in.resp == nil {
			n, err := in.feedHead(b)
			if err != nil {
				return err
			}
			b = b[n:]
			continue
		}
		var data []byte
		var err error
		switch in.framing {
		case frameChunked:
			data, b, err = in.chunked(b)
		case frameLength:
			n := uint64(len(b))
			if n > in.left {
				n = in.left
			}
			data, b = b[:n], b[n:]
			in.left -= n
			in.done = in.left == 0
		case frameClose:
			data, b = b, nil
		case frameNone:
			in.done = true
		}
		if err != nil {
			return err
		}
		if len(data) > 0 {
			if err := body(data); err != nil {
				return err
			}
		}
	}
	return nil
}

// feedHead adds b to the head and parses it once it is whole; it returns
// how many bytes of b were the head's.
func (in *inbound) feedHead(b []byte) (int, error) {
	old := len(in.head)
	in.head = append(in.head, b...)
	// The blank line may start in the bytes kept before.
	from := max(0, old-3)
	end := headEnd(in.head[from:])
	if end < 0 {
		if len(in.head) > maxHead {
			return 0, errHeadTooLong
		}
		return len(b), nil
	}
	end += from
	if end > maxHead {
		return 0, fmt.Errorf("the response head is longer than %d KiB", maxHead>>10)
	}
	used := end - old
	head := in.head[:end]
	resp, err := http.ReadResponse(bufio.NewReaderSize(bytes.NewReader(head), 64), in.req)
	if err != nil {
		return 0, err
	}
	in.head = in.head[:0]
	if resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		return used, nil // an informational 1xx: the real response follows
	}
	// The body is decoded here, not by the reader ReadResponse made for
	// it (with its bufio.Reader): at thousands of streams in flight,
	// 250 bytes each.
	resp.Body = http.NoBody
	if resp.StatusCode == http.StatusOK {
		in.raw, in.hasRaw, resp.Header = append(in.raw[:0], head...), true, nil
	}
	in.resp = resp
	switch {
	case isChunked(resp):
		in.framing = frameChunked
	case resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified:
		in.framing, in.done = frameNone, true
	case resp.ContentLength >= 0:
		in.framing, in.left = frameLength, uint64(resp.ContentLength)
		in.done = in.left == 0
	default:
		in.framing = frameClose
	}
	return used, nil
}

// headEnd is the index just past the blank line that ends a head, or -1.
// Lines end in CRLF or, as textproto accepts, a bare LF.
func headEnd(b []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return i + 1
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return i + 2
		}
	}
}

// chunked decodes the chunked framing at the start of b: it returns the
// data it holds up to the end of a chunk, and the bytes after.
func (in *inbound) chunked(b []byte) (data, rest []byte, err error) {
	for len(b) > 0 && !in.done {
		switch in.chunk {
		case chunkData:
			n := uint64(len(b))
			if n > in.left {
				n = in.left
			}
			in.left -= n
			if in.left == 0 {
				in.chunk = chunkCRLF
			}
			return b[:n], b[n:], nil
		case chunkCRLF:
			// Checked once both bytes came, as a reader that waits
			// for them would: a connection cut between them is cut
			// short, not malformed.
			n := min(2-len(in.line), len(b))
			in.line = append(in.line, b[:n]...)
			b = b[n:]
			if len(in.line) < 2 {
				continue
			}
			if string(in.line) != "\r\n" {
				return nil, nil, errChunked
			}
			in.line, in.chunk = in.line[:0], chunkSize
		default: // a size or trailer line
			i := bytes.IndexByte(b, '\n')
			// A line and its '\n' fit in maxChunkLine bytes, as in
			// the connection's buffer a reader's line must.
			if i < 0 {
				if len(in.line)+len(b) >= maxChunkLine {
					return nil, nil, errors.New("chunked encoding: line too long")
				}
				in.line = append(in.line, b...)
				return nil, nil, nil
			}
			line := b[:i]
			if len(in.line) > 0 {
				in.line = append(in.line, line...)
				line = in.line
			}
			b = b[i+1:]
			if len(line) >= maxChunkLine {
				return nil, nil, errors.New("chunked encoding: line too long")
			}
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			if err := in.chunkLine(line); err != nil {
				return nil, nil, err
			}
			in.line = in.line[:0]
		}
	}
	return nil, b, nil
}

// chunkLine handles a whole size or trailer line.
func (in *inbound) chunkLine(line []byte) error {
	if in.chunk == chunkTrailer {
		if len(line) == 0 {
			in.done = true // the blank line ends the body
		}
		return nil
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i] // a chunk extension
	}
	size, ok := parseHex(bytes.TrimRight(line, " \t"))
	if !ok {
		return errChunked
	}
	in.left = size
	if size == 0 {
		in.chunk = chunkTrailer
	} else {
		in.chunk = chunkData
	}
	return nil
}

// end is the end of the connection's bytes: nil when the response was
// whole (a body to the end of the connection ends there), else the
// error a reader of the connection would have had.
func (in *inbound) end() error {
	switch {
	case in.done:
		return nil
	case in.got == 0:
		return io.EOF // no byte of a response came
	case in.resp == nil:
		return io.ErrUnexpectedEOF
	case in.framing == frameClose:
		in.done = true
		return nil
	}
	return io.ErrUnexpectedEOF
}

// reusable reports whether the connection can carry another request: the
// body ended where its framing said, nothing came after it, and neither
// side asked to close.
func (in *inbound) reusable() bool {
	return in.done && !in.extra && in.resp != nil && !in.resp.Close && in.framing != frameClose
}
