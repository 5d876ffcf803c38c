package sim

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"time"
)

// A batch is a /generate or /v1/completions request whose prompt field is
// a list of prompts, as SGLang's bench_one_batch_server sends it. Each
// prompt runs as its own engine request (a sub-job with its own id, truth
// record and seed), all submitted at once with the request's sampling
// parameters (or each its own), and one writer serves them in one
// response. The sub-requests share one notify channel, so the writer wakes
// when any of them progressed, takes what is new from each and writes it
// all at once: prompts whose tokens came in the same engine step go out in
// one write, and whatever closes the stream goes with the last prompt's
// final chunk.

// batchFormat is a format that serves batches.
type batchFormat interface {
	// promptID is the id the wire shows for prompt i of batch id.
	promptID(id string, i int) string
	// batchChunk appends prompt j's events for tokens [from, from+n) and,
	// when p.done, its finish.
	batchChunk(j *job, b []byte, from, n int, p *progress) []byte
	// batchEnd appends what closes the stream after every prompt's finish.
	batchEnd(bt *batch, b []byte) []byte
	// batchWhole appends the whole reply.
	batchWhole(bt *batch, b []byte) []byte
}

var (
	_ batchFormat = nativeFormat{}
	_ batchFormat = completionsFormat{}
)

type batch struct {
	head   *job // the request as parsed; its id names the batch
	f      batchFormat
	subs   []*job // one per prompt, in order
	st     []subState
	notify chan struct{}
	buf    []byte
}

// subState is the writer's view of one prompt.
type subState struct {
	p        progress // the latest take
	from, n  int      // tokens taken but not written yet (stream_interval)
	sent     int      // tokens written
	handed   bool     // lockstep: back with the engine
	ended    bool     // its finish is in the buffer (or written)
	recorded bool     // its truth record is complete
}

// promptParams are the sampling parameters of one prompt of a batch.
type promptParams struct {
	maxNew    int
	ignoreEOS bool
	interval  int // SGLang's stream_interval; <= 1: every step
}

// paramsOf is prompt i's parameters: its own, else the request's.
func (j *job) paramsOf(i int) promptParams {
	switch {
	case len(j.params) > i:
		return j.params[i]
	case len(j.params) > 0:
		return j.params[0]
	}
	return promptParams{maxNew: j.maxNew, ignoreEOS: j.ignoreEOS}
}

// generateBatch serves a request whose parse found a batch of prompts.
func (s *Server) generateBatch(w http.ResponseWriter, r *http.Request, j *job) {
	for i, p := range j.prompts {
		if e := s.checkLength(p, j.paramsOf(i).maxNew); e != nil {
			j.f.fail(w, e)
			return
		}
	}
	forced, hasForced, e := headerFault(r, j)
	if e != nil {
		j.f.fail(w, e)
		return
	}
	n := s.newID(w, r, j)
	bt := newBatch(s, r, j, n)
	s.pickFault(j, forced, hasForced, n)
	j.rec = newTruthRec(j.id, r.URL.Path, j.stream, s.since(j.arrival))
	j.rec.body = j.bodyHash
	if j.early(w, r.Context()) {
		for _, sj := range bt.subs {
			sj.rec.fault, sj.rec.err, sj.rec.end = j.fault, j.rec.err, j.rec.end
			sj.rec.promptTokens = len(sj.prompt)
		}
	} else {
		enq := s.since(time.Now())
		reqs := make([]*request, len(bt.subs))
		for i, sj := range bt.subs {
			sj.rec.enqueued, sj.rec.fault = enq, j.fault
			reqs[i] = sj.req
		}
		stop := context.AfterFunc(r.Context(), func() {
			for _, q := range reqs {
				s.eng.abort(q)
			}
		})
		s.eng.submitAll(reqs)
		if j.stream {
			bt.serveStream(w, r.Context())
		} else {
			bt.serveWhole(w, r.Context())
		}
		stop()
	}
	for _, sj := range bt.subs {
		s.truth.add(sj.rec)
	}
	if j.closing {
		s.closing.Add(-1)
	}
}

