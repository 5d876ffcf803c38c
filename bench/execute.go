package bench

import (
	"context"
	"fmt"
	"time"

	"benchserve/backend"
	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/schedule"
	"benchserve/serverctl"
)

// Execution is what one execution of a Plan did.
type Execution struct {
	// Records are the requests in dispatch order: all of them, or after
	// an interrupt those that were sent and not cut.
	Records []record.Record
	// Start is when the first request was scheduled, Duration the seconds
	// from then to the end of the last response.
	Start    time.Time
	Duration float64
	// Stopped: an interrupt ended the run; NotSent and Cancelled count
	// what it left out of Records.
	Stopped            bool
	NotSent, Cancelled int
	// NotSentAtEnd counts the planned requests that the end of
	// --duration left unsent.
	NotSentAtEnd int
	// Fold holds the figures of a soak, which keeps no Records;
	// MaxInflight is its peak of requests in flight.
	Fold        *metrics.Fold
	MaxInflight int
	// RoundsNotSent counts the conversation rounds not sent because a
	// round before them failed.
	RoundsNotSent int
	// Client is what the client measured of itself.
	Client metrics.ClientStats
	// Consistency is --consistency-probes' outcome (nil without it).
	Consistency *metrics.Consistency
	// ServerInfo is the body of GET /server_info after the run (nil when
	// it did not answer with JSON).
	ServerInfo []byte
	// Server is the server's /metrics over the run (nil when not read,
	// ServerNote says why); Provenance what defines the server and client.
	Server     *metrics.ServerView
	ServerNote string
	Provenance *pyjson.Object
}

