package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
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
		fmt.Fprintf(r.Env.Stderr, "benchserve: warning: the common start (--start-at) passed %.1f ms before this process was ready: its first requests leave late\n", float64(late)/1e6)
		return start, nil
	}
	if !schedule.WaitUntil(ctx, start) {
		return start, &ExitError{Code: ExitInterrupted, Msg: "interrupted while waiting for --start-at: nothing to report"}
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
// needs to rebuild the whole run: the shard, the common start, and the
// settings the result echoes.
func (r *runner) shardHeader() {
	t := &r.traffic
	if t.shards == 0 || r.recFile == nil {
		return
	}
	cfg := r.Config
	o := &pyjson.Object{}
	o.Set("shard", pyjson.String(fmt.Sprintf("%d/%d", t.shard, t.shards)))
	if !t.startAt.IsZero() {
		o.Set("start_at_unix", pyjson.Float(float64(t.startAt.UnixNano())/1e9))
	}
	o.Set("seed", pyjson.Int(cfg.Seed))
	o.Set("planned_slots", pyjson.Int(len(r.Slots)))
	run := runOf(cfg, r.Client.Spec(), r.gates, nil)
	o.Set("backend", pyjson.String(run.Backend))
	o.Set("dataset_name", pyjson.String(run.DatasetName))
	o.Set("request_rate", pyjson.Float(run.RequestRate))
	if run.MaxConcurrency != nil {
		o.Set("max_concurrency", pyjson.Int(*run.MaxConcurrency))
	}
	if run.SharegptOutputLen != nil {
		o.Set("sharegpt_output_len", pyjson.Int(*run.SharegptOutputLen))
	}
	o.Set("random_input_len", pyjson.Int(run.RandomInputLen))
	o.Set("random_output_len", pyjson.Int(run.RandomOutputLen))
	o.Set("random_range_ratio", pyjson.Float(run.RandomRangeRatio))
	if run.Tag != nil {
		o.Set("tag", pyjson.String(*run.Tag))
	}
	r.recFile.line(o)
}

// shardFooter closes a shard's record file: when it really started, how
// long it ran, how many records it wrote; merge waits for it.
func (r *runner) shardFooter(e *Execution, records int) {
	if r.traffic.shards == 0 || r.recFile == nil {
		return
	}
	o := &pyjson.Object{}
	o.Set("shard_end", pyjson.Bool(true))
	o.Set("benchmark_start_unix", pyjson.Float(float64(e.Start.UnixNano())/1e9))
	o.Set("duration", pyjson.Float(e.Duration))
	o.Set("records", pyjson.Int(records))
	o.Set("interrupted", pyjson.Bool(e.Stopped))
	r.recFile.line(o)
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