// newBatch makes a sub-job per prompt of j, request n. Truth records are
// named <batch id>-<i>; each prompt's words come from a seed of its own.
func newBatch(s *Server, r *http.Request, j *job, n uint64) *batch {
	bt := &batch{head: j, f: j.f.(batchFormat), notify: make(chan struct{}, 1), st: make([]subState, len(j.prompts))}
	seed := mix64(uint64(s.cfg.Seed) ^ n<<1)
	for i, p := range j.prompts {
		pp := j.paramsOf(i)
		sj := &job{
			s: s, f: j.f, id: bt.f.promptID(j.id, i), created: j.created, arrival: j.arrival,
			model: j.model, prompt: p, maxNew: pp.maxNew, ignoreEOS: pp.ignoreEOS, stream: j.stream,
			usage: j.usage, cacheDetails: j.cacheDetails, index: i, interval: pp.interval,
		}
		sj.req = newRequest(p, pp.maxNew, pp.ignoreEOS, false, s.cfg.PageSize, mix64(seed^uint64(i+1)*0x9e3779b97f4a7c15))
		sj.req.notify = bt.notify
		sj.rec = newTruthRec(j.id+"-"+strconv.Itoa(i), r.URL.Path, j.stream, s.since(j.arrival))
		sj.rec.batch, sj.rec.index, sj.rec.body = j.id, i, j.bodyHash
		bt.subs = append(bt.subs, sj)
	}
	return bt
}

func (bt *batch) serveStream(w http.ResponseWriter, ctx context.Context) {
	head, s := bt.head, bt.head.s
	w.Header().Set("Content-Type", head.f.contentType())
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush() //nolint:errcheck // a dead connection shows up at the first chunk.
	open := len(bt.subs)
	var out []int // the prompts in this write
	for {
		moved := bt.takeAll()
		if s.eng.lockstep && bt.handing() {
			<-bt.notify
			continue
		}
		b := bt.buf[:0]
		out = out[:0]
		for i, sj := range bt.subs {
			st := &bt.st[i]
			switch {
			case st.ended:
				continue
			case st.p.reason == finAbort:
				bt.abort(ctx)
				return
			case st.n == 0 && !st.p.done, !st.p.done && !st.due(sj.interval):
				continue
			}
			b = bt.f.batchChunk(sj, b, st.from, st.n, &st.p)
			out = append(out, i)
			if st.p.done {
				st.ended = true
				open--
			}
		}
		if open == 0 {
			b = bt.f.batchEnd(bt, b)
			head.lastWrite()
		}
		bt.buf = b
		if len(out) > 0 {
			t0 := time.Now()
			_, err := w.Write(b)
			if err == nil {
				err = rc.Flush()
			}
			t1 := time.Now()
			if err != nil {
				bt.fail("writing the response: " + err.Error())
				return
			}
			now := s.since(t1)
			for _, i := range out {
				st, sj := &bt.st[i], bt.subs[i]
				if st.n > 0 {
					sj.observeChunk(now, st.n, int64(t1.Sub(t0)))
					st.sent += st.n
					st.n = 0
				}
				if st.ended {
					sj.finish(&st.p, now)
					st.recorded = true
				}
			}
		}
		if open == 0 {
			return
		}
		if s.eng.lockstep && bt.selfStep() {
			continue
		}
		if !moved {
			<-bt.notify
		}
	}
}

// takeAll takes what is new from every open prompt into its state, between
// two of the engine's publishing phases, so that the tokens of one engine
// step are taken together; false if nothing was new.
func (bt *batch) takeAll() bool {
	pub, moved := &bt.head.s.eng.pub, false
	for {
		v := pub.Load()
		if v&1 == 1 {
			runtime.Gosched()
			continue
		}
		for i, sj := range bt.subs {
			st := &bt.st[i]
			if st.ended {
				continue
			}
			from, n, p := sj.req.take()
			if n == 0 && !p.done {
				continue
			}
			moved, st.p = true, p
			if st.n == 0 {
				st.from = from
			}
			st.n += n
		}
		if pub.Load() == v {
			return moved
		}
	}
}

