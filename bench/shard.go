package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"benchserve/internal/exit"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/report"
	"benchserve/schedule"
)

// commonStart is the measured run's start: now, or the common --start-at
// on this process's monotonic clock, waited for. A shard that comes to it
// late starts at once, its first requests late (the self-check shows it).
func (r *runner) commonStart(ctx context.Context) (time.Time, error) {
	start := time.Now()
	at := r.traffic.startAt
	if at.IsZero() {
		return start, nil
	}
	start = start.Add(time.Until(at))
	if late := time.Since(start); late > 0 {
		r.late = late
		fmt.Fprintf(r.Env.Stderr, "benchserve: warning: the common start (--start-at) passed %.1f ms before this process was ready: its first requests leave late\n", float64(late)/1e6)
		return start, nil
	}
	if !schedule.WaitUntil(ctx, start) {
		return start, &exit.Error{Code: exit.Interrupted, Msg: "interrupted while waiting for --start-at: nothing to report"}
	}
	return start, nil
}

// startAtSlack is how far in the past --start-at may be: a shard started
// late still joins the run (its first requests leave late); more is a
// typo or a stale variable, not a plan.
const startAtSlack = time.Minute

// checkStartAt refuses a --start-at more than startAtSlack before now.
func checkStartAt(flag float64, at, now time.Time) error {
	ago := now.Sub(at)
	if ago <= startAtSlack {
		return nil
	}
	when := ago.Round(time.Second).String()
	if ago > 48*time.Hour {
		when = fmt.Sprintf("%d days", int(ago.Hours()/24))
	}
	return usage("--start-at %s: that was %s ago; give a time to come (e.g. $(( $(date +%%s) + 30 ))) or --start-in SECONDS",
		strconv.FormatFloat(flag, 'f', -1, 64), when)
}

// shardHeader opens a shard's record file with what benchserve merge
// needs to rebuild the whole run.
func (r *runner) shardHeader() {
	t := &r.traffic
	if t.shards == 0 || r.recFile == nil {
		return
	}
	run := runOf(r.Config, r.Client.Spec(), r.gates, nil)
	h := &record.Header{Shard: fmt.Sprintf("%d/%d", t.shard, t.shards), Seed: r.Config.Seed, PlannedSlots: len(r.Slots), PlannedRequests: r.plannedRequests(),
		Backend: run.Backend, DatasetName: run.DatasetName, RequestRate: run.RequestRate,
		MaxConcurrency: run.MaxConcurrency, SharegptOutputLen: run.SharegptOutputLen,
		RandomInputLen: run.RandomInputLen, RandomOutputLen: run.RandomOutputLen, RandomRangeRatio: run.RandomRangeRatio, Tag: run.Tag}
	if !t.startAt.IsZero() {
		h.StartAt = float64(t.startAt.UnixNano()) / 1e9
	}
	h.URLs = r.shownURLs()
	r.recFile.WriteHeader(h)
}

// plannedRequests is how many requests the whole plan sends, each round
// of a conversation counted as its records are; 0 for a closed loop by
// time, whose count the run decides.
func (p *Plan) plannedRequests() int {
	if p.cyclic {
		return 0
	}
	n := 0
	for i := range p.Slots {
		n += max(1, len(p.Rows[i%len(p.Rows)].Turns))
	}
	return n
}

// shardFooter closes a shard's record file; merge waits for it.
func (r *runner) shardFooter(e *Execution, records int) {
	if r.traffic.shards == 0 || r.recFile == nil {
		return
	}
	r.recFile.WriteEnd(&record.End{Start: float64(e.Start.UnixNano()) / 1e9, Duration: e.Duration, Records: records, Interrupted: e.Stopped,
		Late: float64(r.late) / 1e6})
}

// warnServerTokens warns when the server counted more than 1% more or
// fewer generated tokens over the run than the client. One shard of
// several does not: the shards share the server, which counts them all.
func (p *Plan) warnServerTokens(v *metrics.ServerView, client int) {
	if p.traffic.shards > 1 {
		return
	}
	if g, ok, bad := report.TokensDisagree(v, client); ok && bad {
		fmt.Fprintf(p.Env.Stderr, "benchserve: warning: the server counted %.0f generated tokens during the run, the client %d: they differ by more than 1%% (other clients on the server, or token counts that do not match)\n", g, client)
	}
}
