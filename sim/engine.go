package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// engineStats are the engine's counters and gauges, read by /metrics and
// /server_info from other goroutines.
type engineStats struct {
	running, waiting, usedKV, cacheTokens atomic.Int64
	promptTokens, cachedTokens, genTokens atomic.Uint64
	specTokens, specSteps                 atomic.Uint64
}

// engine is the simulated inference engine: one goroutine running a step
// loop over a FIFO queue and a running batch, with continuous batching.
// A step is a prefill step when the head of the queue fits (batch size and
// KV pool), else a decode step over the running batch; steps end on an
// absolute schedule (each end = previous end + step time).
type engine struct {
	cfg      Config
	spec     specDist
	lockstep bool
	rng      *rand.Rand
	vocab    *vocab // output token ids, to cache finished sequences; nil: prompts only
	stats    engineStats
	dlog     *decodeLog
	// pub counts the phases in which the engine hands requests their
	// progress (odd while one runs): a batch's writer takes its prompts'
	// progress between two, so that the tokens of one step go out together.
	pub atomic.Uint64

	// now and wait are the clock; tests swap wait for a plain timer, which
	// the fake clock of testing/synctest can advance.
	now  func() time.Time
	wait func(ctx context.Context, deadline time.Time) bool

	mu       sync.Mutex
	incoming []*request
	finished []*request // lockstep: self-driven requests that reached their limit
	aborts   []*request
	cmds     []func()
	closed   bool
	wake     chan struct{}
	stopped  chan struct{}

	// Engine goroutine only.
	waiting fifo
	running []*request
	usedKV  int
	cache   *prefixCache
	batch   []*request
	spare   []*request
	ids     []int
	keys    []uint64
}

func newEngine(cfg Config, v *vocab, wait func(context.Context, time.Time) bool) *engine {
	e := &engine{
		cfg:      cfg,
		spec:     newSpecDist(cfg.SpeculativeAcceptLength),
		lockstep: cfg.lockstep(),
		rng:      rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed)),
		vocab:    v,
		now:      time.Now,
		wait:     wait,
		wake:     make(chan struct{}, 1),
		stopped:  make(chan struct{}),
		cache:    newPrefixCache(cfg.PageSize),
	}
	e.dlog = newDecodeLog(&e.stats.genTokens, time.Now())
	return e
}

// submit queues r. After the engine has stopped, r ends at once as aborted.
func (e *engine) submit(r *request) { e.submitAll([]*request{r}) }

// submitAll queues rs together, so that the engine sees them in one intake
// (a batch request's prompts are scheduled as one arrival).
func (e *engine) submitAll(rs []*request) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		for _, r := range rs {
			r.mu.Lock()
			r.out.done, r.out.reason = true, finAbort
			r.mu.Unlock()
			r.signal()
		}
		return
	}
	now := e.now()
	for _, r := range rs {
		r.submitted = now
		e.incoming = append(e.incoming, r)
	}
	e.mu.Unlock()
	e.kick()
}

// abort drops r (its client went away); the engine frees its place.
func (e *engine) abort(r *request) {
	if r.aborted.Swap(true) {
		return
	}
	e.mu.Lock()
	e.aborts = append(e.aborts, r)
	e.mu.Unlock()
	e.kick()
}

// command runs f on the engine goroutine between two steps; false if the
// engine has stopped.
func (e *engine) command(f func()) bool {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return false
	}
	e.cmds = append(e.cmds, f)
	e.mu.Unlock()
	e.kick()
	return true
}

