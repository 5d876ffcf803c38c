package bench

import (
	"context"
	"sync"
	"time"

	"benchserve/backend"
	"benchserve/dataset"
	"benchserve/record"
	"benchserve/schedule"
)

// phase is one sending pass over the plan: the measured run, or a warmup
// by time.
type phase struct {
	slots []schedule.Slot
	// cyclic: the slots, and the rows with them, are reused in order
	// until the deadline (a closed loop by time).
	cyclic bool
	// until, when not zero, is when sending stops (--duration): requests
	// in flight then finish, and planned ones after it are not sent.
	until time.Time
	bar   *progress
	check *selfCheck
	// capRamp: the concurrency cap rises on the plan's steps
	// (--concurrency-ramp-duration).
	capRamp bool
	// only, when set, picks the plan positions this pass sends, under
	// its own concurrency limit sem (an A/B run's side).
	only func(i int) bool
	sem  chan struct{}
}

// takes reports whether the phase sends plan position i.
func (ph *phase) takes(i int) bool { return ph.only == nil || ph.only(i) }

// row is the row slot i sends: rows are reused cyclically when a run by
// time plans more requests than there are rows.
func (r *runner) row(i int) *dataset.Row { return &r.Rows[i%len(r.Rows)] }

// newRecords are the records of slot i: one, or one per round of a
// conversation, stamped with what the schedule and the dataset say; seq
// is the first's number in the whole plan (every shard's).
func (r *runner) newRecords(a *arena, i, seq int, at time.Duration) []record.Record {
	row := r.row(i)
	recs := a.take(max(1, len(row.Turns)))
	for k := range recs {
		rec := &recs[k]
		rec.Seq = seq + k
		rec.Intended = at.Seconds()
		rec.InputLen, rec.InputTextLen, rec.InputVisionLen = row.PromptLen, row.TextPromptLen, row.VisionPromptLen
		rec.PromptLen, rec.OutputLen = row.PromptLen, row.OutputLen
		rec.URL = r.urlOf(i)
		if row.Turns != nil {
			rec.Round, rec.Session, rec.Turn, rec.SessionTurns = true, i, k, len(row.Turns)
			rec.OutputLen = turnOutput(row, k, row.OutputLen, false)
		}
	}
	return recs
}

// arena hands out records whose addresses stay put while requests write
// them, in blocks: one block of the exact size for a plan of known
// length, and more as a run by time needs them.
type arena struct {
	blocks [][]record.Record
	free   []record.Record
	n      int
	// soak: every take is its own, let go once folded (retire), and all
	// is nil.
	soak bool
}

func newArena(hint int) *arena { return &arena{free: make([]record.Record, 0, hint)} }

func (a *arena) take(n int) []record.Record {
	if a.soak {
		return make([]record.Record, n)
	}
	if cap(a.free)-len(a.free) < n {
		if len(a.free) > 0 {
			a.blocks = append(a.blocks, a.free)
		}
		a.free = make([]record.Record, 0, max(n, 4096))
	}
	a.free = a.free[:len(a.free)+n]
	a.n += n
	return a.free[len(a.free)-n:]
}

// all is every record taken, in order (call it once the requests ended).
func (a *arena) all() []record.Record {
	if a.soak {
		return nil
	}
	if len(a.blocks) == 0 {
		return a.free
	}
	out := make([]record.Record, 0, a.n)
	for _, b := range a.blocks {
		out = append(out, b...)
	}
	return append(out, a.free...)
}

// input is what the backend sends for row.
func (p *Plan) input(row *dataset.Row, outputLen int, lora string) *backend.Input {
	extra := p.Extra
	if row.Extra != nil && row.Extra.Len() > 0 {
		extra = p.Extra.Clone()
		extra.Update(row.Extra)
	}
	var audio *backend.Audio
	if a := row.Audio; a != nil {
		audio = &backend.Audio{Name: a.Name, Head: a.Head, Data: a.Data, Seconds: a.Seconds}
	}
	return &backend.Input{
		Text: row.Text, IDs: row.IDs, Messages: row.Messages, Audio: audio,
		PromptLen: row.PromptLen, OutputLen: outputLen,
		Model: p.Model, LoRA: lora, Images: row.Images, Docs: row.Docs, RoutingKey: row.RoutingKey,
		Extra: extra,
	}
}