// Execute runs the plan as the reference's run_benchmark does from its
// warmup on: warmup, cache flush, the profiler, then every request at its
// planned time, then /server_info. ctx bounds everything; the plan's
// interrupt stops the sending (requests in flight get the grace period),
// and then the Execution covers what completed.
func Execute(ctx context.Context, p *Plan) (*Execution, error) {
	r := newRunner(p)
	// Until the measured run starts, an interrupt ends the execution at
	// once; from then on it stops the sending, and what was sent is kept.
	sending, stopSending := context.WithCancel(ctx)
	defer stopSending()
	stopOnInterrupt(sending, p.Env.Interrupt, stopSending)
	cfg, out := p.Config, p.Env.Stdout

	n := cfg.WarmupRequests
	if k := len(p.Clients); n > 0 && n < k {
		n = k // one each, so that no server's first requests are cold
	}
	if p.traffic.warmup > 0 {
		var err error
		if n, err = r.warmupFor(sending); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(out, "Starting warmup with %d sequences...\n", n)
		if err := r.warmup(sending, n); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(out, "Warmup completed with %d sequences. Starting main benchmark run...\n", n)
	spec := p.Client.Spec()
	flush := cfg.FlushCache || (spec.SGLang && truthy(p.Env.Getenv("SGLANG_IS_IN_CI")))
	if flush {
		if err := p.flush(sending, flushStyle(spec)); err != nil {
			return nil, failure("%v", err)
		}
	}
	// The reference pauses 1 s here so the server settles after the
	// warmup and the flush; with neither there is nothing to settle.
	if n > 0 || flush {
		select {
		case <-sending.Done():
		case <-time.After(time.Second):
		}
	}
	if sending.Err() != nil {
		return nil, sending.Err()
	}
	if r.probes = p.newProbes(cfg.ConsistencyProbes); r.probes != nil {
		fmt.Fprintf(out, "Sending %d consistency probes at temperature 0 on the idle server...\n", len(r.probes.rows))
		r.idleProbes(sending)
	}
	prof := serverctl.NewProfiler(p.Server, profileOptions(cfg, p.Env.Getenv), out)
	prof.Start(sending)
	defer prof.Cleanup()

	var bar *progress
	if p.Env.Progress {
		bar = newProgress(p.Env.Stderr, p.expected(), p.traffic.duration)
	}
	if cfg.RecordFile != nil {
		rf, err := record.Create(*cfg.RecordFile)
		if err != nil {
			return nil, failure("--record-file: %v", err)
		}
		r.recFile = rf
		if len(p.Clients) > 1 {
			rf.IndexURLs()
		}
		defer func() {
			if err := rf.Close(); err != nil {
				fmt.Fprintf(p.Env.Stderr, "benchserve: error: --record-file: %v\n", err)
			}
		}()
	}
	inflight, cancelInflight := context.WithCancel(ctx)
	defer cancelInflight()
	r.graceOnInterrupt(inflight, cancelInflight)
	r.preconnect(sending)
	// The read delays so far are the warmup's.
	for _, c := range p.clients() {
		c.ResetTiming()
	}
	flushed := 0
	if flush {
		flushed = 1
	}
	scr, why := r.startServerMetrics(sending)
	prov := r.provenance(sending, flushed, scr)
	r.shardHeader()
	start, err := r.commonStart(sending)
	if err != nil {
		return nil, err
	}
	r.recFile.StartRun(start)
	check := startSelfCheck(p.expected(), cfg.Sim, r.fold != nil)
	ph := phase{slots: p.Slots, cyclic: p.cyclic, bar: bar, check: check, capRamp: p.capSteps != nil}
	if d := p.traffic.duration; d > 0 {
		ph.until = start.Add(d)
	}
	r.measuring = true
	r.startLoaded(inflight, p.expected(), start)
	r.begin()
	dispatch := r.dispatch
	if p.ab != nil {
		dispatch = r.dispatchAB
	}
	recs, end, unsent := dispatch(sending, inflight, ph, start)
	consistency := r.probes.result(p.Tok)
	e := &Execution{Start: start, Duration: end.Sub(start).Seconds(), Stopped: interrupted(p.Env.Interrupt)}
	if r.fold != nil {
		r.shardFooter(e, int(r.soak.records.Load()))
	} else {
		r.shardFooter(e, len(recs))
	}
	e.Client = check.stop(p.readDelays())
	e.Server, e.ServerNote, e.Provenance = r.serverView(ctx, scr, start), why, prov
	recs, e.RoundsNotSent = skippedRounds(recs)
	if f := r.fold; f != nil {
		t := &r.soak
		e.Fold, e.MaxInflight, e.RoundsNotSent = f, int(t.peak.Load()), int(t.rounds.Load())
		notSent, cancelled := int(t.notSent.Load()), int(t.cancelled.Load())
		switch {
		case e.Stopped:
			e.NotSent, e.Cancelled = notSent+unsent, cancelled
		case p.traffic.duration > 0:
			e.NotSentAtEnd = unsent + notSent
		}
	}
	switch {
	case e.Stopped:
		recs, e.NotSent, e.Cancelled = completedOnly(recs)
		e.NotSent += unsent
	case p.traffic.duration > 0:
		// The requests the end of the duration kept from leaving are
		// not requests of the run.
		var notSent int
		recs, notSent, _ = completedOnly(recs)
		e.NotSentAtEnd = unsent + notSent
	}
	e.Records = recs
	e.Consistency = consistency
	prof.Stop(ctx)
	bar.close()
	e.ServerInfo = p.Server.Info(ctx)
	return e, nil
}

// graceOnInterrupt closes the gate at the interrupt, so that no request
// is written after it, and ends the requests in flight (cancel) when the
// grace period has passed or the user interrupts again.
func (r *runner) graceOnInterrupt(inflight context.Context, cancel func()) {
	env := r.Env
	go func() {
		select {
		case <-env.Interrupt:
			go r.gate.Close()
			fmt.Fprintf(env.Stderr, "\nInterrupted: no more requests will be sent; those in flight have %v to finish. Interrupt again to cancel them.\n", env.Grace)
			t := time.NewTimer(env.Grace)
			defer t.Stop()
			select {
			case <-t.C:
				cancel()
			case <-env.Cut:
				cancel()
			case <-inflight.Done():
			}
		case <-inflight.Done():
		}
	}()
}

// preconnect opens connections before the clock starts, as many as the run
// will have in flight at first, so that no measured TTFT pays for a TCP
// connect (the reference connects inside every request; see
// --no-keepalive). A server or gateway that caps connections refuses some:
// the run goes on with those it has, and the rest connect as requests
// need them.
func (r *runner) preconnect(ctx context.Context) {
	want := r.preconnects()
	if want <= 0 {
		return
	}
	cs := r.clients()
	// Each server gets its share: the plan spreads requests evenly. The
	// sides of an A/B run have a concurrency limit each.
	if r.ab == nil {
		want = (want + len(cs) - 1) / len(cs)
	}
	for _, c := range cs {
		if got, err := c.Preconnect(ctx, want); err != nil && ctx.Err() == nil {
			fmt.Fprintf(r.Env.Stderr, "benchserve: warning: opened %d of %d connections to %s before the run (%v); the others connect when needed, and their first requests' TTFT includes the connect\n",
				got, want, serverctl.Redact(c.URL()), err)
		}
	}
}

// preconnects is how many connections to open before the run: the
// concurrency limit (its start, on a concurrency ramp), or every request
// of a burst, else a few; never more than maxPreconnect.
func (r *runner) preconnects() int {
	total := r.expected()
	if total == 0 { // a closed loop by time, under its cap
		total = r.maxInflight()
	}
	n := min(total, 64)
	switch {
	case r.sem != nil:
		n = min(total, cap(r.sem))
	case r.Closed():
		n = total
	}
	return min(n, maxPreconnect)
}

// maxPreconnect bounds the connections opened before a run (each is a
// file descriptor; Go raises the soft limit to the hard one, often 1 M,
// but some systems keep 4096 or less: then the connects over it fail, a
// warning says so and those requests connect when sent).
const maxPreconnect = 16384

// completedOnly keeps the records of requests that were sent and not cut
// by the interrupt, and counts the others.
func completedOnly(recs []record.Record) (kept []record.Record, notSent, cancelled int) {
	for i := range recs {
		switch {
		case !recs[i].Sent:
			notSent++
		case recs[i].ErrorKind == record.KindInterrupted:
			cancelled++
		}
	}
	if notSent+cancelled == 0 {
		return recs, 0, 0 // no copy (see skippedRounds)
	}
	kept = make([]record.Record, 0, len(recs)-notSent-cancelled)
	for i := range recs {
		if recs[i].Sent && recs[i].ErrorKind != record.KindInterrupted {
			kept = append(kept, recs[i])
		}
	}
	return kept, notSent, cancelled
}

// stopOnInterrupt calls cancel when interrupt closes (or ctx ends first).
func stopOnInterrupt(ctx context.Context, interrupt <-chan struct{}, cancel func()) {
	if interrupt == nil {
		return
	}
	go func() {
		select {
		case <-interrupt:
			cancel()
		case <-ctx.Done():
		}
	}()
}

func interrupted(interrupt <-chan struct{}) bool {
	if interrupt == nil {
		return false
	}
	select {
	case <-interrupt:
		return true
	default:
		return false
	}
}

// runner is one execution of a plan: the plan, and the execution's own
// concurrency limit, interrupt gate and record file.
type runner struct {
	*Plan
	sem chan struct{}
	// gate closes at the interrupt: no request is written after it.
	gate *backend.Gate
	// recFile is --record-file, set once the warmup is over.
	recFile *record.Writer
	// wait is the pacer (nil: schedule.WaitUntil). Tests in a synctest
	// bubble, where time moves only once every goroutine is blocked and
	// the pacer's last spin would never end, wait on a plain timer.
	wait func(ctx context.Context, deadline time.Time) bool
	// sessions caps the conversations under way (--max-sessions; nil:
	// a conversation holds a sem slot for its whole life instead).
	sessions chan struct{}
	// late is how long after the common --start-at this shard was ready.
	late time.Duration
	// measuring: the measured run is under way (no warmup request is
	// cancelled on purpose).
	measuring bool
	// fleet reads the /metrics of the other --base-url servers, beside
	// the first one's scraper (nil with one URL).
	fleet []*serverctl.Scraper
	// fold takes each record as its request ends, in a soak (nil: the
	// records are kept); soak counts what it does not take.
	fold *metrics.Fold
	soak soakTally
	// probes is --consistency-probes (nil: none).
	probes *probeRun
}

func newRunner(p *Plan) *runner {
	r := &runner{Plan: p, gate: &backend.Gate{}, fold: newFold(p)}
	if c := p.Config.MaxConcurrency; c != nil && *c > 0 {
		r.sem = make(chan struct{}, *c)
	}
	if n := p.Config.MaxSessions; n != nil && *n > 0 {
		r.sessions = make(chan struct{}, *n)
	}
	return r
}

// waitUntil releases a request at deadline, or reports false once ctx
// has ended.
func (r *runner) waitUntil(ctx context.Context, deadline time.Time) bool {
	if r.wait != nil {
		return r.wait(ctx, deadline)
	}
	return schedule.WaitUntil(ctx, deadline)
}
