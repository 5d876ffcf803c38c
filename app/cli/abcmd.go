package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"benchserve/backend"
	"benchserve/bench"
	"benchserve/internal/py/argparse"
	"benchserve/metrics"
	"benchserve/report"
)

const (
	abProg        = "benchserve ab"
	abDescription = "Run one plan against two servers, A (--base-url) and B (--b-base-url): the same prompts at the same " +
		"times, requests 2k and 2k+1 going one to each side in an order drawn from --seed, so that drift hits both " +
		"alike and the differences are paired. Every flag of the main command applies to both sides (--max-concurrency " +
		"to each side on its own); the --b-* flags change what B gets. Prints each side's result and the paired " +
		"comparison B − A with simultaneous 95% intervals and a verdict per figure, and appends each side's result line " +
		"(ab_side; B's carries the comparison, key ab). Fair only when A and B run on separate, equal hardware: two " +
		"servers sharing a GPU make it a contention test. " + signalsHelp
	gAB = "A/B"
)

// abFlags are the A/B group's own flags, beside the main command's.
var abFlags = []argparse.Option{
	{Name: "--b-base-url", Type: argparse.Str, Help: "Side B's server (required unless --sim)."},
	{Name: "--b-backend", Type: argparse.Str, Choices: backend.Names(), Help: "B's --backend (default: A's); it must take A's prompts in the same form."},
	{Name: "--b-model", Type: argparse.Str, Help: "B's model name (default: A's --model when given, else the first model B lists)."},
	{Name: "--b-extra-request-body", Type: argparse.Str, Metavar: "JSON", Help: "B's --extra-request-body (default: A's)."},
	{Name: "--b-header", Type: argparse.Str, Nargs: argparse.OneOrMore, Help: "B's --header items, Key=Value (default: A's)."},
	{Name: "--ab-max-regression", Type: argparse.Str, Action: argparse.Append, Metavar: "KEY:LIMIT",
		Help: "Exit 4 when B is worse than A in figure KEY by more than LIMIT (NUMBER% of A's, or NUMBER in the figure's unit) even at the end of the interval nearest A, so noise alone never fails it (p99_ttft_ms:5%); repeatable."},
	{Name: "--b-sim-decode-scale", Type: argparse.Float, Default: 1.0,
		Help: "With --sim: B's simulator takes this many times as long per decode step as A's (1.1: 10% slower); else the two are identical."},
}

func newABParser() *argparse.Parser {
	p := argparse.New(abProg, abDescription)
	groups := map[string]*argparse.Group{}
	for _, title := range groupOrder {
		groups[title] = p.Group(title)
	}
	for _, f := range flags {
		groups[f.group].Add(f.opt)
	}
	p.Exclusive("--profile-prefill-url", "--profile-decode-url")
	g := p.Group(gAB)
	for _, o := range abFlags {
		g.Add(o)
	}
	return p
}

// abArgs is a parsed "benchserve ab" command line.
type abArgs struct {
	cfg   *bench.Config
	given map[string]bool // the main command's flags given
	ab    bench.ABConfig
	scale float64
}