// acquire takes a concurrency slot, or reports false once ctx has ended.
func (r *runner) acquire(ctx context.Context) bool { return r.acquireFrom(ctx, r.sem) }

func (r *runner) release() { releaseTo(r.sem) }

// slotsFor is what a plan position waits on: a session's place for a
// conversation under --max-sessions, else a request slot.
func (r *runner) slotsFor(session bool) chan struct{} {
	if session {
		return r.sessions
	}
	return r.sem
}

// acquireFrom takes a place in sem (nil: no limit), or reports false once
// ctx has ended. An ended ctx wins even when a place is free: select picks
// at random among ready cases, and a run behind a full limit must stop
// sending at once.
func (r *runner) acquireFrom(ctx context.Context, sem chan struct{}) bool {
	if ctx.Err() != nil {
		return false
	}
	if sem == nil {
		return true
	}
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	if ctx.Err() != nil {
		<-sem
		return false
	}
	return true
}

func releaseTo(sem chan struct{}) {
	if sem != nil {
		<-sem
	}
}

// rampCap holds all but one of the concurrency slots and gives one back at
// each of the plan's cap steps, absolute times from start, so the cap
// rises from 1 to --max-concurrency; it stops when ctx ends.
func (r *runner) rampCap(ctx context.Context, start time.Time) {
	steps := r.capSteps
	for range steps {
		r.sem <- struct{}{}
	}
	go func() {
		for _, at := range steps {
			if !r.waitUntil(ctx, start.Add(at)) {
				return
			}
			<-r.sem
		}
	}()
}

// dispatch sends the phase's requests at their planned times and waits
// for all of them; last is when the last response ended. ctx stops the
// dispatching (the interrupt); inflight is what requests run under.
// unsent counts the requests of a finite plan never dispatched because
// ctx ended or the phase's time was up (their records are not made).
func (r *runner) dispatch(ctx, inflight context.Context, ph phase, start time.Time) (recs []record.Record, last time.Time, unsent int) {
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	last = start
	ended := func() {
		done := time.Now()
		mu.Lock()
		if done.After(last) {
			last = done
		}
		mu.Unlock()
	}
	paced := ctx
	if !ph.until.IsZero() {
		var cancel func()
		paced, cancel = context.WithDeadline(ctx, ph.until)
		defer cancel()
		// A request whose goroutine ran late is not written after the end.
		r.gate.CloseAt(ph.until)
		defer r.gate.CloseAt(time.Time{})
	}
	if ph.capRamp {
		r.rampCap(paced, start)
	}
	n := len(ph.slots)
	hint := n
	if ph.cyclic {
		hint = 0
	}
	a := newArena(hint)
	a.soak = r.fold != nil
	i, seq := 0, 0
	for ; ph.cyclic || i < n; i++ {
		if paced.Err() != nil {
			break // interrupted, or the time is up: the rest is not sent
		}
		slot := ph.slots[i%n]
		row := r.row(i)
		first := seq
		seq += max(1, len(row.Turns))
		if !r.traffic.mine(i) || !ph.takes(i) {
			continue // another shard's, or the other side's
		}
		mine := r.newRecords(a, i, first, slot.At)
		deadline := start.Add(slot.At)
		// The pacer's lag is how late it released a request it was free
		// to release on time: from the deadline, or from when the
		// dispatcher got back to it if later (a burst, or a full
		// concurrency limit, holds it up on purpose).
		ready := time.Now()
		if !r.waitUntil(paced, deadline) {
			r.retire(mine)
			continue // not sent: the run was interrupted or its time is up
		}
		if deadline.After(ready) {
			ready = deadline
		}
		lag := time.Since(ready).Seconds()
		ph.check.lag(lag)
		if o := r.observing(); o != nil {
			o.Lag(lag)
		}
		// A conversation under --max-sessions takes a session's place; its
		// turns take request slots as they are sent (converse).
		bySession := row.Turns != nil && r.sessions != nil
		sem := r.slotsFor(bySession)
		if ph.sem != nil {
			sem = ph.sem
		}
		if !r.acquireFrom(paced, sem) {
			r.retire(mine)
			continue
		}
		out, pos := row.OutputLen, i
		wg.Add(1)
		go func() {
			// The slot is given back as soon as the reply has ended (free),
			// before the record is counted and written.
			held := true
			free := func() {
				if held {
					held = false
					releaseTo(sem)
				}
			}
			finish := func() {
				free()
				r.retire(mine)
				wg.Done()
			}
			// The interrupt (or the end of the run's time) may have come
			// while this goroutine waited to run: then it sends nothing.
			if paced.Err() != nil {
				finish()
				return
			}
			if row.Turns != nil {
				r.converse(paced, inflight, pos, row, slot.LoRA, out, mine, start, ended)
				ph.bar.add()
				finish()
				return
			}
			// This goroutine ends once the request is written; the
			// rest runs when its reply has ended (backend.Client.Start).
			r.start(inflight, r.inputAt(pos, row, out, slot.LoRA), &mine[0], start, ended, free, func() {
				ph.bar.add()
				finish()
			})
		}()
	}
	wg.Wait()
	if !ph.cyclic {
		for ; i < n; i++ {
			if r.traffic.mine(i) && ph.takes(i) {
				unsent += max(1, len(r.row(i).Turns))
			}
		}
	}
	return a.all(), last, unsent
}

