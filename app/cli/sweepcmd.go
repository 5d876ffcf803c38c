package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"benchserve/bench"
	"benchserve/internal/py/argparse"
	"benchserve/report"
	"benchserve/sweep"
)

const (
	sweepProg        = "benchserve sweep"
	sweepDescription = "Run the benchmark at many loads in one command: every flag of the main command, where " +
		"--request-rate, --max-concurrency, --random-input-len and --random-output-len may take lists (their " +
		"product, or with --zip their pairs); or --sweep-profile auto, which finds the range itself; or --search, " +
		"the highest load at which every --slo holds. One result line per run is appended to --output-file. " + signalsHelp
)

// sweepable are the main command's flags that take lists in a sweep.
var sweepable = map[string]bool{"--request-rate": true, "--max-concurrency": true, "--random-input-len": true, "--random-output-len": true}

const gSweep = "Sweep"

func newSweepParser() *argparse.Parser {
	p := argparse.New(sweepProg, sweepDescription)
	groups := map[string]*argparse.Group{}
	for _, title := range groupOrder {
		groups[title] = p.Group(title)
	}
	for _, f := range flags {
		o := f.opt
		if sweepable[o.Name] {
			// A list: "1 2 4" or "1,2,4"; converted below with the
			// flag's own type.
			o.Type, o.Nargs, o.Default, o.Metavar = argparse.Str, argparse.OneOrMore, nil, ""
			o.Help += " In a sweep: one or more values (space- or comma-separated)."
		}
		groups[f.group].Add(o)
	}
	p.Exclusive("--profile-prefill-url", "--profile-decode-url")
	g := p.Group(gSweep)
	g.Add(argparse.Option{Name: "--zip", Action: argparse.StoreTrue, Help: "Pair the lists (the i-th of each) instead of running every combination."})
	g.Add(argparse.Option{Name: "--sweep-pause", Type: argparse.Float, Default: 2.0, Help: "Seconds the server rests between runs."})
	g.Add(argparse.Option{Name: "--sweep-profile", Choices: []string{"auto"}, Help: "auto: a concurrency-1 run (the latency floor), an unbounded run (the throughput ceiling; with --duration, a closed loop of one request in flight per prompt), then --sweep-points rates evenly between them."})
	g.Add(argparse.Option{Name: "--sweep-points", Type: argparse.Int, Default: 5, Help: "Rates between the floor and the ceiling with --sweep-profile auto."})
	g.Add(argparse.Option{Name: "--search", Choices: []string{"request-rate", "max-concurrency"}, Help: "Find the highest load at which every --slo holds, by bracketing and bisection of measured runs, then confirm both ends of the bracket."})
	g.Add(argparse.Option{Name: "--slo", Action: argparse.Append, Help: "KEY OP NUMBER over a numeric result key, as --threshold (p99_ttft_ms<500); repeatable; what --search must meet."})
	g.Add(argparse.Option{Name: "--search-tolerance", Type: argparse.Float, Default: 0.05, Help: "Stop bisecting when the bracket's high end is within this fraction above its low end."})
	g.Add(argparse.Option{Name: "--search-max-runs", Type: argparse.Int, Default: 40, Help: "At most this many runs in a search, in all: its ceiling run and confirming runs included."})
	g.Add(argparse.Option{Name: "--repeats", Type: argparse.Int, Default: 1, Help: "Run every point this many times and report the mean, std, coefficient of variation and 95% interval of its figures (a search confirms with max(3, this))."})
	g.Add(argparse.Option{Name: "--repeat-until-cv", Type: argparse.Float, Help: "Stop a point's repeats once (after 3 runs) the coefficient of variation of its throughputs and median TTFT and ITL is at most this."})
	return p
}

