package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"benchserve/bench"
	"benchserve/internal/exit"
	"benchserve/internal/syncio"
	"benchserve/internal/version"
	"benchserve/wire/http1"
)

// IO is the process around a command, injected so that the whole command
// line can be run in-process by tests.
type IO struct {
	Stdout, Stderr io.Writer
	// Stdin feeds the subcommands that read input (tokenize); nil means
	// os.Stdin.
	Stdin  io.Reader
	Getenv func(string) string
	// StderrIsTerminal turns the progress bar on (unless --disable-tqdm).
	StderrIsTerminal bool
	// Signals delivers SIGINT and SIGTERM. The first stops the run
	// gracefully, the second cancels what is in flight, the third calls
	// Exit at once; a burst within a second counts as one.
	Signals <-chan os.Signal
	// Exit ends the process (os.Exit in main).
	Exit func(code int)
	// beforeMetricsClose, in tests, is called with --metrics-addr's URL
	// after the result is printed and before its server shuts down.
	beforeMetricsClose func(url string)
}

// Main runs benchserve with args (without the program name) and returns
// the process exit code.
func Main(ctx context.Context, args []string, pio IO) (code int) {
	if pio.Getenv == nil {
		pio.Getenv = os.Getenv
	}
	pio.Stdout, pio.Stderr = syncio.Locked(pio.Stdout), syncio.Locked(pio.Stderr)
	defer lastResort(pio, &code)
	// BENCHSERVE_CPUPROFILE names a file for a CPU profile of the whole
	// command, for finding where the client's own time goes.
	if path := pio.Getenv("BENCHSERVE_CPUPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			if pprof.StartCPUProfile(f) == nil {
				defer func() { pprof.StopCPUProfile(); f.Close() }()
			}
		}
	}
	// BENCHSERVE_MEMPROFILE names a file for a heap profile taken as the
	// command ends, while the run's records and connections are still held.
	if path := pio.Getenv("BENCHSERVE_MEMPROFILE"); path != "" {
		defer func() {
			if f, err := os.Create(path); err == nil {
				pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}()
	}
	if len(args) > 0 {
		if c, ok := lookupCommand(args[0]); ok {
			return c.run(ctx, args[1:], pio)
		}
		// The benchmark takes no positional argument: a first word that is
		// not a flag is a mistyped command, better named as one than as
		// argparse's "unrecognized arguments".
		if !strings.HasPrefix(args[0], "-") {
			return exitCode(&exit.Error{Code: exit.Usage, Msg: unknownCommand(args[0])}, pio.Stderr)
		}
	}
	cfg, given, err := parse(args, pio.columns())
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	// The address is taken before anything else starts: a bad one is the
	// first thing said.
	observer, stopMetrics, err := serveMetrics(cfg, pio, prog)
	if err != nil {
		return exitCode(err, pio.Stderr)
	}
	defer stopMetrics()
	stop, err := setUp(cfg, given, pio, prog)
	if err != nil {
		return exitCode(err, pio.Stderr)
	}
	defer stop()
	interrupt, cut := interrupts(ctx, pio)
	start := time.Now()
	_, err = bench.Run(ctx, cfg, bench.Env{
		Stdout:    pio.Stdout,
		Stderr:    pio.Stderr,
		Getenv:    pio.Getenv,
		Receive:   pio.Getenv(receiveEnv),
		Namespace: Namespace,
		Progress:  pio.StderrIsTerminal && !cfg.DisableTqdm,
		Interrupt: interrupt,
		Cut:       cut,
		Observer:  observer,
	})
	// A first --sim run leaves a file the user did not name: say where.
	if cfg.Sim && lineWritten(err) {
		if name := simResultFile(cfg, start); name != "" {
			fmt.Fprintf(pio.Stdout, "The result line was appended to %s (--output-file names another file).\n", name)
		}
	}
	return exitCode(err, pio.Stderr)
}

// receiveEnv chooses the receiver of plain-HTTP responses (bench.Env's
// Receive), to compare the event loop with Go's poller
// (docs/performance.md).
const receiveEnv = "BENCHSERVE_RECEIVE"

