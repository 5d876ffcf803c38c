package http1

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// encodeChunked frames body as chunks of the given sizes (the rest in the
// last), with an extension on the first and a trailer.
func encodeChunked(body []byte, sizes ...int) []byte {
	var b bytes.Buffer
	for i := 0; len(body) > 0; i++ {
		n := len(body)
		if i < len(sizes) && sizes[i] < n {
			n = sizes[i]
		}
		ext := ""
		if i == 0 {
			ext = ";name=value"
		}
		fmt.Fprintf(&b, "%x%s\r\n%s\r\n", n, ext, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\nX-Trailer: t\r\n\r\n")
	return b.Bytes()
}

// Any framing, read through any split of the connection's bytes, gives
// the body back exactly and leaves the connection at the next response.
func TestChunkedDecodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 300 {
		body := make([]byte, rng.IntN(3000))
		for i := range body {
			body[i] = byte('a' + rng.IntN(26))
		}
		var sizes []int
		for range 1 + rng.IntN(10) {
			sizes = append(sizes, 1+rng.IntN(600))
		}
		wire := append(encodeChunked(body, sizes...), "NEXT"...)
		src := &splitReader{data: wire, rng: rng, max: 1 + rng.IntN(200)}
		br := bufio.NewReaderSize(src, 64+rng.IntN(4096))
		c := &chunked{br: br}
		got, err := io.ReadAll(readerOf(c, rng))
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("trial %d: %d bytes, %v; want %d bytes", trial, len(got), err, len(body))
		}
		rest, _ := io.ReadAll(br)
		if string(rest) != "NEXT" {
			t.Fatalf("trial %d: left %q after the body, want NEXT", trial, rest)
		}
	}
}

// readerOf reads r with reads of random sizes.
func readerOf(r io.Reader, rng *rand.Rand) io.Reader {
	return readerFunc(func(p []byte) (int, error) {
		return r.Read(p[:1+rng.IntN(len(p))])
	})
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

func TestChunkedMalformed(t *testing.T) {
	for _, wire := range []string{
		"zz\r\nab\r\n0\r\n\r\n",            // not hex
		"2\r\nabXY0\r\n\r\n",               // no CRLF after the data
		"\r\nab",                           // no size
		"11111111111111111\r\n",            // 17 digits
		"5\r\nab",                          // cut in the data
		"2\r\nab\r\n0\r\nX: y\r\n",         // cut in the trailer
		strings.Repeat("0", 5000) + "\r\n", // line too long
	} {
		c := &chunked{br: bufio.NewReaderSize(strings.NewReader(wire), 16)}
		if _, err := io.ReadAll(c); err == nil {
			t.Errorf("%.30q: no error", wire)
		}
	}
}

// A Read that holds bytes returns them rather than wait for the rest of
// the chunk, of the CRLF after it, or of the next chunk's size line.
func TestChunkedNoWaitHoldingBytes(t *testing.T) {
	for _, part := range []string{
		"5\r\nab",             // inside a chunk
		"2\r\nab\r",           // before the CRLF
		"2\r\nab\r\n",         // before the next size line
		"2\r\nab\r\n1",        // inside it
		"2\r\nab\r\n0\r\n",    // before the trailer's end
		"2\r\nab\r\n0\r\nX: ", // inside a trailer line
	} {
		pr, pw := io.Pipe()
		go pw.Write([]byte(part))
		c := &chunked{br: bufio.NewReader(pr)}
		done := make(chan string, 1)
		go func() {
			b := make([]byte, 64)
			n, _ := c.Read(b)
			done <- string(b[:n])
		}()
		select {
		case got := <-done:
			if got != "ab" {
				t.Errorf("%q: read %q, want ab", part, got)
			}
		case <-time.After(2 * time.Second):
			t.Errorf("%q: the read waited for more bytes while holding some", part)
		}
		pw.Close()
	}
}

// splitServer answers each request with a chunked stream whose second
// HTTP chunk straddles two writes hold apart: the first event is complete
// in the first write. rest receives the time it wrote the second.
func splitServer(t *testing.T, useTLS bool, hold time.Duration, rest chan<- time.Time) string {
	var wrap func(net.Listener) net.Listener
	if useTLS {
		// httptest's own certificate, which the client is told to trust.
		s := httptest.NewTLSServer(http.NotFoundHandler())
		certs := s.TLS.Certificates
		s.Close()
		wrap = func(ln net.Listener) net.Listener { return tls.NewListener(ln, &tls.Config{Certificates: certs}) }
	}
	ev1 := "data: {\"choices\":[{\"text\":\"a\"}]}\n\n"
	ev2 := "data: {\"choices\":[{\"text\":\"b\"}]}\n\ndata: [DONE]\n\n"
	url := rawAccept(t, wrap, func(conn net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		chunk2 := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(ev2), ev2)
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n%s", len(ev1), ev1, chunk2[:10])
		time.Sleep(hold)
		rest <- time.Now()
		io.WriteString(conn, chunk2[10:])
	})
	if useTLS {
		url = "https" + strings.TrimPrefix(url, "http")
	}
	return url
}

