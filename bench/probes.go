package bench

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"benchserve/metrics"
	"benchserve/record"
)

// probeRun is --consistency-probes: fixed rows sent at temperature 0 on
// the idle server after the warmup, then again during the measured run,
// spread across it, their replies compared. A probe is a request of its
// own, outside the concurrency limit and the run's records and figures.
type probeRun struct {
	rows   []int // row index of each probe
	idle   []record.Record
	loaded []record.Record
	// Under load, probe k goes out once the run has finished due(k) of
	// its requests; next is the next probe to send, done the requests
	// finished so far.
	total int
	next  atomic.Int64
	done  atomic.Int64
	sent  []atomic.Bool
	wg    sync.WaitGroup
	send  func(k int)
}

// probeSalt separates the probes' draw from the other uses of --seed.
const probeSalt = 0x9e0be5

// newProbes picks n single-turn rows, seeded by --seed (nil: none asked
// for, or no such row).
func (p *Plan) newProbes(n int) *probeRun {
	if n <= 0 {
		return nil
	}
	var single []int
	for i := range p.Rows {
		if p.Rows[i].Turns == nil {
			single = append(single, i)
		}
	}
	if len(single) == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(uint64(p.Config.Seed), probeSalt))
	rng.Shuffle(len(single), func(i, j int) { single[i], single[j] = single[j], single[i] })
	rows := single[:min(n, len(single))]
	return &probeRun{rows: rows, idle: make([]record.Record, len(rows)), loaded: make([]record.Record, len(rows)), sent: make([]atomic.Bool, len(rows))}
}

// probe sends probe k into rec, its request id probe-<phase>-<k>.
func (r *runner) probe(ctx context.Context, phase string, k int, rec *record.Record, epoch time.Time) {
	row := &r.Rows[r.probes.rows[k]]
	in := r.input(row, row.OutputLen, "")
	in.Probe, in.Gate, in.ID = true, r.gate, "probe-"+phase+"-"+strconv.Itoa(k)
	rec.PromptLen, rec.InputLen = row.PromptLen, row.PromptLen
	r.Client.Do(ctx, in, rec, epoch)
}

// idleProbes sends every probe once, one at a time, on the idle server.
func (r *runner) idleProbes(ctx context.Context) {
	pr := r.probes
	if pr == nil {
		return
	}
	epoch := time.Now()
	for k := range pr.rows {
		if ctx.Err() != nil {
			return
		}
		r.probe(ctx, "idle", k, &pr.idle[k], epoch)
	}
}

// startLoaded readies the probes under load for a run of total requests
// (0: not known, a closed loop by time: they go out as its first
// requests end).
func (r *runner) startLoaded(ctx context.Context, total int, epoch time.Time) {
	pr := r.probes
	if pr == nil {
		return
	}
	pr.total = total
	pr.send = func(k int) {
		defer pr.wg.Done()
		pr.sent[k].Store(true)
		r.probe(ctx, "load", k, &pr.loaded[k], epoch)
	}
}

// due is how many of the run's requests end before probe k goes out: the
// probes sit in the middle of equal shares of the run.
func (pr *probeRun) due(k int) int64 {
	n := len(pr.rows)
	return int64((2*k + 1) * max(pr.total, n) / (2 * n))
}

// tick counts a finished request of the measured run and sends the
// probes now due, each on a goroutine of its own.
func (pr *probeRun) tick() {
	if pr == nil || pr.send == nil {
		return
	}
	done := pr.done.Add(1)
	for {
		k := pr.next.Load()
		if int(k) >= len(pr.rows) || done < pr.due(int(k)) {
			return
		}
		if pr.next.CompareAndSwap(k, k+1) {
			pr.wg.Add(1)
			go pr.send(int(k))
		}
	}
}

// result waits for the probes in flight and compares the replies; tok
// counts tokens for the index of the first difference (nil: words).
func (pr *probeRun) result(tok interface{ Encode(string, bool) []int }) *metrics.Consistency {
	if pr == nil {
		return nil
	}
	pr.wg.Wait()
	c := &metrics.Consistency{Planned: len(pr.rows)}
	for k := range pr.rows {
		a, b := &pr.idle[k], &pr.loaded[k]
		if b.Success {
			c.LoadInput += b.PromptLen
			c.LoadOutput += b.OutputLen
		}
		if !pr.sent[k].Load() || !a.Success || !b.Success {
			continue
		}
		c.Compared++
		if a.Text == b.Text {
			continue
		}
		var at int
		if tok != nil {
			at, _ = metrics.FirstDifference(tok.Encode(a.Text, false), tok.Encode(b.Text, false))
		} else {
			at, _ = metrics.FirstDifference(strings.Fields(a.Text), strings.Fields(b.Text))
		}
		c.Diverged++
		c.FirstDiff = append(c.FirstDiff, at)
		if len(c.Pairs) < metrics.MaxProbePairs {
			c.Pairs = append(c.Pairs, metrics.ProbePair{Row: pr.rows[k], FirstDiff: at, Idle: a.Text, Loaded: b.Text})
		}
	}
	return c
}
