package sim

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// What the stream faults write. The error event is what vLLM-compatible
// servers send when generation fails after the 200 (the llm-d-inference-sim
// transcript error-midstream-multiprompt-stream).
var (
	doneEvent      = []byte("data: [DONE]\n\n")
	malformedEvent = []byte(`data: {"object":"malformed","choices":[{"index":0,"text":"` + "\n\n")
	errorObject    = []byte(`{"error":{"message":"simulated fault: the engine failed mid-generation","type":"InternalServerError","param":null,"code":500}}`)
	errorEvent     = []byte("data: " + string(errorObject) + "\n\ndata: [DONE]\n\n")
)

// eventFaults is a format of named events (responses, messages) whose
// stream faults write that format's own events.
type eventFaults interface {
	// errorEvents is what error-chunk writes in place of the take's
	// chunk: the format's error event(s), ending the stream.
	errorEvents(j *job) []byte
	// errorWhole is the 200 body error-chunk gives a whole reply.
	errorWhole(j *job) []byte
	// malformedEvent is a truncated event of the format.
	malformedEvent() []byte
}

// trimDone leaves out what ends a stream for no-done: data: [DONE], or an
// event format's terminal event (the chunk marks where it starts, ev.end).
func (j *job) trimDone(b []byte) []byte {
	if _, ok := j.f.(eventFaults); ok {
		return b[:min(j.ev.end, len(b))]
	}
	return bytes.TrimSuffix(b, doneEvent)
}

// headerFault reads the X-Sim-Fault header: the fault it forces and
// whether it forces one ("none" forces none).
func headerFault(r *http.Request, j *job) (Fault, bool, *apiError) {
	v := r.Header.Get(FaultHeader)
	if v == "" {
		return Fault{}, false, nil
	}
	f, err := ParseFault(v)
	if err != nil {
		return Fault{}, false, badRequest("%s: %v", FaultHeader, err)
	}
	if !f.applies(j) {
		return Fault{}, false, badRequest("%s: %s cannot be done to this request (no [DONE] to leave out, an embedding, or a batch of prompts, which takes only 429, 500, 503, reset and slow-headers)", FaultHeader, f.Kind)
	}
	return f, true, nil
}

// early does the faults that come before the engine; true when the reply
// is over.
func (j *job) early(w http.ResponseWriter, ctx context.Context) bool {
	rec := j.rec
	rec.promptTokens = len(j.prompt)
	switch j.fault.Kind {
	case FaultSlowHeaders:
		if sleepCtx(ctx, seconds(j.fault.Arg)) {
			return false
		}
		rec.err = "the client closed the connection"
		return true
	case Fault429, Fault500, Fault503:
		e := statusFault(j.fault.Kind)
		j.lastWrite()
		j.f.fail(w, e)
		rec.err = "fault: " + strconv.Itoa(e.status) + " " + http.StatusText(e.status)
		rec.end = j.s.since(time.Now())
		return true
	case FaultReset:
		j.lastWrite()
		rec.err = "fault: connection reset before the headers"
		if !hangUp(w, true) {
			rec.err += " (the connection could not be taken over)"
		}
		return true
	case FaultEmpty:
		j.serveEmpty(w)
		return true
	}
	return false
}

func statusFault(k FaultKind) *apiError {
	switch k {
	case Fault429:
		return &apiError{status: http.StatusTooManyRequests, typ: "RateLimitError", message: "Rate limit reached (simulated fault 429)."}
	case Fault500:
		return &apiError{status: http.StatusInternalServerError, typ: "InternalServerError", message: "Internal server error (simulated fault 500)."}
	}
	return &apiError{status: http.StatusServiceUnavailable, typ: "InternalServerError", message: "The server is overloaded or not ready yet (simulated fault 503)."}
}

// serveEmpty answers 200 with no output tokens, in the format's shape: the
// closing chunks of a stream, or a whole reply with empty text.
func (j *job) serveEmpty(w http.ResponseWriter) {
	p := progress{done: true, reason: finStop}
	h := w.Header()
	var b []byte
	if j.stream {
		h.Set("Content-Type", j.f.contentType())
		b = j.f.chunk(j, nil, 0, 0, &p)
	} else {
		b = j.f.whole(j, nil, &p)
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(b)))
	}
	w.WriteHeader(http.StatusOK)
	j.lastWrite()
	_, err := w.Write(b)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	end := j.s.since(time.Now())
	if err != nil {
		j.rec.err = "writing the response: " + err.Error()
		end = -1
	}
	j.finish(&p, end)
}

// faultAfter is how many content chunks go out before a mid-stream fault.
func (j *job) faultAfter() int {
	if j.fault.Kind == FaultDisconnect || j.fault.Kind == FaultTruncate {
		return int(j.fault.Arg)
	}
	return 1
}

