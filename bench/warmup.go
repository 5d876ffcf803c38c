package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"benchserve/record"
	"benchserve/serverctl"
)

// warmup sends n copies of the first row, with at most 32 output tokens and
// the first adapter, all at once through the same concurrency limit; a
// conversation is replayed whole. It fails when none succeeds.
func (r *runner) warmup(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	lora := ""
	if len(r.Config.LoraName) > 0 {
		lora = r.Config.LoraName[0]
	}
	row := &r.Rows[0]
	out := min(row.OutputLen, 32)
	per := max(1, len(row.Turns))
	recs := make([]record.Record, n*per)
	var wg sync.WaitGroup
	epoch := time.Now()
	for i := range n {
		mine := recs[i*per : (i+1)*per]
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !r.acquire(ctx) {
				mine[0].Error = "interrupted"
				return
			}
			defer r.release()
			for k := range mine {
				mine[k].PromptLen, mine[k].InputLen = row.PromptLen, row.PromptLen
				mine[k].URL = r.urlOf(i)
			}
			if row.Turns != nil {
				r.converse(ctx, ctx, -1, row, lora, out, mine, epoch, nil)
			} else {
				r.clientOf(&mine[0]).Do(ctx, r.sided(r.inputAt(0, row, out, lora), &mine[0]), &mine[0], epoch)
			}
		}()
	}
	wg.Wait()
	for i := range recs {
		if recs[i].Success {
			return nil
		}
	}
	return r.warmupFailed(recs[0].Error)
}

// warmupFailed is the run's failure when no warmup request succeeded, in
// the reference's words (its ValueError), printed once as the error line.
func (r *runner) warmupFailed(firstError string) error {
	msg := firstError + " (POST " + serverctl.Redact(r.Client.URL()) + ")"
	return failure("Warmup failed - Please make sure benchmark arguments are correctly specified. Error: %s", msg)
}

// warmupFor sends the run's traffic for --warmup-duration (its own plan of
// that length, or the closed loop's cycle), with the full output lengths,
// so that the server is in its steady state when the measured run starts;
// requests in flight at its end finish first. It returns how many were
// sent, and fails when none succeeded.
func (r *runner) warmupFor(ctx context.Context) (int, error) {
	d := r.traffic.warmup
	fmt.Fprintf(r.Env.Stdout, "Starting warmup for %s seconds...\n", fmtFloat(d.Seconds()))
	start := time.Now()
	ph := phase{slots: r.warmupSlots, cyclic: r.warmupCyclic, until: start.Add(d)}
	recs, _, _ := r.dispatch(ctx, ctx, ph, start)
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	sent, ok, first := 0, false, ""
	for i := range recs {
		if recs[i].Sent {
			sent++
			ok = ok || recs[i].Success
			if first == "" {
				first = recs[i].Error
			}
		}
	}
	if !ok {
		return 0, r.warmupFailed(first)
	}
	return sent, nil
}
