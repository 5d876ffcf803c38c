package http1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const chunkedHead = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"

// pushResult is what inbound made of a response's bytes.
type pushResult struct {
	body   []byte
	err    error // feed's first error, else end()'s
	atFeed bool  // err came from feed
	status int   // the response's status; 0 when no head was parsed
	done   bool
	extra  bool
	reuse  bool
	empty  bool // body was called with no bytes
}

func (r pushResult) String() string {
	return fmt.Sprintf("body %q, err %v (at feed %v), status %d, done %v, extra %v, reusable %v",
		r.body, r.err, r.atFeed, r.status, r.done, r.extra, r.reuse)
}

// same reports whether two results are alike (errors by their text).
func (r pushResult) same(o pushResult) bool {
	return bytes.Equal(r.body, o.body) && errText(r.err) == errText(o.err) && r.atFeed == o.atFeed &&
		r.status == o.status && r.done == o.done && r.extra == o.extra && r.reuse == o.reuse && r.empty == o.empty
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func testRequest() *http.Request {
	return httptest.NewRequest("POST", "http://x/v1/completions", nil)
}

// push decodes pieces with in, as the event loop does: reset, feed each
// piece until feed fails, then the connection's end. Each piece is given
// in a buffer that is overwritten once feed returns, as the loop's read
// buffer is by the next read: inbound must keep none of it.
func push(in *inbound, pieces [][]byte) pushResult {
	in.reset(testRequest())
	in.streamed = true
	var r pushResult
	body := func(b []byte) error {
		if len(b) == 0 {
			r.empty = true
		}
		r.body = append(r.body, b...)
		return nil
	}
	var buf []byte
	for _, p := range pieces {
		buf = append(buf[:0], p...)
		err := in.feed(buf, body)
		for i := range buf {
			buf[i] = '#'
		}
		if err != nil {
			r.err, r.atFeed = err, true
			break
		}
	}
	if r.err == nil {
		r.err = in.end()
	}
	if in.resp != nil {
		r.status = in.resp.StatusCode
	}
	r.done, r.extra, r.reuse = in.done, in.extra, in.reusable()
	return r
}

// inboundPieces returns its pieces one per Read, skipping empty ones (a
// bufio.Reader gives up after 100 empty Reads in a row).
type inboundPieces struct{ pieces [][]byte }

func (r *inboundPieces) Read(p []byte) (int, error) {
	for len(r.pieces) > 0 && len(r.pieces[0]) == 0 {
		r.pieces = r.pieces[1:]
	}
	if len(r.pieces) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.pieces[0])
	r.pieces[0] = r.pieces[0][n:]
	return n, nil
}