// parseSweep parses the arguments after "benchserve sweep".
func parseSweep(args []string, cols int) (*sweep.Config, map[string]bool, error) {
	ns, err := parseArgs(newSweepParser(), args, cols)
	if err != nil {
		return nil, nil, err
	}
	base := new(bench.Config)
	given := map[string]bool{}
	sc := &sweep.Config{Base: base}
	for _, f := range flags {
		if ns.Given(dest(f)) {
			given[f.opt.Name] = true
		}
		if !sweepable[f.opt.Name] {
			f.bind.set(base, ns.Get(dest(f)))
			continue
		}
		vals, err := listValues(f, ns.Get(dest(f)))
		if err != nil {
			return nil, nil, err
		}
		if vals == nil {
			f.bind.set(base, f.opt.Default)
			continue
		}
		f.bind.set(base, vals[0])
		switch f.opt.Name {
		case "--request-rate":
			for _, v := range vals {
				sc.Rates = append(sc.Rates, v.(float64))
			}
		case "--max-concurrency":
			sc.Concurrencies = ints(vals)
		case "--random-input-len":
			sc.InputLens = ints(vals)
		case "--random-output-len":
			sc.OutputLens = ints(vals)
		}
	}
	if err := checkParsed(base); err != nil {
		return nil, nil, err
	}
	for _, f := range []string{"--save-plan", "--replay-plan"} {
		if given[f] {
			return nil, nil, &UsageError{Msg: f + ": a sweep plans each point anew; save or replay a plan with the main command"}
		}
	}
	// The sweep's own flags count too: --sim alone runs the demo.
	for _, d := range []string{"zip", "sweep_pause", "sweep_profile", "sweep_points", "search", "slo", "search_tolerance", "search_max_runs", "repeats", "repeat_until_cv"} {
		if ns.Given(d) {
			given["--"+strings.ReplaceAll(d, "_", "-")] = true
		}
	}
	sc.Zip = ns.Get("zip").(bool)
	pause := ns.Get("sweep_pause").(float64)
	if !(pause >= 0) {
		return nil, nil, &UsageError{Msg: fmt.Sprintf("argument --sweep-pause: must be >= 0, got %v", pause)}
	}
	sc.Pause = time.Duration(pause * float64(time.Second))
	sc.Profile, _ = ns.Get("sweep_profile").(string)
	sc.Points = ns.Get("sweep_points").(int)
	sc.Search, _ = ns.Get("search").(string)
	sc.Tolerance = ns.Get("search_tolerance").(float64)
	sc.MaxRuns = ns.Get("search_max_runs").(int)
	sc.Repeats = ns.Get("repeats").(int)
	if v, ok := ns.Get("repeat_until_cv").(float64); ok {
		sc.RepeatUntilCV = v
	}
	if l, ok := ns.Get("slo").([]any); ok {
		for _, x := range l {
			t, err := report.ParseThreshold(x.(string))
			if err != nil {
				return nil, nil, &UsageError{Msg: strings.Replace(err.Error(), "--threshold", "--slo", 1)}
			}
			sc.SLOs = append(sc.SLOs, t)
		}
	}
	if err := checkSweep(sc, ns); err != nil {
		return nil, nil, err
	}
	if len(sc.SLOs) > 0 {
		// A misspelt key would fail every run: refuse it now. Flag errors
		// of the base config are left to the run, which names them.
		if keys, err := bench.ResultKeys(base); err == nil {
			if err := report.CheckKeys(sc.SLOs, keys); err != nil {
				return nil, nil, &UsageError{Msg: strings.Replace(err.Error(), "--threshold", "--slo", 1)}
			}
		}
	}
	return sc, given, nil
}

// listValues converts a sweepable flag's items ("1 2", "1,2") with the
// flag's type; nil when it was not given.
func listValues(f flag, v any) ([]any, error) {
	items, ok := v.([]any)
	if !ok {
		return nil, nil
	}
	var out []any
	for _, it := range items {
		for _, s := range strings.Split(it.(string), ",") {
			if s = strings.TrimSpace(s); s == "" {
				continue
			}
			x, err := f.opt.Type.Convert(s)
			if err != nil {
				return nil, &UsageError{Msg: fmt.Sprintf("argument %s: invalid %s value: %s", f.opt.Name, f.opt.Type.Name, argparse.Repr(s))}
			}
			out = append(out, x)
		}
	}
	if len(out) == 0 {
		return nil, &UsageError{Msg: "argument " + f.opt.Name + ": expected at least one value"}
	}
	return out, nil
}

func ints(vals []any) []int {
	out := make([]int, len(vals))
	for i, v := range vals {
		out[i] = v.(int)
	}
	return out
}

