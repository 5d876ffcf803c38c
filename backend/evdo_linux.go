//go:build linux

package backend

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"benchserve/record"
)

// eventsFor is the transport that sends c's requests through the event
// loop: plain HTTP, on Linux, through NewHTTPClient's transport, unless
// BENCHSERVE_RECEIVE=poller.
func eventsFor(c *Client) *transport {
	t, ok := c.http.Transport.(*transport)
	if !ok || !strings.HasPrefix(c.url, "http://") || eventLoop() == nil {
		return nil
	}
	return t
}

// posted stands for every request in the parsing of responses, which
// needs only its method: the request itself, and its body, are garbage
// once written (at thousands of streams, most of a request's memory).
var posted = &http.Request{Method: http.MethodPost}

// doEvents is Do on the event loop: the request's goroutine writes the
// request, then sleeps while the loop reads and parses the response, and
// concludes the record. It keeps Do's rules: the clock, the gate, one
// retry on a kept connection the server had closed, the errors' words.
func (c *Client) doEvents(ctx context.Context, t *transport, in *Input, rec *record.Record, epoch time.Time, cn *scratch) {
	buf, key, err := c.wire(ctx, in, t.keep)
	if err != nil {
		fail(rec, record.KindOther, fmt.Sprintf("building the request: %v", err))
		return
	}
	defer func() { putWire(buf) }()
	l := eventLoop()
	x := &cn.x
	note := &cn.note
	st := time.Now()
	var s *sock
	for retried := false; ; retried = true {
		if buf == nil { // a retry: the request built again
			if buf, _, err = c.wire(ctx, in, t.keep); err != nil {
				break
			}
		}
		var reused bool
		s, reused, err = t.getSock(ctx, l, key, retried)
		if err != nil {
			break
		}
		note.dialed, note.start = !reused, time.Time{}
		x.start(c, posted)
		s.x = x
		stop := context.AfterFunc(ctx, s.shutdown)
		var n int
		passed := in.Gate.pass(func() {
			n, err = s.write(buf.Bytes(), func() { note.start = time.Now() })
		})
		putWire(buf)
		buf = nil
		if !passed {
			stop()
			t.putSock(s)
			rec.Sent, rec.Start = false, 0
			return
		}
		if err == nil {
			sent := st
			if !note.dialed {
				sent = note.start
			}
			cn.p.reset(c, sent, rec, in.OutputLen)
			select {
			case <-cn.wake:
			default:
			}
			if err = s.loop.watch(s, sockReading); err == nil {
				<-cn.done
				if x.in.resp == nil {
					err = x.err
				}
			}
		}
		stopped := stop()
		if err != nil {
			s.close()
			// As the transport: a kept connection the server had closed
			// is tried once more on a new one, when no byte came back.
			again := n == 0 || closedByPeer(err)
			if reused && again && x.in.got == 0 && !retried && ctx.Err() == nil {
				continue
			}
			break
		}
		c.conclude(ctx, cn, x, rec)
		if t.keep && stopped && x.err == nil && x.in.reusable() {
			t.putSock(s)
		} else {
			s.close()
		}
		break
	}
	if !note.start.IsZero() {
		rec.SendDelay = note.start.Sub(st).Seconds()
		if !note.dialed {
			st = note.start
		}
	}
	rec.Start = st.Sub(epoch).Seconds()
	if err != nil {
		kind, msg := c.transportError(ctx, err)
		fail(rec, kind, msg)
	}
}

// conclude completes rec from the response the loop read.
func (c *Client) conclude(ctx context.Context, cn *scratch, x *exchange, rec *record.Record) {
	resp := x.in.resp
	cn.body = x.whole
	c.takeID(resp, rec)
	if resp.StatusCode != http.StatusOK {
		resp.Body = io.NopCloser(x.errorBody())
		fail(rec, statusKind(resp.StatusCode), statusError(resp))
		return
	}
	err := x.err
	if err == nil && x.in.whole() {
		p := &cn.p
		at, _, kernel := arrivalAt(x.lastNow, x.lastNs, p.st, time.Time{})
		if x.lastNow.IsZero() {
			at, kernel = time.Now(), false
		}
		err = c.wholeDoc(p, x.whole, at, kernel)
	}
	c.finishWith(ctx, &cn.p, err)
	c.addDelays(&cn.delays)
}

// wire is in's request as it goes out, head and body, in a pooled
// buffer, and the key of its server's connections. Without keep-alive
// it asks the server to close the connection, as the transport does.
func (c *Client) wire(ctx context.Context, in *Input, keep bool) (*bytes.Buffer, string, error) {
	req, err := c.request(ctx, in)
	if err != nil {
		return nil, "", err
	}
	req.Close = !keep
	buf := reqBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if err := req.Write(buf); err != nil {
		putWire(buf)
		return nil, "", err
	}
	return buf, connKey(req), nil
}

func putWire(buf *bytes.Buffer) {
	if buf != nil && buf.Cap() <= 1<<20 {
		reqBufs.Put(buf)
	}
}