// selfStep runs one decode step of r on its writer's goroutine, in
// lockstep (zero decode time: nothing to batch or wait for), so a stream
// costs no goroutine switch per token. The engine still queues, admits
// and prefills r and ends it: when r reaches its limit, selfStep hands it
// back and reports true; the writer then waits for the end as usual. It
// also reports true when the engine has ended r meanwhile (aborted).
func (e *engine) selfStep(r *request) bool {
	n := 1
	if e.spec.on() {
		if r.rng == nil {
			r.rng = rand.New(rand.NewPCG(r.seed, 0x5eed))
		}
		n = e.spec.draw(r.rng)
		e.stats.specTokens.Add(uint64(n))
		e.stats.specSteps.Add(1)
	}
	n = min(n, r.limit-r.generated)
	r.generated += n
	r.verify++
	e.stats.genTokens.Add(uint64(n))
	if e.dlog.step() {
		e.dlog.log(time.Now())
	}
	if r.generated < r.limit {
		r.mu.Lock()
		ended := r.out.done
		if !ended {
			r.out.avail, r.out.verify = r.generated, r.verify
		}
		r.mu.Unlock()
		return ended
	}
	e.mu.Lock()
	e.finished = append(e.finished, r)
	e.mu.Unlock()
	e.kick()
	return true
}

// kick wakes the engine if it is idle.
func (e *engine) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// stepKind is what the engine does next.
type stepKind uint8

const (
	stepIdle stepKind = iota
	stepPrefill
	stepDecode
)

func (e *engine) run(ctx context.Context) {
	defer e.shutdown()
	var clock time.Time // the end of the last step; zero after idling
	for {
		e.pub.Add(1)
		e.intake()
		e.pub.Add(1)
		kind, batch, tokens := e.plan()
		if kind == stepIdle {
			e.publish(0)
			clock = time.Time{}
			select {
			case <-ctx.Done():
				return
			case <-e.wake:
			}
			continue
		}
		if kind == stepPrefill {
			e.publish(len(batch))
		}
		d := e.stepTime(kind, len(batch), tokens)
		start := clock
		if start.IsZero() || d == 0 && e.lockstep {
			start = e.now()
		}
		// Steps run back to back on the model's clock, but a request that
		// came after the last step's end (the engine ran late) cannot have
		// been in a step that began before it.
		if kind == stepPrefill {
			for _, r := range batch {
				if r.submitted.After(start) {
					start = r.submitted
				}
			}
		}
		end := start.Add(d)
		if d > 0 && !e.wait(ctx, end) {
			return
		}
		clock = end
		e.pub.Add(1)
		if kind == stepPrefill {
			e.prefill(batch, start, end)
		} else {
			e.decode(batch, end)
		}
		e.pub.Add(1)
		e.publish(0)
	}
}

// stepTime is the model: prefill = overhead + tokens / rate; decode = base
// + per-request cost × batch size.
func (e *engine) stepTime(kind stepKind, n, tokens int) time.Duration {
	if kind == stepPrefill {
		d := e.cfg.PrefillOverhead
		if !math.IsInf(e.cfg.PrefillTokensPerSec, 1) {
			d += time.Duration(float64(tokens) / e.cfg.PrefillTokensPerSec * float64(time.Second))
		}
		return d
	}
	return e.cfg.DecodeBase + time.Duration(n)*e.cfg.DecodePerRequest
}

// intake moves new requests into the queue, drops aborted ones and runs
// commands.
func (e *engine) intake() {
	e.mu.Lock()
	in, aborts, cmds, fin := e.incoming, e.aborts, e.cmds, e.finished
	e.incoming, e.aborts, e.cmds, e.finished = e.spare[:0], nil, nil, nil
	e.mu.Unlock()
	for _, r := range in {
		r.state = stWaiting
		e.waiting.push(r)
	}
	clear(in)
	e.spare = in
	for _, r := range aborts {
		switch r.state {
		case stWaiting:
			e.waiting.remove(r)
			e.end(r, finAbort)
		case stRunning:
			e.end(r, finAbort)
		}
	}
	for _, r := range fin {
		if r.state == stRunning { // not aborted meanwhile
			e.finish(r)
		}
	}
	if len(aborts)+len(fin) > 0 {
		e.running = compact(e.running)
	}
	for _, f := range cmds {
		f()
	}
}

