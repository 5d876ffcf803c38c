package sim

import (
	"net/http"
	"time"

	"benchserve/internal/clock"
)

// paced writes a reply made outside the engine (speech, transcription):
// each piece at its due time, timed into the truth record.
type paced struct {
	s   *Server
	w   http.ResponseWriter
	rc  *http.ResponseController
	r   *http.Request
	rec *truthRec
}

func (s *Server) paced(w http.ResponseWriter, r *http.Request, rec *truthRec) *paced {
	return &paced{s: s, w: w, rc: http.NewResponseController(w), r: r, rec: rec}
}

// wait waits for due with clock.WaitUntil (a timer would leave about a
// millisecond late); false, with the truth kept, when the client left.
func (p *paced) wait(due time.Time) bool {
	if clock.WaitUntil(p.r.Context(), due) {
		return true
	}
	p.rec.err, p.rec.finish, p.rec.cancelled = "the client closed the connection", "", p.s.since(time.Now())
	p.s.truth.add(p.rec)
	return false
}

// send writes and flushes b, a chunk of tokens; false when the write
// failed (the record says why).
func (p *paced) send(b []byte, tokens int) bool {
	w0 := time.Now()
	_, err := p.w.Write(b)
	if err == nil {
		err = p.rc.Flush()
	}
	t := time.Now()
	if err != nil {
		p.rec.err, p.rec.finish = "writing the reply: "+err.Error(), ""
		return false
	}
	p.rec.chunk(p.s.since(t), tokens, int64(t.Sub(w0)))
	p.rec.completionTokens += tokens
	return true
}

// end keeps the truth record of the reply.
func (p *paced) end() {
	p.rec.end = p.s.since(time.Now())
	p.s.truth.add(p.rec)
}