// send runs one request into rec under ctx and returns once its record is
// written: start, waited for.
func (r *runner) send(ctx context.Context, in *backend.Input, rec *record.Record, epoch time.Time, ended, free func()) {
	done := make(chan struct{})
	r.start(ctx, in, rec, epoch, ended, free, func() { close(done) })
	<-done
}

// start sends one request into rec under ctx, and returns; done is called
// once its record is written. ended is called when it finished (unless the
// interrupt cut it). The request is not sent when the run's gate is closed
// by the time it would be written (rec.Sent is then false). free, when not
// nil, gives the request's concurrency slot back: it is called as soon as
// the reply has ended, so that counting the reply's tokens and writing its
// record never delay the next send.
func (r *runner) start(ctx context.Context, in *backend.Input, rec *record.Record, epoch time.Time, ended, free, done func()) {
	rec.Sent = true
	in.Gate, in.ID = r.gate, requestID()
	if r.measuring && r.traffic.cancel.picks(rec.Seq) {
		in.Cancel, in.CancelAfter = true, r.traffic.cancel.delay
	}
	started := unixTime()
	counted := r.fold != nil && r.measuring
	if counted {
		r.soak.sending()
	}
	o := r.observing()
	if o != nil {
		o.Sending()
	}
	c := r.clientOf(rec)
	r.sided(in, rec)
	r.printStart(in, c.URL())
	c.Start(ctx, in, rec, epoch, func() {
		if counted {
			r.soak.sent()
		}
		r.replied(in, rec, epoch, started, ended, free)
		if o != nil {
			o.Ended(rec)
		}
		done()
	})
}

// replied completes a request whose reply has ended (or that was not
// sent): the slot, its end, its token count, its record.
func (r *runner) replied(in *backend.Input, rec *record.Record, epoch time.Time, started float64, ended, free func()) {
	end := time.Since(epoch).Seconds()
	// Only a request the interrupt's end of the grace period cut counts as
	// cancelled: one that failed on its own keeps its kind.
	cut := rec.ErrorKind == record.KindInterrupted
	if rec.Sent && !cut && ended != nil {
		ended()
	}

	if free != nil {
		free()
	}
	if !rec.Sent {
		return
	}
	rec.End = end
	if r.measuring {
		r.probes.tick()
	}
	r.clientOf(rec).CountText(rec)
	// Image tokens are our estimate where the server does not count them:
	// its prompt_tokens, where it reports them, replace the estimate in
	// the totals too (text and vision split as the estimate split them).
	if len(in.Images) > 0 && rec.Success && rec.PromptLen > 0 && rec.PromptLen != rec.InputLen {
		rec.InputLen = rec.PromptLen
		rec.InputVisionLen = max(0, rec.PromptLen-rec.InputTextLen)
		rec.InputTextLen = rec.PromptLen - rec.InputVisionLen
	}
	if cut {
		rec.Error = "cancelled: the run was interrupted"
	}
	r.printEnd(in.ID, started, rec)
	r.recFile.Write(rec)
}
