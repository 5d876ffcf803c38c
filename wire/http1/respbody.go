package http1

import (
	"context"
	"io"
	"sync"
)

// body is a response body RoundTrip returned, on a connection of t: read
// to its end and closed, it gives the connection back.
type body struct {
	t     *Transport
	pc    *pconn
	rc    io.ReadCloser // net/http's reader of the body; nil when chunked
	ch    chunked
	ctx   context.Context
	stop  func() bool
	reuse bool

	mu          sync.Mutex // Close may come from another goroutine
	eof, closed bool
}

// LastArrival is the kernel's receive time of the bytes the connection
// last read (Unix ns), 0 when unknown: the arrival of the newest bytes Read
// has returned, since no Read reads the connection while it holds bytes.
// It makes the body a netstamp.Stamped, which ReadClock times reads with.
func (b *body) LastArrival() int64 {
	if b.pc.stamps == nil {
		return 0
	}
	return b.pc.stamps.LastArrival()
}

func (b *body) Read(p []byte) (n int, err error) {
	if b.rc != nil {
		n, err = b.rc.Read(p)
	} else {
		n, err = b.ch.Read(p)
	}
	if err == io.EOF {
		b.mu.Lock()
		b.eof = true
		b.mu.Unlock()
	} else if err != nil && b.ctx.Err() != nil {
		err = b.ctx.Err()
	}
	return n, err
}

// Close gives the connection back after a complete body; otherwise it
// closes it (net/http would read the rest first, which for a stream can
// take as long as the generation).
func (b *body) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	eof := b.eof
	b.mu.Unlock()
	// stop is false once the context has closed the connection.
	if b.stop() && eof && b.reuse {
		if b.rc != nil {
			b.rc.Close()
		}
		b.t.putConn(b.pc)
		return nil
	}
	return b.pc.conn.Close()
}