// handing reports, in lockstep, a prompt handed back to the engine at its
// last token and not ended yet: its last tokens come with its end, and go
// out with the other prompts' tokens of that step.
func (bt *batch) handing() bool {
	for i := range bt.st {
		if st := &bt.st[i]; st.handed && !st.p.done {
			return true
		}
	}
	return false
}

// due reports whether a prompt's held tokens go out now: with SGLang's
// stream_interval k > 1, at the 1st, (k+1)th, (2k+1)th... token (or the
// first take past one of them).
func (st *subState) due(k int) bool {
	if k <= 1 {
		return true
	}
	marks := func(c int) int {
		if c == 0 {
			return 0
		}
		return (c-1)/k + 1
	}
	return marks(st.sent+st.n) > marks(st.sent)
}

// selfStep runs, in lockstep, one decode step of every prompt that has
// its first token and is not back with the engine; false if none was.
func (bt *batch) selfStep() bool {
	stepped := false
	for i, sj := range bt.subs {
		if st := &bt.st[i]; !st.ended && !st.handed && st.p.avail > 0 {
			st.handed = bt.head.s.eng.selfStep(sj.req)
			stepped = true
		}
	}
	return stepped
}

// abort ends the batch when the engine aborted a prompt (the client went
// away, or the simulator shuts down): the others are aborted too.
func (bt *batch) abort(ctx context.Context) {
	for i, sj := range bt.subs {
		st := &bt.st[i]
		if st.recorded {
			continue
		}
		bt.head.s.eng.abort(sj.req)
		if !st.p.done {
			st.p.reason = finAbort
		}
		sj.aborted(ctx, &st.p)
	}
}

// fail ends the batch after a failed write.
func (bt *batch) fail(msg string) {
	for i, sj := range bt.subs {
		st := &bt.st[i]
		if st.recorded {
			continue
		}
		if !st.p.done {
			bt.head.s.eng.abort(sj.req)
			st.p.reason = finAbort
		}
		sj.rec.err = msg
		sj.finish(&st.p, -1)
	}
}

func (bt *batch) serveWhole(w http.ResponseWriter, ctx context.Context) {
	s := bt.head.s
	for {
		all, stepped := true, false
		for i, sj := range bt.subs {
			st := &bt.st[i]
			if _, _, st.p = sj.req.take(); st.p.done {
				continue
			}
			all = false
			if s.eng.lockstep && st.p.avail > 0 && !st.handed {
				for !st.handed {
					st.handed = s.eng.selfStep(sj.req)
				}
				stepped = true
			}
		}
		if all {
			break
		}
		if !stepped {
			<-bt.notify
		}
	}
	for i := range bt.st {
		if bt.st[i].p.reason == finAbort {
			if ctx.Err() == nil {
				bt.head.f.fail(w, &apiError{status: http.StatusServiceUnavailable, typ: "InternalServerError", message: "the simulator is shutting down"})
			}
			bt.abort(ctx)
			return
		}
	}
	b := bt.f.batchWhole(bt, bt.buf[:0])
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	bt.head.lastWrite()
	t0 := time.Now()
	_, err := w.Write(b)
	if err == nil {
		err = http.NewResponseController(w).Flush()
	}
	if err != nil {
		bt.fail("writing the response: " + err.Error())
		return
	}
	t1 := time.Now()
	now := s.since(t1)
	for i, sj := range bt.subs {
		st := &bt.st[i]
		if st.p.avail > 0 {
			sj.observeChunk(now, st.p.avail, int64(t1.Sub(t0)))
		}
		sj.finish(&st.p, now)
		st.recorded = true
	}
}

// totals sums the prompts' tokens: prompt, and in p completion and cached.
func (bt *batch) totals() (prompt int, p progress) {
	for i, sj := range bt.subs {
		prompt += len(sj.prompt)
		p.avail += bt.st[i].p.avail
		p.cached += bt.st[i].p.cached
	}
	return prompt, p
}