func parseAB(args []string, cols int) (*abArgs, error) {
	ns, err := parseArgs(newABParser(), args, cols)
	if err != nil {
		return nil, err
	}
	a := &abArgs{cfg: new(bench.Config), given: map[string]bool{}}
	for _, f := range flags {
		f.bind.set(a.cfg, ns.Get(dest(f)))
		if ns.Given(dest(f)) {
			a.given[f.opt.Name] = true
		}
	}
	if err := checkParsed(a.cfg); err != nil {
		return nil, err
	}
	str := func(d string) *string {
		if s, ok := ns.Get(d).(string); ok {
			return &s
		}
		return nil
	}
	if s := str("b_base_url"); s != nil {
		a.ab.BaseURL = *s
	}
	if s := str("b_backend"); s != nil {
		a.ab.Backend = *s
	}
	a.ab.Model, a.ab.ExtraRequestBody = str("b_model"), str("b_extra_request_body")
	if ns.Given("b_header") {
		a.ab.Header = strList(ns.Get("b_header"))
	}
	a.scale = ns.Get("b_sim_decode_scale").(float64)
	switch {
	case !(a.scale > 0) || math.IsInf(a.scale, 0):
		return nil, &UsageError{Msg: fmt.Sprintf("--b-sim-decode-scale: must be a number > 0, got %v", a.scale)}
	case ns.Given("b_sim_decode_scale") && !a.cfg.Sim:
		return nil, &UsageError{Msg: "--b-sim-decode-scale: only with --sim (it sets B's simulator)"}
	case a.cfg.Sim && a.ab.BaseURL != "":
		return nil, &UsageError{Msg: "--sim starts both servers: drop --b-base-url"}
	case !a.cfg.Sim && a.ab.BaseURL == "":
		return nil, &UsageError{Msg: "--b-base-url: required (side B's server, e.g. --b-base-url http://127.0.0.1:30001), or --sim for two simulators"}
	}
	goodput := len(a.cfg.Goodput) > 0
	for _, expr := range strList(ns.Get("ab_max_regression")) {
		if k, _, _ := strings.Cut(expr, ":"); !goodput && strings.TrimSpace(k) == "request_goodput" {
			return nil, &UsageError{Msg: fmt.Sprintf("--ab-max-regression %q: request_goodput needs --goodput", expr)}
		}
		l, err := report.ParseABLimit(expr, metrics.ABKeys(goodput))
		if err != nil {
			return nil, &UsageError{Msg: err.Error()}
		}
		a.ab.Limits = append(a.ab.Limits, l)
	}
	return a, nil
}

// ABMain runs "benchserve ab" and returns the exit code: 0; 1 when it
// could not start; 2 for a bad command line; 3 when every request of a
// side failed; 4 when a --threshold (on either side) or an
// --ab-max-regression failed; 130 when interrupted.
func ABMain(ctx context.Context, args []string, pio IO) int {
	if pio.Getenv == nil {
		pio.Getenv = os.Getenv
	}
	a, err := parseAB(args, pio.columns())
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	stop, err := setUp(a.cfg, a.given, pio, abProg)
	if err != nil {
		return exitCode(err, pio.Stderr)
	}
	defer stop()
	if a.cfg.Sim {
		stopB, err := startSimB(a.cfg, a.scale, &a.ab, pio)
		if err != nil {
			return exitCode(err, pio.Stderr)
		}
		defer stopB()
	}
	interrupt, cut := interrupts(ctx, pio)
	start := time.Now()
	_, err = bench.RunAB(ctx, a.cfg, a.ab, bench.Env{
		Stdout:    pio.Stdout,
		Stderr:    pio.Stderr,
		Getenv:    pio.Getenv,
		Receive:   pio.Getenv(receiveEnv),
		Namespace: Namespace,
		Progress:  pio.StderrIsTerminal && !a.cfg.DisableTqdm,
		Interrupt: interrupt,
		Cut:       cut,
	})
	if a.cfg.Sim && lineWritten(err) {
		if name := simResultFile(a.cfg, start); name != "" {
			fmt.Fprintf(pio.Stdout, "The result lines were appended to %s (--output-file names another file).\n", name)
		}
	}
	return exitCode(err, pio.Stderr)
}

// startSimB starts side B's simulator for "ab --sim": A's preset, with
// each decode step scale times as long, and points ab at it.
func startSimB(cfg *bench.Config, scale float64, ab *bench.ABConfig, pio IO) (stop func(), err error) {
	sc, err := simConfig(cfg, pio)
	if err != nil {
		return nil, err
	}
	sc.DecodeBase = time.Duration(float64(sc.DecodeBase) * scale)
	sc.DecodePerRequest = time.Duration(float64(sc.DecodePerRequest) * scale)
	srv, err := serveSim(sc)
	if err != nil {
		return nil, err
	}
	ab.BaseURL = srv.URL()
	fmt.Fprintf(pio.Stdout, "Side B: a second built-in simulator (preset %s, decode steps ×%g) at %s.\n", sc.Preset, scale, ab.BaseURL)
	return func() { srv.Close() }, nil
}
