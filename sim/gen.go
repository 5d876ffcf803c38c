package sim

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// maxBody bounds a request body.
const maxBody = 256 << 20

// format is one wire format: how its request body reads and how its
// replies are written.
type format interface {
	// idPrefix starts the request ids ("cmpl-").
	idPrefix() string
	// parse reads the body into j's request fields.
	parse(s *Server, r *http.Request, body []byte, j *job) *apiError
	// fail writes an error in the format's own error shape.
	fail(w http.ResponseWriter, e *apiError)
	// contentType of a streamed reply.
	contentType() string
	// chunk appends what one take writes to a stream: the tokens [from,
	// from+n) (n may be 0) and, when p.done, whatever ends the stream.
	chunk(j *job, b []byte, from, n int, p *progress) []byte
	// whole appends the complete non-streamed reply.
	whole(j *job, b []byte, p *progress) []byte
}

var (
	_ format = nativeFormat{}
	_ format = completionsFormat{}
	_ format = chatFormat{}
	_ format = trtFormat{}
	_ format = embedFormat{}
	_ format = classifyFormat{}
	_ format = responsesFormat{}
	_ format = messagesFormat{}
	_ format = rerankFormat{}
)

// apiError is a request the simulator refuses.
type apiError struct {
	status       int
	typ, message string
	param        string
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "BadRequestError", message: fmt.Sprintf(format, args...)}
}

// job is one request to a generation endpoint, from parsing to the last
// byte written.
type job struct {
	s       *Server
	f       format
	id      string
	created int64 // Unix seconds at arrival
	arrival time.Time
	// bodyHash is the SHA-256 of the request body, for the truth: a
	// replayed plan's bytes can be checked against what was received.
	bodyHash [sha256.Size]byte

	// Filled by parse.
	model        string // as echoed in replies
	prompt       []int
	maxNew       int
	ignoreEOS    bool
	stream       bool
	usage        bool // stream_options.include_usage
	cacheDetails bool // return_cached_tokens_details
	embed        bool
	inputs       int            // embeddings: how many inputs; rerank: documents
	rerank       rerankKind     // rerank and score: the reply's shape
	prompts      [][]int        // a batch: one engine request each (batch.go)
	params       []promptParams // a batch: one for all prompts, or one each
	index        int            // a batch's prompt: its position in the list
	interval     int            // a batch's prompt: SGLang's stream_interval
	reasoning    int            // leading reply tokens that are reasoning (chat-like formats)
	greedy       bool           // temperature 0: the reply is a function of the prompt

	req     *request
	rec     *truthRec
	closing bool   // counted in Server.closing
	started bool   // the first stream chunk has been written
	text    []byte // text so far, for cumulative and whole replies
	idsJSON []byte // output ids so far, comma-separated (native)
	outIDs  []int  // embeddings: one seed per input
	buf     []byte

	// gone is when the client closed the connection mid-request
	// (nanoseconds since the start, plus one; 0: it did not), set once by
	// whichever saw it first: the context's end or a failed write.
	gone atomic.Int64

	num uint64   // the request's number, N of its id
	ev  evStream // event streams (responses, messages): their state

	fault     Fault
	faultDone bool // a mid-stream fault has acted
	sent      int  // content chunks written
}

