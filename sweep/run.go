package sweep

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"benchserve/bench"
	"benchserve/internal/exit"
	"benchserve/report"
)

// Exit rules, documented in docs/compat.md: a point is broken when it
// could not run (its warmup or cache flush failed) or no request of it
// succeeded; it is recorded and the sweep goes on, unless two points in a
// row broke (the server is likely down), which stops it.
const maxBrokenInARow = 2

// runner is one sweep in progress.
type runner struct {
	cfg   *Config
	env   bench.Env
	plans map[[2]int]*bench.Plan
	table *report.SweepTable
	// out is the result file every point appends to.
	out string
	// runs counts the points run, broken those broken, inARow the broken
	// ones since the last good one.
	runs, broken, inARow int
	thresholdsFailed     bool
}

// Run runs the sweep c, printing its table to env.Stdout and appending a
// result line per run to the output file.
func Run(ctx context.Context, c *Config, env bench.Env) error {
	r := &runner{cfg: c, env: env, plans: map[[2]int]*bench.Plan{}, table: report.NewSweepTable(env.Stdout)}
	defer r.close()
	var err error
	switch {
	case c.Search != "":
		err = r.search(ctx)
	case c.Profile == "auto":
		err = r.auto(ctx)
	default:
		var pts []Point
		if pts, err = c.Grid(); err != nil {
			return &exit.Error{Code: exit.Usage, Msg: err.Error()}
		}
		for _, pt := range pts {
			if _, err = r.point(ctx, pt); err != nil {
				break
			}
		}
	}
	return r.exit(err)
}

// exit is the sweep's outcome as an exit: the error that stopped it,
// else 3 when every run broke, 4 when a threshold failed.
func (r *runner) exit(err error) error {
	if err != nil {
		return err
	}
	switch {
	case r.runs > 0 && r.broken == r.runs:
		return &exit.Error{Code: exit.AllFailed, Msg: fmt.Sprintf("every one of the %d runs failed; their lines are in %s", r.runs, r.out)}
	case r.thresholdsFailed:
		return &exit.Error{Code: exit.Thresholds, Msg: "a --threshold failed at some points (the SLO column); their lines are in " + r.out}
	}
	return nil
}

func (r *runner) close() {
	for _, p := range r.plans {
		p.Close()
	}
}

// interrupted reports whether the user asked the sweep to stop.
func (r *runner) interrupted() bool {
	select {
	case <-r.env.Interrupt:
		return true
	default:
		return false
	}
}

func (r *runner) stopped() error {
	return &exit.Error{Code: exit.Interrupted, Msg: fmt.Sprintf("interrupted; the lines of the %d runs that finished were appended to %s", r.runs, r.out)}
}

// plan is the prepared plan for a point's lengths: prepared once (the
// server checked, the tokenizer found, the prompts built) and reused.
func (r *runner) plan(ctx context.Context, pt Point) (*bench.Plan, error) {
	key := [2]int{pt.InputLen, pt.OutputLen}
	if p := r.plans[key]; p != nil {
		return p, nil
	}
	cfg := *r.cfg.Base
	cfg.RandomInputLen, cfg.RandomOutputLen = pt.InputLen, pt.OutputLen
	if cfg.MaxConcurrency == nil && pt.Conc > 0 {
		// Prepared under the point's cap, which At replaces for each point:
		// a base of every request at once is no load for --duration.
		c := pt.Conc
		cfg.MaxConcurrency = &c
	}
	if r.out != "" {
		cfg.OutputFile = &r.out
	}
	// An interrupt ends the preparation at once: nothing is lost.
	setup, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-r.env.Interrupt:
			cancel()
		case <-setup.Done():
		}
	}()
	p, err := bench.Prepare(setup, &cfg, r.env)
	if err != nil {
		if r.interrupted() {
			return nil, r.stopped()
		}
		return nil, err
	}
	r.out = p.OutputFile
	r.plans[key] = p
	return p, nil
}