// checkSweep refuses sweep flags that contradict each other.
func checkSweep(c *sweep.Config, ns *argparse.Namespace) error {
	bad := func(format string, a ...any) error { return &UsageError{Msg: fmt.Sprintf(format, a...)} }
	switch {
	case c.Points < 1:
		return bad("--sweep-points: must be >= 1, got %d", c.Points)
	case c.Repeats < 1:
		return bad("--repeats: must be >= 1, got %d", c.Repeats)
	case c.RepeatUntilCV < 0:
		return bad("--repeat-until-cv: must be > 0, got %v", c.RepeatUntilCV)
	case !(c.Tolerance > 0 && c.Tolerance < 1):
		return bad("--search-tolerance: must be between 0 and 1 (a fraction), got %v", c.Tolerance)
	case c.MaxRuns < 1:
		return bad("--search-max-runs: must be >= 1, got %d", c.MaxRuns)
	case c.Search != "" && len(c.SLOs) == 0:
		return bad("--search %s: give the SLO to meet with --slo (e.g. --slo 'p99_ttft_ms<500')", c.Search)
	case c.Search == "" && len(c.SLOs) > 0 && c.Profile == "" && len(c.Rates)+len(c.Concurrencies)+len(c.InputLens)+len(c.OutputLens) == 0:
		return bad("--slo: without --search, give the points to judge (lists of --request-rate, --max-concurrency...) or --sweep-profile auto")
	case c.Search != "" && c.Profile != "":
		return bad("--search and --sweep-profile: give one of them")
	case c.Search == "request-rate" && len(c.Rates) > 1, c.Search == "max-concurrency" && len(c.Concurrencies) > 1:
		return bad("--search %s: give at most one starting value of it, not a list", c.Search)
	case c.Search != "" && (len(c.InputLens) > 1 || len(c.OutputLens) > 1 || (c.Search == "request-rate" && len(c.Concurrencies) > 1) || (c.Search == "max-concurrency" && len(c.Rates) > 1)):
		return bad("--search %s: the other flags take one value", c.Search)
	case c.Profile != "" && len(c.Rates) > 0:
		return bad("--sweep-profile auto finds its own rates: remove --request-rate")
	case c.Profile != "" && len(c.Concurrencies) > 1:
		return bad("--sweep-profile auto: give --max-concurrency one value (the cap of its runs but the floor), not a list")
	case c.Search == "" && c.Profile == "" && ns.Given("sweep_points"):
		return bad("--sweep-points: only --sweep-profile auto uses it")
	}
	if c.Profile == "" && c.Search == "" {
		if _, err := c.Grid(); err != nil {
			return &UsageError{Msg: err.Error()}
		}
	}
	return nil
}

// SweepMain runs "benchserve sweep" and returns the exit code: 0; 1 when
// the sweep could not start or stopped on a broken server; 2 for a bad
// command line; 3 when every run failed; 4 when a threshold failed or the
// search found no load meeting the SLOs; 130 when interrupted (finished
// runs are kept).
func SweepMain(ctx context.Context, args []string, pio IO) int {
	if pio.Getenv == nil {
		pio.Getenv = os.Getenv
	}
	sc, given, err := parseSweep(args, pio.columns())
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	if sweepsRates(sc) { // the gaps' shape is used by the finite rates
		delete(given, "--arrival")
		delete(given, "--burstiness")
	}
	observer, stopMetrics, err := serveMetrics(sc.Base, pio, sweepProg)
	if err != nil {
		return exitCode(err, pio.Stderr)
	}
	defer stopMetrics()
	stop, err := setUp(sc.Base, given, pio, sweepProg)
	if err != nil {
		return exitCode(err, pio.Stderr)
	}
	defer stop()
	interrupt, cut := interrupts(ctx, pio)
	err = sweep.Run(ctx, sc, bench.Env{
		Stdout:    pio.Stdout,
		Stderr:    pio.Stderr,
		Getenv:    pio.Getenv,
		Receive:   pio.Getenv(receiveEnv),
		Namespace: Namespace,
		Interrupt: interrupt,
		Cut:       cut,
		Observer:  observer,
	})
	return exitCode(err, pio.Stderr)
}

// sweepsRates reports whether the sweep runs a finite request rate
// anywhere: a search or profile over rates, or a finite rate in the list.
func sweepsRates(sc *sweep.Config) bool {
	if sc.Search == "request-rate" || sc.Profile == "auto" {
		return true
	}
	for _, r := range sc.Rates {
		if !math.IsInf(r, 1) {
			return true
		}
	}
	return false
}