// generate serves every endpoint that runs a request through the engine.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, f format) {
	j := &job{s: s, f: f, arrival: arrival(r)}
	j.created = j.arrival.Unix()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		f.fail(w, badRequest("reading the request body: %v", err))
		return
	}
	j.bodyHash = sha256.Sum256(body)
	if e := f.parse(s, r, body, j); e != nil {
		f.fail(w, e)
		return
	}
	if j.prompts != nil {
		s.generateBatch(w, r, j)
		return
	}
	if e := s.checkLength(j.prompt, j.maxNew); e != nil {
		f.fail(w, e)
		return
	}
	forced, hasForced, e := headerFault(r, j)
	if e != nil {
		f.fail(w, e)
		return
	}
	n := s.newID(w, r, j)
	seed := mix64(uint64(s.cfg.Seed) ^ n<<1)
	if j.greedy {
		seed = promptSeed(s.cfg.Seed, j.prompt)
	}
	j.req = newRequest(j.prompt, j.maxNew, j.ignoreEOS, j.embed, s.cfg.PageSize, seed)
	j.req.greedy = j.greedy
	j.rec = newTruthRec(j.id, r.URL.Path, j.stream, s.since(j.arrival))
	j.rec.body, j.rec.reasoning = j.bodyHash, j.reasoning
	s.pickFault(j, forced, hasForced, n)
	j.rec.fault = j.fault
	if j.fault.Kind == FaultDiverge {
		j.req.divergeOver = int(j.fault.Arg)
	}
	if !j.early(w, r.Context()) {
		j.rec.enqueued = s.since(time.Now())
		// A client that goes away aborts the request; the engine then ends
		// it, which wakes the writer.
		stop := context.AfterFunc(r.Context(), func() {
			j.clientGone(time.Now())
			s.eng.abort(j.req)
		})
		s.eng.submit(j.req)
		if j.stream {
			j.serveStream(w, r.Context())
		} else {
			j.serveWhole(w, r.Context())
		}
		stop()
		if g := j.gone.Load(); g > 0 {
			j.rec.cancelled = g - 1
		}
	}
	s.truth.add(j.rec)
	if j.closing {
		s.closing.Add(-1)
	}
}

// newID numbers j and names it: its format's prefix and the number, or a
// client's own X-Request-Id, kept as vLLM keeps it so that the client's
// records and the truth name each request alike.
func (s *Server) newID(w http.ResponseWriter, r *http.Request, j *job) uint64 {
	n := s.seq.Add(1)
	j.num = n
	j.id = j.f.idPrefix() + strconv.FormatUint(n, 10)
	if rid := r.Header.Get("X-Request-Id"); plainID(rid) {
		j.id = rid
	}
	w.Header().Set("X-Request-Id", j.id)
	return n
}

// pickFault gives j the fault a header forced, else the one drawn for
// request n when it applies, and counts it.
func (s *Server) pickFault(j *job, forced Fault, hasForced bool, n uint64) {
	j.fault = forced
	if !hasForced {
		if d := s.drawFault(n); d.applies(j) {
			j.fault = d
		}
	}
	if j.fault.Kind != FaultNone {
		s.met.faults[j.fault.Kind].Add(1)
	}
}

// clientGone notes that the client went away at t, unless noted before.
func (j *job) clientGone(t time.Time) {
	j.gone.CompareAndSwap(0, j.s.since(t)+1)
}

// lastWrite marks that j's last write begins: a client that has read it
// must find j in /sim/truth.
func (j *job) lastWrite() {
	j.closing = true
	j.s.closing.Add(1)
}

// checkLength rejects requests that can never run, with vLLM's message for
// the context length.
func (s *Server) checkLength(prompt []int, maxNew int) *apiError {
	p, total := len(prompt), len(prompt)+maxNew
	switch {
	case p == 0:
		return badRequest("the prompt is empty")
	case total > s.cfg.ContextLength:
		return badRequest("This model's maximum context length is %d tokens. However, you requested %d tokens "+
			"(%d in the messages, %d in the completion). Please reduce the length of the messages or completion",
			s.cfg.ContextLength, total, p, maxNew)
	case total > s.cfg.KVTokens:
		return badRequest("the request needs %d KV-cache tokens (%d prompt + %d new) but the simulator's pool "+
			"(--max-total-tokens) holds %d", total, p, maxNew, s.cfg.KVTokens)
	}
	return nil
}

// aborted records why the engine ended j early.
func (j *job) aborted(ctx context.Context, p *progress) {
	if ctx.Err() != nil {
		j.rec.err = "the client closed the connection"
	} else {
		j.rec.err = "the simulator shut down"
	}
	j.finish(p, -1)
}