// A complete event is timed when it came, though the HTTP chunk after it
// is completed only later (a lost segment's retransmission, say); over
// plain HTTP and over TLS, through either receiver.
func TestSplitChunkTimedOnArrival(t *testing.T) {
	const hold = 300 * time.Millisecond
	run(t, func(t *testing.T, rc receiver) {
		for _, useTLS := range []bool{false, true} {
			rest := make(chan time.Time, 1)
			url := splitServer(t, useTLS, hold, rest)
			tr := rc.transport(Options{KeepAlive: true, TLS: &tls.Config{InsecureSkipVerify: true}})
			h := send(t, tr, url)
			if !h.success() || len(h.lines) != 3 {
				t.Fatalf("tls %v: %s %q", useTLS, h.rec.Error, h.lines)
			}
			wrote := <-rest
			t.Logf("tls %v: first line %v before the rest was written, second %v after", useTLS, wrote.Sub(h.at[0]), h.at[1].Sub(wrote))
			// Timed at the chunk's completion, the first event would come
			// after the server wrote the rest. Bounds of cause: the first
			// line is timed before the rest was written, the second not
			// before (less a millisecond: kernel receive times and Go's
			// clock are read apart).
			if !h.at[0].Before(wrote) || h.at[1].Before(wrote.Add(-time.Millisecond)) {
				t.Errorf("tls %v: first line %v, second %v, the rest written at %v; want the first before and the second after", useTLS, h.at[0], h.at[1], wrote)
			}
			tr.CloseIdleConnections()
		}
	})
}

// FuzzChunked: any bytes decode without a panic or a hang, to an error or
// to some body; and any body framed with any chunk sizes, read through any
// split, decodes back to itself.
func FuzzChunked(f *testing.F) {
	f.Add([]byte("5\r\nhello\r\n0\r\n\r\n"), []byte{3, 1}, uint64(1))
	f.Add([]byte("data: {}\n\n"), []byte{200}, uint64(9))
	f.Fuzz(func(t *testing.T, data, sizes []byte, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed))
		c := &chunked{br: bufio.NewReaderSize(&splitReader{data: data, rng: rng, max: 1 + int(seed%50)}, 16+int(seed%300))}
		if _, err := io.ReadAll(readerOf(c, rng)); err == nil && !bytes.Contains(data, []byte("0")) {
			t.Fatalf("%q decoded without a last chunk", data)
		}
		var sz []int
		for _, s := range sizes {
			sz = append(sz, 1+int(s))
		}
		wire := encodeChunked(data, sz...)
		br := bufio.NewReaderSize(&splitReader{data: wire, rng: rng, max: 1 + int(seed%97)}, 16+int(seed%4096))
		got, err := io.ReadAll(readerOf(&chunked{br: br}, rng))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip of %q in sizes %v: %q, %v", data, sz, got, err)
		}
	})
}