// run is one run of pt (repeat k of it, from 1): its line appended with
// the point's keys and its table row printed. ok is false when the point
// broke; err stops the sweep.
func (r *runner) run(ctx context.Context, pt Point, k int) (res *report.Result, ok bool, err error) {
	p, err := r.plan(ctx, pt)
	if err != nil {
		return nil, false, err
	}
	q, err := p.At(pt.Load(r.runs == 0))
	if err != nil {
		return nil, false, err
	}
	q.Env.Stdout = io.Discard // the table is the console
	if r.runs > 0 && r.cfg.Pause > 0 {
		select {
		case <-time.After(r.cfg.Pause):
		case <-r.env.Interrupt:
		case <-ctx.Done():
		}
	}
	if r.interrupted() {
		return nil, false, r.stopped()
	}
	r.runs++
	idx := r.runs
	e, xerr := bench.Execute(ctx, q)
	if xerr != nil {
		if r.interrupted() {
			return nil, false, r.stopped()
		}
		msg := xerr.Error()
		if err := report.Append(r.out, report.SweepBrokenLine(r.sweepPoint(pt, idx, k, nil), msg)); err != nil {
			return nil, false, &exit.Error{Code: exit.Failure, Msg: "--output-file: " + err.Error()}
		}
		r.table.Broken(r.sweepPoint(pt, idx, k, nil), msg)
		return nil, false, r.brokenPoint()
	}
	res = bench.Summarize(q, e)
	sp := r.sweepPoint(pt, idx, k, r.passed(res))
	res.Tail = report.SweepTail(sp)
	if err := report.Append(r.out, res.Line()); err != nil {
		return nil, false, &exit.Error{Code: exit.Failure, Msg: "--output-file: " + err.Error()}
	}
	if f := q.Config.SteadyStateOutputFile; f != nil && res.Steady != nil {
		if err := report.Append(*f, report.SteadyLine(res.Steady)); err != nil {
			return nil, false, &exit.Error{Code: exit.Failure, Msg: "--steady-state-output-file: " + err.Error()}
		}
	}
	if len(report.Failed(res.Thresholds)) > 0 {
		r.thresholdsFailed = true
	}
	r.table.Row(sp, res)
	if e.Stopped {
		return res, true, r.stopped()
	}
	if res.Summary.Completed == 0 {
		return res, false, r.brokenPoint()
	}
	r.inARow = 0
	return res, true, nil
}

// brokenPoint counts a broken point; two in a row stop the sweep.
func (r *runner) brokenPoint() error {
	r.broken++
	r.inARow++
	if r.inARow >= maxBrokenInARow {
		return &exit.Error{Code: exit.Failure, Msg: fmt.Sprintf("%d points in a row failed (the server may be down): the sweep stops; the lines of its %d runs are in %s", r.inARow, r.runs, r.out)}
	}
	return nil
}

// passed is whether res meets every --slo (nil when there are none, or
// with --threshold only, whether those passed).
func (r *runner) passed(res *report.Result) *bool {
	var ok bool
	switch {
	case len(r.cfg.SLOs) > 0:
		ok = res.Summary.Completed > 0 && len(report.Failed(report.Evaluate(r.cfg.SLOs, res.Line()))) == 0
	case len(res.Thresholds) > 0:
		ok = len(report.Failed(res.Thresholds)) == 0
	default:
		return nil
	}
	return &ok
}

// sweepPoint is run idx of the sweep, repeat k of pt (0: the point's
// repeats), with whether it met the SLOs.
func (r *runner) sweepPoint(pt Point, idx, k int, pass *bool) report.SweepPoint {
	return report.SweepPoint{Index: idx, Phase: pt.Phase, Rate: pt.Rate, Conc: pt.Conc,
		InputLen: pt.InputLen, OutputLen: pt.OutputLen, Repeat: k, Passed: pass}
}

// point runs pt --repeats times (fewer once --repeat-until-cv is met) and,
// after more than one run, writes and prints the spread of its figures.
func (r *runner) point(ctx context.Context, pt Point) ([]*report.Result, error) {
	reps := max(1, r.cfg.Repeats)
	var results []*report.Result
	for k := 1; k <= reps; k++ {
		res, ok, err := r.run(ctx, pt, k)
		if ok {
			results = append(results, res)
		}
		if err != nil {
			return results, err
		}
		if cv := r.cfg.RepeatUntilCV; cv > 0 && len(results) >= 3 && settled(results, cv) {
			break
		}
	}
	if len(results) > 1 {
		if err := r.writeSpread(pt, results); err != nil {
			return results, err
		}
	}
	return results, nil
}

// spreadKeys are the figures whose spread over repeats is reported; the
// first four decide --repeat-until-cv.
var spreadKeys = []string{"request_throughput", "output_throughput", "median_ttft_ms", "median_itl_ms",
	"p99_ttft_ms", "p99_itl_ms", "mean_e2e_latency_ms", "p99_e2e_latency_ms", "request_goodput", "slo_attainment"}

func spreads(results []*report.Result) map[string]report.Spread {
	vals := map[string][]float64{}
	for _, res := range results {
		_, v := report.NumericKeys(res.Line())
		for _, k := range spreadKeys {
			if x, ok := v[k]; ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
				vals[k] = append(vals[k], x)
			}
		}
	}
	out := map[string]report.Spread{}
	for k, xs := range vals {
		out[k] = spreadOf(xs)
	}
	return out
}

func settled(results []*report.Result, cv float64) bool {
	s := spreads(results)
	for _, k := range spreadKeys[:4] {
		if sp, ok := s[k]; ok && sp.CV > cv {
			return false
		}
	}
	return true
}

// writeSpread appends the point's spread line and prints it under its
// rows.
func (r *runner) writeSpread(pt Point, results []*report.Result) error {
	s := spreads(results)
	sp := r.sweepPoint(pt, r.runs, 0, nil)
	r.table.Spread(sp, len(results), s)
	return report.Append(r.out, report.RepeatStatsLine(sp, len(results), spreadKeys, s))
}