// pull decodes the same bytes as the transport's pull path does: the
// heads by http.ReadResponse (1xx skipped) over a bufio.Reader of the
// connection's buffer size, then a chunked body by chunked, any other by
// net/http's body.
func pull(pieces [][]byte) (status int, body []byte, err error) {
	br := bufio.NewReaderSize(&inboundPieces{pieces: clonePieces(pieces)}, 4<<10)
	var resp *http.Response
	for {
		resp, err = http.ReadResponse(br, testRequest())
		if err != nil {
			return 0, nil, err
		}
		if resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	var r io.Reader = resp.Body
	if isChunked(resp) {
		r = &chunked{br: br}
	}
	body, err = io.ReadAll(r)
	return resp.StatusCode, body, err
}

func clonePieces(pieces [][]byte) [][]byte {
	out := make([][]byte, len(pieces))
	for i, p := range pieces {
		out[i] = bytes.Clone(p)
	}
	return out
}

func whole(b []byte) [][]byte { return [][]byte{b} }

func bytewise(b []byte) [][]byte {
	out := make([][]byte, len(b))
	for i := range b {
		out[i] = b[i : i+1]
	}
	return out
}

// randomSplit cuts b into pieces of 0 to max bytes.
func randomSplit(b []byte, rng *rand.Rand, max int) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		n := min(rng.IntN(max+1), len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// splitBy cuts b into pieces of the lengths in splits (0 to 255 bytes),
// the rest in the last.
func splitBy(b, splits []byte) [][]byte {
	var out [][]byte
	for _, s := range splits {
		n := min(int(s), len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

// errAny stands for any error in the table below.
var errAny = errors.New("any error")

func TestInbound(t *testing.T) {
	cases := []struct {
		name   string
		wire   string
		status int
		body   string
		err    error // nil, errAny, or one errors.Is finds
		atFeed bool  // the error comes from feed, not end()
		reuse  bool
		extra  bool
		noPull bool // the pull path is not expected to agree
	}{
		{
			name:   "chunked with extensions and trailers",
			wire:   chunkedHead + "5;a=b\r\nhello\r\n6;x;y=\"z\"\r\n world\r\n0;last\r\nX-Trailer: 1\r\nY: 2\r\n\r\n",
			status: 200, body: "hello world", reuse: true,
		},
		{
			name:   "chunked, upper-case hex, padded size",
			wire:   chunkedHead + "A \t;e\r\n0123456789\r\n00\r\n\r\n",
			status: 200, body: "0123456789", reuse: true,
		},
		{
			name:   "chunked, lines ending in a bare LF",
			wire:   "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nhi\r\n0\n\n",
			status: 200, body: "hi", reuse: true,
		},
		{
			name:   "chunked, an SSE stream",
			wire:   chunkedHead + string(encodeChunked([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"), 3, 9)),
			status: 200, body: "data: {\"a\":1}\n\ndata: [DONE]\n\n", reuse: true,
		},
		{
			name:   "Content-Length",
			wire:   "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: application/json\r\n\r\nhello world",
			status: 200, body: "hello world", reuse: true,
		},
		{
			name:   "Content-Length 0",
			wire:   "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
			status: 200, reuse: true,
		},
		{
			name:   "error status with Content-Length",
			wire:   "HTTP/1.1 400 Bad Request\r\nContent-Length: 7\r\n\r\n{\"e\":1}",
			status: 400, body: "{\"e\":1}", reuse: true,
		},
		{
			name:   "close-delimited",
			wire:   "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: a\n\ndata: b\n\n",
			status: 200, body: "data: a\n\ndata: b\n\n",
		},
		{
			name:   "close-delimited, empty",
			wire:   "HTTP/1.1 200 OK\r\n\r\n",
			status: 200,
		},
		{
			name:   "HTTP/1.0 with Content-Length",
			wire:   "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi",
			status: 200, body: "hi",
		},
		{
			name:   "204",
			wire:   "HTTP/1.1 204 No Content\r\n\r\n",
			status: 204, reuse: true,
		},
		{
			name:   "304 with a Content-Length",
			wire:   "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
			status: 304, reuse: true,
		},
		{
			name:   "204 with bytes after",
			wire:   "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200 OK\r\n",
			status: 204, extra: true,
		},
		{
			name:   "100 Continue before the 200",
			wire:   "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
			status: 200, body: "hi", reuse: true,
		},
		{
			name:   "100 Continue and 103 Early Hints before a chunked 200",
			wire:   "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + chunkedHead + "2\r\nhi\r\n0\r\n\r\n",
			status: 200, body: "hi", reuse: true,
		},
		{
			name:   "malformed chunk size",
			wire:   chunkedHead + "zz\r\nab\r\n0\r\n\r\n",
			status: 200, err: errChunked, atFeed: true,
		},
		{
			name:   "chunk size of 17 digits",
			wire:   chunkedHead + "11111111111111111\r\n",
			status: 200, err: errChunked, atFeed: true,
		},
		{
			name:   "empty chunk-size line",
			wire:   chunkedHead + "\r\nab",
			status: 200, err: errChunked, atFeed: true,
		},
		{
			name:   "missing CRLF after data",
			wire:   chunkedHead + "2\r\nabXY0\r\n\r\n",
			status: 200, body: "ab", err: errChunked, atFeed: true,
		},
		{
			name:   "LF alone after data",
			wire:   chunkedHead + "2\r\nab\n0\r\n\r\n",
			status: 200, body: "ab", err: errChunked, atFeed: true,
		},
		{
			name:   "chunk-size line too long",
			wire:   chunkedHead + strings.Repeat("0", 5000) + "\r\n",
			status: 200, err: errAny, atFeed: true,
		},
		{
			name:   "trailer line too long",
			wire:   chunkedHead + "0\r\nX: " + strings.Repeat("y", 5000) + "\r\n\r\n",
			status: 200, err: errAny, atFeed: true,
		},
		{
			name: "malformed head",
			wire: "HTTP/1.1 abc\r\n\r\n",
			err:  errAny, atFeed: true,
		},
		{
			name:   "bytes after a chunked body",
			wire:   chunkedHead + "2\r\nhi\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n",
			status: 200, body: "hi", extra: true,
		},
		{
			name:   "bytes after a Content-Length body",
			wire:   "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiX",
			status: 200, body: "hi", extra: true,
		},
		{
			name:   "Connection: close",
			wire:   "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi",
			status: 200, body: "hi",
		},
		{
			name:   "Connection: close, chunked",
			wire:   "HTTP/1.1 200 OK\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
			status: 200, body: "hi",
		},
		{
			name:   "cut mid-chunk",
			wire:   chunkedHead + "5\r\nhello\r\n5\r\nwor",
			status: 200, body: "hellowor", err: io.ErrUnexpectedEOF,
		},
		{
			name:   "cut in a chunk-size line",
			wire:   chunkedHead + "5\r\nhello\r\n1",
			status: 200, body: "hello", err: io.ErrUnexpectedEOF,
		},
		{
			name:   "cut between the CR and LF after data",
			wire:   chunkedHead + "2\r\nhi\r",
			status: 200, body: "hi", err: io.ErrUnexpectedEOF,
		},
		{
			name:   "cut in the trailer",
			wire:   chunkedHead + "2\r\nhi\r\n0\r\nX: y\r\n",
			status: 200, body: "hi", err: io.ErrUnexpectedEOF,
		},
		{
			name:   "cut after the head",
			wire:   chunkedHead,
			status: 200, err: io.ErrUnexpectedEOF,
		},
		{
			name:   "cut in a Content-Length body",
			wire:   "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel",
			status: 200, body: "hel", err: io.ErrUnexpectedEOF,
		},
		{
			name: "cut in the head",
			wire: "HTTP/1.1 200 OK\r\nContent-Le",
			err:  io.ErrUnexpectedEOF,
		},
		{
			name: "cut after a 100 Continue",
			wire: "HTTP/1.1 100 Continue\r\n\r\n",
			err:  io.ErrUnexpectedEOF,
		},
		{
			name: "no bytes",
			err:  io.EOF,
		},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var in inbound // reused, as the event loop reuses it
	for _, c := range cases {
		wire := []byte(c.wire)
		want := push(&inbound{}, whole(wire))
		ok := want.status == c.status && string(want.body) == c.body && want.atFeed == c.atFeed &&
			want.done == (c.err == nil) && want.extra == c.extra && want.reuse == c.reuse && !want.empty
		switch c.err {
		case nil:
			ok = ok && want.err == nil
		case errAny:
			ok = ok && want.err != nil
		default:
			ok = ok && errors.Is(want.err, c.err)
		}
		if !ok {
			t.Errorf("%s: %v", c.name, want)
			continue
		}
		// Any split gives the same result: the head byte by byte
		// included.
		splits := map[string][][]byte{"byte by byte": bytewise(wire)}
		for i := range 20 {
			splits[fmt.Sprintf("random split %d", i)] = randomSplit(wire, rng, 1+i)
		}
		for _, cut := range []int{1, 3, 17, len(wire) - 1} {
			if cut > 0 && cut < len(wire) {
				splits[fmt.Sprintf("cut at %d", cut)] = [][]byte{wire[:cut], nil, wire[cut:]}
			}
		}
		for name, pieces := range splits {
			if got := push(&in, pieces); !got.same(want) {
				t.Errorf("%s, %s: %v; whole: %v", c.name, name, got, want)
			}
		}
		if c.noPull {
			continue
		}
		// The pull path reads the same bytes alike.
		status, body, err := pull(randomSplit(wire, rng, 8))
		if status != want.status || !bytes.Equal(body, want.body) || (err == nil) != (want.err == nil) {
			t.Errorf("%s: pull: status %d, body %q, err %v; push: %v", c.name, status, body, err, want)
		}
	}
}

// The body handler's error stops feed, which returns it.
func TestInboundBodyError(t *testing.T) {
	stop := errors.New("stop")
	var in inbound
	in.reset(testRequest())
	var got []byte
	err := in.feed([]byte(chunkedHead+"2\r\nab\r\n2\r\ncd\r\n0\r\n\r\n"), func(b []byte) error {
		got = append(got, b...)
		return stop
	})
	if err != stop || string(got) != "ab" {
		t.Errorf("feed: %v after %q; want the handler's error after ab", err, got)
	}
}

// reset forgets a response left in the middle of a line, of the head or
// of the CRLF after a chunk's data.
func TestInboundReset(t *testing.T) {
	next := []byte(chunkedHead + "3\r\nabc\r\n0\r\n\r\n")
	for _, cut := range []string{
		"HTTP/1.1 200 OK\r\nX-Part",
		chunkedHead + "5;ext",
		chunkedHead + "2\r\nhi\r",
		chunkedHead + "0\r\nX-Trailer: par",
		chunkedHead + "5\r\nhe",
	} {
		var in inbound
		if r := push(&in, bytewise([]byte(cut))); r.err != io.ErrUnexpectedEOF {
			t.Fatalf("%q: %v", cut, r)
		}
		if r := push(&in, whole(next)); r.err != nil || string(r.body) != "abc" || !r.reuse {
			t.Errorf("after %q: %v", cut, r)
		}
	}
}

// A chunk's data is passed on as slices of the bytes fed, not copied.
func TestInboundDataNotCopied(t *testing.T) {
	var in inbound
	in.reset(testRequest())
	b := []byte(chunkedHead + "5\r\nhello\r\n0\r\n\r\n")
	err := in.feed(b, func(data []byte) error {
		if &data[0] != &b[len(chunkedHead)+3] {
			t.Errorf("data %q is not a slice of the bytes fed", data)
		}
		return nil
	})
	if err != nil || !in.done {
		t.Fatalf("%v, done %v", err, in.done)
	}
}

// A head over maxHead is refused, or accepted, whatever the pieces it
// comes in.
func TestInboundHeadLimitAnySplit(t *testing.T) {
	field := "X-A: " + strings.Repeat("a", 1000) + "\r\n"
	for _, n := range []int{maxHead/len(field) - 10, maxHead/len(field) + 50} {
		wire := []byte("HTTP/1.1 200 OK\r\n" + strings.Repeat(field, n) + "Content-Length: 2\r\n\r\nhi")
		want := push(&inbound{}, whole(wire))
		var by64k [][]byte
		for b := wire; len(b) > 0; b = b[min(64<<10, len(b)):] {
			by64k = append(by64k, b[:min(64<<10, len(b))])
		}
		for name, pieces := range map[string][][]byte{"64 KiB pieces": by64k, "byte by byte": bytewise(wire)} {
			if got := push(&inbound{}, pieces); !got.same(want) {
				t.Errorf("a %d-byte head, %s: err %v; whole: err %v", len(wire)-2, name, got.err, want.err)
			}
		}
	}
}

// stretch inserts pad copies of b's byte at at%len(b) there, to let the
// fuzzer reach lines around net/http's 4 KiB limit.
func stretch(b []byte, at, pad uint16) []byte {
	if len(b) == 0 || pad == 0 {
		return b
	}
	i := int(at) % len(b)
	pad = min(pad, 9000)
	out := make([]byte, 0, len(b)+int(pad))
	out = append(out, b[:i]...)
	out = append(out, bytes.Repeat(b[i:i+1], int(pad))...)
	return append(out, b[i:]...)
}

// FuzzInbound: a body framed in any chunk sizes and fed in any pieces
// decodes back to itself; and any bytes after a chunked head decode as
// the pull path's chunked decodes them, alike in any split.
func FuzzInbound(f *testing.F) {
	f.Add([]byte("hello world"), []byte{2, 0}, []byte{5, 1, 0, 40}, []byte("5\r\nhello\r\n0\r\n\r\n"), uint16(0), uint16(0))
	f.Add([]byte("data: {}\n\n"), []byte{200}, []byte{1, 1, 1}, []byte("2;e=1\r\nab\r\n0\r\nX: y\r\n\r\nNEXT"), uint16(3), uint16(2))
	f.Add([]byte(""), []byte{}, []byte{}, []byte("2\r\nabXY"), uint16(0), uint16(0))
	f.Add([]byte("x"), []byte{0}, []byte{9}, []byte("3\r\nab"), uint16(0), uint16(0))
	f.Add([]byte("x"), []byte{0}, []byte{9}, []byte("2\nab\r\n0\n\n"), uint16(0), uint16(0))
	// Long lines, below the 4 KiB limit.
	f.Add([]byte("x"), []byte{0}, []byte{255, 7}, []byte("1;e\r\na\r\n0\r\n\r\n"), uint16(2), uint16(4000))
	f.Add([]byte("x"), []byte{0}, []byte{255, 7}, []byte("0\r\nX: y\r\n\r\n"), uint16(6), uint16(4000))
	f.Fuzz(func(t *testing.T, body, sizes, splits, raw []byte, at, pad uint16) {
		// A body in any chunk sizes, fed in any pieces.
		var sz []int
		for _, s := range sizes {
			sz = append(sz, 1+int(s))
		}
		wire := append([]byte(chunkedHead), encodeChunked(body, sz...)...)
		for _, pieces := range [][][]byte{splitBy(wire, splits), whole(wire), bytewise(wire)} {
			r := push(&inbound{}, pieces)
			if r.err != nil || !bytes.Equal(r.body, body) || !r.done || r.extra || !r.reuse || r.empty {
				t.Fatalf("%q in sizes %v, fed in %d pieces: %v", body, sz, len(pieces), r)
			}
		}

		// Any bytes after a valid head.
		wire = append([]byte(chunkedHead), stretch(raw, at, pad)...)
		pieces := splitBy(wire, splits)
		want := push(&inbound{}, pieces)
		for _, other := range [][][]byte{whole(wire), bytewise(wire)} {
			if got := push(&inbound{}, other); !got.same(want) {
				t.Fatalf("%q: fed in %d pieces: %v; in %d: %v", wire, len(other), got, len(pieces), want)
			}
		}
		if want.empty {
			t.Fatalf("%q: body called with no bytes", wire)
		}
		_, pbody, perr := pull(pieces)
		if !bytes.Equal(pbody, want.body) || (perr == nil) != (want.err == nil) {
			t.Fatalf("%q: pull: body %q, err %v; push: %v", wire, pbody, perr, want)
		}
	})
}

// A 200's header fields are parsed again when the response has ended
// (header): in flight it keeps the head's bytes, not the map. Another
// status keeps its fields at once; a reused inbound gives each response
// its own.
func TestInboundHeaderAtEnd(t *testing.T) {
	var in inbound
	for _, c := range []struct {
		head, id string
		kept     bool
	}{
		{"HTTP/1.1 200 OK\r\nX-Request-Id: a1\r\nTransfer-Encoding: chunked\r\n\r\n", "a1", false},
		{"HTTP/1.1 500 Internal Server Error\r\nX-Request-Id: e2\r\nContent-Length: 0\r\n\r\n", "e2", true},
		{"HTTP/1.1 200 OK\r\nX-Request-Id: b3\r\nContent-Length: 2\r\n\r\n", "b3", false},
	} {
		in.reset(posted)
		buf := []byte(c.head)
		if err := in.feed(buf[:10], func([]byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if err := in.feed(buf[10:], func([]byte) error { return nil }); err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = '#' // the bytes fed are the caller's again
		}
		if got := in.resp.Header != nil; got != c.kept {
			t.Errorf("%s: header fields held in flight %v, want %v", c.id, got, c.kept)
		}
		in.header()
		if got := in.resp.Header.Get("X-Request-Id"); got != c.id {
			t.Errorf("X-Request-Id at the end %q, want %q", got, c.id)
		}
	}
}
