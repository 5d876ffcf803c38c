//go:build linux

package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"benchserve/record"
)

// eventsFor is the transport that sends req through the event loop: plain
// HTTP, on Linux, through NewHTTPClient's transport, unless
// BENCHSERVE_RECEIVE=poller.
func eventsFor(c *Client, req *http.Request) *transport {
	t, ok := c.http.Transport.(*transport)
	if !ok || req.URL.Scheme != "http" || eventLoop() == nil {
		return nil
	}
	return t
}

// doEvents is Do on the event loop: the request's goroutine writes the
// request, then sleeps while the loop reads and parses the response, and
// concludes the record. It keeps Do's rules: the clock, the gate, one
// retry on a kept connection the server had closed, the errors' words.
func (c *Client) doEvents(ctx context.Context, t *transport, req *http.Request, in *Input, rec *record.Record, epoch time.Time, cn *scratch) {
	if !t.keep && !req.Close {
		r := *req
		r.Close = true
		req = &r
	}
	buf, err := wire(req)
	if err != nil {
		fail(rec, record.KindOther, fmt.Sprintf("building the request: %v", err))
		return
	}
	// Its bytes go back to the pool once written, not when the response
	// ends: at thousands of streams, that is most of a request's memory.
	defer func() { putWire(buf) }()
	l := eventLoop()
	key := connKey(req)
	x := &cn.x
	note := &cn.note
	st := time.Now()
	var s *sock
	for retried := false; ; retried = true {
		if buf == nil { // a retry: the request again, from its body's start
			if buf, err = rewire(req); err != nil {
				break
			}
		}
		var reused bool
		s, reused, err = t.getSock(ctx, l, key, retried)
		if err != nil {
			break
		}
		note.dialed, note.start = !reused, time.Time{}
		x.start(c, req)
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

// wire is req as it goes out, head and body, in a pooled buffer.
func wire(req *http.Request) (*bytes.Buffer, error) {
	buf := reqBufs.Get().(*bytes.Buffer)
	buf.Reset()
	if err := req.Write(buf); err != nil {
		putWire(buf)
		return nil, err
	}
	return buf, nil
}

// rewire is wire for a request whose body was read once already.
func rewire(req *http.Request) (*bytes.Buffer, error) {
	if req.GetBody == nil {
		return nil, errors.New("the request's body cannot be sent again")
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, err
	}
	r := *req
	r.Body = body
	return wire(&r)
}

func putWire(buf *bytes.Buffer) {
	if buf != nil && buf.Cap() <= 1<<20 {
		reqBufs.Put(buf)
	}
}