func (j *job) serveStream(w http.ResponseWriter, ctx context.Context) {
	s := j.s
	w.Header().Set("Content-Type", j.f.contentType())
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()          //nolint:errcheck // a dead connection shows up at the first chunk.
	selfDriven := false // lockstep: the request is back with the engine
	for {
		from, n, p := j.req.take()
		if n == 0 && !p.done {
			<-j.req.notify
			continue
		}
		if p.reason == finAbort {
			j.aborted(ctx, &p)
			return
		}
		b := j.f.chunk(j, j.buf[:0], from, n, &p)
		j.buf = b
		if j.fault.Kind.midStream() && !j.faultDone && (j.sent >= j.faultAfter() || p.done) {
			j.faultDone = true
			if j.streamFault(w, rc, ctx, from, &p) {
				return
			}
		}
		if p.done && j.fault.Kind == FaultNoDone {
			b = j.trimDone(b)
		}
		if p.done {
			j.lastWrite()
		}
		var err error
		t0 := time.Now()
		if len(b) > 0 {
			if _, err = w.Write(b); err == nil {
				err = rc.Flush()
			}
		}
		t1 := time.Now()
		now := s.since(t1)
		if n > 0 && err == nil {
			j.observeChunk(now, n, int64(t1.Sub(t0)))
			j.sent++
		}
		if err != nil {
			j.clientGone(t1)
			if !p.done {
				s.eng.abort(j.req)
				p.reason = finAbort
			}
			j.rec.err = "writing the response: " + err.Error()
			j.finish(&p, -1)
			return
		}
		if p.done {
			j.finish(&p, now)
			return
		}
		if s.eng.lockstep && !selfDriven {
			selfDriven = s.eng.selfStep(j.req)
		}
	}
}

func (j *job) serveWhole(w http.ResponseWriter, ctx context.Context) {
	var p progress
	handed := false
	for {
		_, _, p = j.req.take()
		if p.done {
			break
		}
		if j.s.eng.lockstep && p.avail > 0 && !handed {
			for !handed {
				handed = j.s.eng.selfStep(j.req)
			}
			continue
		}
		<-j.req.notify
	}
	if p.reason == finAbort {
		if ctx.Err() == nil {
			j.f.fail(w, &apiError{status: http.StatusServiceUnavailable, typ: "InternalServerError", message: "the simulator is shutting down"})
		}
		j.aborted(ctx, &p)
		return
	}
	b := j.f.whole(j, j.buf[:0], &p)
	b, size := j.wholeFault(b, &p)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(size))
	w.WriteHeader(http.StatusOK)
	j.lastWrite()
	if j.fault.Kind.midStream() && j.wholeFaultActs(w, ctx, b, &p) {
		return
	}
	t0 := time.Now()
	_, err := w.Write(b)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	if err != nil {
		j.clientGone(time.Now())
		j.rec.err = "writing the response: " + err.Error()
		j.finish(&p, -1)
		return
	}
	t1 := time.Now()
	now := j.s.since(t1)
	if p.avail > 0 {
		j.observeChunk(now, p.avail, int64(t1.Sub(t0)))
	}
	j.finish(&p, now)
}

// observeChunk records a content chunk whose write returned at now after
// write nanoseconds.
func (j *job) observeChunk(now int64, tokens int, write int64) {
	if j.rec.lastChunk >= 0 {
		j.s.met.itl.observe(time.Duration(now - j.rec.lastChunk))
	} else {
		j.s.met.ttft.observe(time.Duration(now - j.rec.arrival))
	}
	j.rec.chunk(now, tokens, write)
}

// finish completes the truth record from the engine's progress; end is
// when the last byte was written (-1: never).
func (j *job) finish(p *progress, end int64) {
	s, rec := j.s, j.rec
	rec.end = end
	if !p.prefillStart.IsZero() {
		rec.prefillStart, rec.prefillEnd = s.since(p.prefillStart), s.since(p.prefillEnd)
	}
	rec.promptTokens, rec.cachedTokens = len(j.prompt), p.cached
	rec.completionTokens, rec.verify = p.avail, p.verify
	rec.reasoningTokens = min(p.avail, rec.reasoning)
	rec.finish = p.reason.String()
	if j.req != nil {
		rec.divergedAt = j.req.text.at
	}
	if end >= 0 {
		s.met.e2e.observe(time.Duration(end - rec.arrival))
	}
	s.met.finished[p.reason].Add(1)
}

// specAcceptLength is SGLang's per-request figure: completion tokens per
// verify step (0 when no decode step ran).
func specAcceptLength(p *progress) float64 {
	if p.verify == 0 {
		return 0
	}
	return float64(p.avail) / float64(p.verify)
}

// plainID reports whether a client's request id can stand as ours: short,
// printable ASCII without quotes or backslashes (it goes into JSON and
// headers as it is).
func plainID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