// plan picks the next step. Prefill: requests from the head of the queue,
// in order, while each fits the batch-size cap, the KV pool and the prefill
// token budget (the first always fits the budget). Otherwise decode: every
// running request (none in lockstep, where writers run decode steps).
func (e *engine) plan() (stepKind, []*request, int) {
	b := e.batch[:0]
	tokens := 0
	if e.waiting.len() > 0 && len(e.running) < e.cfg.MaxRunningRequests {
		kv := e.usedKV
		for i := range e.waiting.len() {
			r := e.waiting.at(i)
			if len(e.running)+len(b) >= e.cfg.MaxRunningRequests || kv+r.need > e.cfg.KVTokens {
				break
			}
			cached := e.cachedTokens(r)
			uncached := len(r.promptIDs) - cached
			if len(b) > 0 && tokens+uncached > e.cfg.MaxPrefillTokens {
				break
			}
			r.cached = cached
			b = append(b, r)
			tokens += uncached
			kv += r.need
		}
		if len(b) > 0 {
			e.batch = b
			return stepPrefill, b, tokens
		}
	}
	if !e.lockstep {
		b = append(b, e.running...)
	}
	e.batch = b
	if len(b) > 0 {
		return stepDecode, b, 0
	}
	return stepIdle, nil, 0
}

// cachedTokens is the cached prefix of r's prompt in tokens, leaving at
// least one token to compute (the last prompt token's logits are needed).
func (e *engine) cachedTokens(r *request) int {
	n := e.cache.match(r.keys) * e.cfg.PageSize
	return min(n, (len(r.promptIDs)-1)/e.cfg.PageSize*e.cfg.PageSize)
}

func (e *engine) prefill(batch []*request, start, end time.Time) {
	e.waiting.drop(len(batch))
	load := len(e.running) + len(batch) // requests running at once from this step
	for _, r := range batch {
		e.usedKV += r.need
		r.state = stRunning
		e.cache.insert(r.keys)
		e.stats.promptTokens.Add(uint64(len(r.promptIDs)))
		e.stats.cachedTokens.Add(uint64(r.cached))
		r.mu.Lock()
		r.out.cached = r.cached
		r.out.prefillStart, r.out.prefillEnd = start, end
		r.mu.Unlock()
		if r.embed || r.maxNew == 0 {
			reason := finLength
			if r.embed {
				reason = finStop
			}
			e.end(r, reason)
			continue
		}
		r.limit = r.maxNew
		if !r.ignoreEOS {
			rng := e.rng
			if r.greedy { // the same prompt stops at the same token
				rng = rand.New(rand.NewPCG(r.seed, 0xe05))
			}
			if k := eosAfter(rng, e.cfg.EOSProbability); k < r.maxNew {
				r.limit, r.stop = k, true
			}
		}
		if r.divergeOver >= 0 && load > r.divergeOver {
			r.text.at = int(mix64(r.seed^divergeSalt) % uint64(r.limit))
			r.text.alt = mix64(r.seed + divergeSalt)
		}
		e.running = append(e.running, r)
		e.emit(r, 1)
	}
	e.running = compact(e.running)
	e.cache.shrink(e.cfg.KVTokens - e.usedKV)
}

// decode runs a decode step that ended at end.
func (e *engine) decode(batch []*request, end time.Time) {
	for _, r := range batch {
		n := 1
		if e.spec.on() {
			n = e.spec.draw(e.rng)
			e.stats.specTokens.Add(uint64(n))
			e.stats.specSteps.Add(1)
		}
		r.verify++
		e.emit(r, min(n, r.limit-r.generated))
	}
	if e.dlog.step() {
		e.dlog.log(end)
	}
	e.running = compact(e.running)
	e.cache.shrink(e.cfg.KVTokens - e.usedKV)
}

