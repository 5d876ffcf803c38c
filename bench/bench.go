// Package bench runs one benchmark as stages: Prepare (flags, server,
// model, tokenizer, rows, schedule, client) → Execute (warmup, flush,
// profiler, every request at its time) → Summarize (the figures and the
// self-check), whose result package report prints and writes.
package bench

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"benchserve/internal/exit"
	"benchserve/internal/syncio"
	"benchserve/report"
)

var sprintf = fmt.Sprintf

// Env is the process around a run: its output streams and environment.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Namespace prints the flags as Python prints an argparse Namespace.
	// It is called again once the run has filled in what the reference
	// sets on its args (the detected model, the default port).
	Namespace func(*Config) string
	// Progress turns the progress bar on (stderr is a terminal and
	// --disable-tqdm was not given).
	Progress bool
	// Now gives the wall clock, for the output file's name.
	Now func() time.Time
	// Interrupt is closed when the user asks the run to stop (the first
	// SIGINT or SIGTERM): no more requests are sent, those in flight get
	// Grace to finish, and the result covers what completed.
	Interrupt <-chan struct{}
	// Cut is closed when the user asks again (a second interrupt): the
	// requests still in flight are cancelled without waiting for the end
	// of the grace period; the result still covers those that finished.
	Cut <-chan struct{}
	// Grace is how long requests in flight may finish after an interrupt
	// (0: exit.Grace).
	Grace time.Duration
	// Receive is how plain-HTTP responses are read: the receiver of
	// http1.Options.Receive ("" or "auto", "events", "poller"). Package
	// cli sets it from BENCHSERVE_RECEIVE.
	Receive string
	// Observer, when not nil, is told of every measured request as it
	// starts and ends (--metrics-addr).
	Observer Observer
	// locked: Stdout and Stderr are already syncio.Locked.
	locked bool
}

// withDefaults fills in what e leaves out. Request goroutines print
// (--print-requests) and so does the interrupt notice: each write must
// land whole.
func (e Env) withDefaults() Env {
	if e.Getenv == nil {
		e.Getenv = func(string) string { return "" }
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.Grace <= 0 {
		e.Grace = exit.Grace
	}
	if !e.locked {
		e.Stdout, e.Stderr, e.locked = syncio.Locked(e.Stdout), syncio.Locked(e.Stderr), true
	}
	return e
}

// Run runs one benchmark as the reference tool's run_benchmark does, prints
// its result and appends its result line to the output file.
func Run(ctx context.Context, cfg *Config, env Env) (*report.Result, error) {
	env = env.withDefaults()
	// Until the measured run starts there is nothing to keep: an interrupt
	// ends the setup at once.
	setup, cancel := context.WithCancel(ctx)
	defer cancel()
	stopOnInterrupt(setup, env.Interrupt, cancel)
	p, err := Prepare(setup, cfg, env)
	if err != nil {
		return nil, interruptedSetup(err, env)
	}
	defer p.Close()
	e, err := Execute(ctx, p)
	if err != nil {
		return nil, interruptedSetup(err, env)
	}
	res := Summarize(p, e)
	return res, write(p, res)
}

// interruptedSetup is err, or the interrupt's exit when an interrupt
// ended the run before its measured part.
func interruptedSetup(err error, env Env) error {
	if interrupted(env.Interrupt) {
		return &exit.Error{Code: exit.Interrupted, Msg: "interrupted before the benchmark started: nothing to report"}
	}
	return err
}

// write prints res and appends its line to the plan's output file; the
// error is the run's exit.
func write(p *Plan, res *report.Result) error {
	if err := res.Print(p.Env.Stdout, p.Config.PlotThroughput); err != nil {
		return err
	}
	if err := report.Append(p.OutputFile, res.Line()); err != nil {
		return failure("--output-file: %v", err)
	}
	if f := p.Config.SteadyStateOutputFile; f != nil && res.Steady != nil {
		if err := report.Append(*f, report.SteadyLine(res.Steady)); err != nil {
			return failure("--steady-state-output-file: %v", err)
		}
	}
	recs := res.Records
	if res.Stop != nil {
		return &exit.Error{Code: exit.Interrupted, Msg: sprintf("interrupted; the result line for the %d requests that finished was appended to %s", len(recs), p.OutputFile)}
	}
	if res.Summary.Completed == 0 {
		first := ""
		for i := range recs {
			if recs[i].Error != "" {
				first = recs[i].Error
				break
			}
		}
		return &exit.Error{Code: exit.AllFailed, Msg: sprintf("all %d requests failed; first error: %s", len(recs), first)}
	}
	if bad := report.Failed(res.Thresholds); len(bad) > 0 {
		return &exit.Error{Code: exit.Thresholds, Msg: sprintf("%d of %d thresholds failed: %s", len(bad), len(res.Thresholds), strings.Join(bad, ", "))}
	}
	return nil
}