// streamFault does a mid-stream fault before the write of the take that
// starts at token from; true when the reply is over.
func (j *job) streamFault(w http.ResponseWriter, rc *http.ResponseController, ctx context.Context, from int, p *progress) bool {
	switch j.fault.Kind {
	case FaultStall:
		sleepCtx(ctx, seconds(j.fault.Arg)) // a client that went away fails the next write
	case FaultMalformed:
		bad := malformedEvent
		if ef, ok := j.f.(eventFaults); ok {
			bad = ef.malformedEvent()
		}
		writeFlush(w, rc, bad) //nolint:errcheck // likewise
	case FaultHugeLine:
		if writeFlush(w, rc, []byte(": ")) == nil {
			w.Write(padding(j.fault.Arg, 'x')) //nolint:errcheck // likewise
			writeFlush(w, rc, []byte("\n\n"))  //nolint:errcheck
		}
	case FaultTruncate:
		if !p.done {
			j.s.eng.abort(j.req)
		}
		p.avail, p.reason = from, finAbort
		j.lastWrite()
		j.rec.err = fmt.Sprintf("fault: the stream ended after %d content chunks, without its end", j.sent)
		// Returning ends the chunked body cleanly: the client reads a
		// complete response that lacks the stream's end.
		j.finish(p, j.s.since(time.Now()))
		return true
	case FaultDisconnect, FaultErrorChunk:
		if !p.done {
			j.s.eng.abort(j.req)
		}
		// Only the tokens already sent count.
		p.avail, p.reason = from, finAbort
		j.lastWrite()
		end := int64(-1)
		if j.fault.Kind == FaultDisconnect {
			j.rec.err = fmt.Sprintf("fault: disconnected after %d content chunks", j.sent)
			if !hangUp(w, false) {
				j.rec.err += " (the connection could not be taken over)"
			}
		} else {
			j.rec.err = "fault: an error object in the stream"
			ev := errorEvent
			if ef, ok := j.f.(eventFaults); ok {
				ev = ef.errorEvents(j)
			}
			if writeFlush(w, rc, ev) == nil {
				end = j.s.since(time.Now())
			}
		}
		j.finish(p, end)
		return true
	}
	return false
}

// wholeFault changes a whole reply's body b for the fault, and returns it
// with the Content-Length to announce.
func (j *job) wholeFault(b []byte, p *progress) ([]byte, int) {
	switch j.fault.Kind {
	case FaultErrorChunk:
		p.avail = 0
		j.rec.err = "fault: an error object in a 200 reply"
		if ef, ok := j.f.(eventFaults); ok {
			b = ef.errorWhole(j)
			return b, len(b)
		}
		return errorObject, len(errorObject)
	case FaultMalformed:
		return b[:len(b)/2], len(b) / 2
	case FaultHugeLine:
		return b, len(b) + len(padding(j.fault.Arg, ' '))
	}
	return b, len(b)
}

// wholeFaultActs does what a fault does between the headers and the body
// of a whole reply; true when the reply is over.
func (j *job) wholeFaultActs(w http.ResponseWriter, ctx context.Context, b []byte, p *progress) bool {
	rc := http.NewResponseController(w)
	switch j.fault.Kind {
	case FaultStall:
		rc.Flush() //nolint:errcheck // a dead connection fails the body's write
		sleepCtx(ctx, seconds(j.fault.Arg))
	case FaultHugeLine:
		w.Write(padding(j.fault.Arg, ' ')) //nolint:errcheck // likewise
	case FaultDisconnect:
		writeFlush(w, rc, b[:len(b)/2]) //nolint:errcheck
		j.rec.err = "fault: disconnected in the middle of the body"
		if !hangUp(w, false) {
			j.rec.err += " (the connection could not be taken over)"
		}
		p.avail, p.reason = 0, finAbort
		j.finish(p, -1)
		return true
	}
	return false
}

// hangUp takes the connection over and closes it: with a reset (SO_LINGER
// 0 sends RST) or a plain close, leaving a chunked body unfinished. False
// if the writer cannot be taken over (not a network connection).
func hangUp(w http.ResponseWriter, reset bool) bool {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	// A *net.TCPConn, or the netstamp.Conn around one.
	if tc, ok := conn.(interface{ SetLinger(sec int) error }); ok && reset {
		tc.SetLinger(0) //nolint:errcheck // a plain close is the fallback
	}
	conn.Close()
	return true
}

func writeFlush(w http.ResponseWriter, rc *http.ResponseController, b []byte) error {
	if _, err := w.Write(b); err != nil {
		return err
	}
	return rc.Flush()
}

// sleepCtx waits d, or less if ctx ends first (then false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func seconds(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