// emit publishes n new tokens of r, and its end when it reaches its limit.
func (e *engine) emit(r *request, n int) {
	r.generated += n
	e.stats.genTokens.Add(uint64(n))
	if r.generated < r.limit {
		r.mu.Lock()
		r.out.avail = r.generated
		r.mu.Unlock()
		r.signal()
		return
	}
	e.finish(r)
}

// finish ends r at its limit: caches the whole sequence and ends it,
// publishing its last tokens together with the end, so its writer sends
// them in one write with whatever closes the stream.
func (e *engine) finish(r *request) {
	reason := finLength
	if r.stop {
		reason = finStop
	}
	e.cacheOutput(r)
	e.release(r)
	r.mu.Lock()
	r.out.avail, r.out.verify = r.generated, r.verify
	r.out.done, r.out.reason = true, reason
	r.mu.Unlock()
	r.signal()
}

// end ends r early or without tokens: frees its place and tells its
// writer. It does not read r.generated, which a self-driven writer may be
// changing when r is aborted.
func (e *engine) end(r *request, reason finish) {
	e.release(r)
	r.mu.Lock()
	r.out.done, r.out.reason = true, reason
	r.mu.Unlock()
	r.signal()
}

// release frees r's KV reservation. A running request leaves the running
// gauge at once, before its writer is told: a client that has read the
// end of its reply never scrapes it as running.
func (e *engine) release(r *request) {
	if r.state == stRunning {
		e.usedKV -= r.need
		e.stats.running.Add(-1)
	}
	r.state = stDone
}

// cacheOutput adds the pages of prompt + output to the prefix cache, as a
// radix cache keeps a finished sequence, so a next turn that repeats this
// reply hits.
func (e *engine) cacheOutput(r *request) {
	if e.vocab == nil {
		return
	}
	e.ids = e.vocab.appendIDs(e.ids[:0], r.text, 0, r.generated)
	e.keys = append(e.keys[:0], r.keys...)
	e.keys, _ = pageKeys(e.keys, r.chain, len(r.promptIDs), e.ids, e.cfg.PageSize)
	e.cache.insert(e.keys)
}

// compact removes finished requests from s, keeping order.
func compact(s []*request) []*request {
	out := s[:0]
	for _, r := range s {
		if r.state != stDone {
			out = append(out, r)
		}
	}
	clear(s[len(out):])
	return out
}

// publish updates the gauges; prefilling requests (the first n queued)
// count as running.
func (e *engine) publish(prefilling int) {
	e.stats.running.Store(int64(len(e.running) + prefilling))
	e.stats.waiting.Store(int64(e.waiting.len() - prefilling))
	e.stats.usedKV.Store(int64(e.usedKV))
	e.stats.cacheTokens.Store(int64(e.cache.tokens))
}

// shutdown ends every request still queued or running, and any submitted
// later, as aborted.
func (e *engine) shutdown() {
	e.mu.Lock()
	e.closed = true
	in := e.incoming
	e.incoming = nil
	e.mu.Unlock()
	for _, r := range in {
		e.end(r, finAbort)
	}
	for e.waiting.len() > 0 {
		r := e.waiting.at(0)
		e.waiting.drop(1)
		e.end(r, finAbort)
	}
	for _, r := range e.running {
		e.end(r, finAbort)
	}
	e.running = nil
	e.publish(0)
	close(e.stopped)
}

// idle reports whether nothing is queued or running (engine goroutine).
func (e *engine) idle() bool { return e.waiting.len() == 0 && len(e.running) == 0 }

// flush empties the prefix cache. With ifIdle it does so only when no
// request is queued or running, as SGLang's /flush_cache does.
func (e *engine) flush(ifIdle bool) bool {
	res := make(chan bool, 1)
	if !e.command(func() {
		if ifIdle && !e.idle() {
			res <- false
			return
		}
		e.cache.flush()
		res <- true
	}) {
		return false
	}
	select {
	case ok := <-res:
		return ok
	case <-e.stopped:
		return false
	}
}