// setUp does what a run needs after its flags parse: --sim's defaults, the
// checks of flags that would have no effect (their notes printed under
// name), and the in-process simulator, which stop ends.
func setUp(cfg *bench.Config, given map[string]bool, pio IO, name string) (stop func(), err error) {
	stop = func() {}
	if err := http1.CheckReceive(pio.Getenv(receiveEnv)); err != nil {
		return stop, &exit.Error{Code: exit.Usage, Msg: receiveEnv + ": " + err.Error()}
	}
	if err := settlePlan(cfg, given); err != nil {
		return stop, err
	}
	var notes []string
	if cfg.Sim {
		if notes, err = simDefaults(cfg, given); err != nil {
			return stop, err
		}
	}
	notes = append(notes, checkGiven(cfg, given, pio.Getenv)...)
	if d := cfg.Duration; d != nil && *d > bench.SoakAfter.Seconds() && !cfg.Soak {
		notes = append(notes, "--duration over 1800 s: a soak, as with --soak (no record is kept in memory; the percentiles come from sketches within 1%)")
	}
	for _, n := range notes {
		fmt.Fprintf(pio.Stderr, "%s: note: %s\n", name, n)
	}
	if cfg.Sim {
		return startSim(cfg, pio)
	}
	return stop, nil
}

// interrupts turns SIGINT and SIGTERM into the run's cues. The first
// closes stop: the run sends nothing more and what is in flight gets the
// grace period. The second closes cut: what is still in flight is
// cancelled, and the result covers what finished. The third exits at once,
// writing nothing more. A burst of signals (coreutils timeout signals the
// child and then its process group) counts as one. Every result line
// already written is on disk: each is fsynced when it is appended.
func interrupts(ctx context.Context, pio IO) (stop, cut <-chan struct{}) {
	stopc, cutc := make(chan struct{}), make(chan struct{})
	if pio.Signals == nil {
		return stopc, cutc
	}
	go func() {
		var n signalCount
		for {
			select {
			case <-pio.Signals:
			case <-ctx.Done():
				return
			}
			k, counted := n.add(time.Now())
			if !counted {
				continue
			}
			switch k {
			case 1:
				close(stopc)
			case 2:
				fmt.Fprintln(pio.Stderr, "benchserve: interrupted again: cancelling what is in flight; the result covers what finished (a third interrupt exits at once)")
				close(cutc)
			default:
				fmt.Fprintln(pio.Stderr, "benchserve: interrupted a third time: exiting now")
				if pio.Exit != nil {
					pio.Exit(exit.Interrupted)
				}
				return
			}
		}
	}()
	return stopc, cutc
}

// signalsHelp is what --help says of signals.
const signalsHelp = "Ctrl-C or SIGTERM stops sending and writes the result for what finished (requests in flight get 5 s); " +
	"a second cancels those in flight and still writes it; a third exits at once; signals within a second count as one."

// burstWindow is how close signals must come to count as one.
const burstWindow = time.Second

// signalCount counts a run's interrupts, a signal within burstWindow of
// the last one counted being part of it.
type signalCount struct {
	n    int
	last time.Time
}

// add counts a signal received at t; counted is false for one of a burst.
func (c *signalCount) add(t time.Time) (n int, counted bool) {
	if c.n > 0 && t.Sub(c.last) < burstWindow {
		return c.n, false
	}
	c.n++
	c.last = t
	return c.n, true
}

// parseOutcome prints help or a usage error; done reports that the command
// ends here with code.
func parseOutcome(err error, pio IO) (code int, done bool) {
	var help *HelpRequested
	var uerr *UsageError
	var ver *VersionRequested
	switch {
	case err == nil:
		return 0, false
	case errors.As(err, &help):
		fmt.Fprint(pio.Stdout, help.Text)
		return 0, true
	case errors.As(err, &ver):
		fmt.Fprintf(pio.Stdout, "%s %s\n", prog, version.String())
		return 0, true
	case errors.As(err, &uerr):
		// One line, where argparse prints its whole usage first: the
		// message names the flag, and --help is there for the rest.
		fmt.Fprintf(pio.Stderr, "%s: error: %s\n", prog, uerr.Msg)
		return exit.Usage, true
	}
	fmt.Fprintf(pio.Stderr, "%s: error: %v\n", prog, err)
	return exit.Usage, true
}

// exitCode maps a run's error to the exit code, printing its message.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return exit.OK
	}
	var ee *exit.Error
	if errors.As(err, &ee) {
		if ee.Msg != "" {
			fmt.Fprintf(stderr, "%s: error: %s\n", prog, ee.Msg)
		}
		return ee.Code
	}
	fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
	return exit.Failure
}
