package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"benchserve/bench"
)

// IO is the process around a command, injected so that the whole command
// line can be run in-process by tests.
type IO struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// StderrIsTerminal turns the progress bar on (unless --disable-tqdm).
	StderrIsTerminal bool
}

// Main runs benchserve with args (without the program name) and returns
// the process exit code.
func Main(ctx context.Context, args []string, pio IO) int {
	if pio.Getenv == nil {
		pio.Getenv = os.Getenv
	}
	cfg, err := Parse(args)
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	_, err = bench.Run(ctx, cfg, bench.Env{
		Stdout:   pio.Stdout,
		Stderr:   pio.Stderr,
		Getenv:   pio.Getenv,
		Args:     Namespace(cfg),
		Progress: pio.StderrIsTerminal && !cfg.DisableTqdm,
	})
	return exitCode(err, pio.Stderr)
}

// parseOutcome prints help or a usage error; done reports that the command
// ends here with code.
func parseOutcome(err error, pio IO) (code int, done bool) {
	var help *HelpRequested
	var uerr *UsageError
	switch {
	case err == nil:
		return 0, false
	case errors.As(err, &help):
		fmt.Fprint(pio.Stdout, help.Text)
		return 0, true
	case errors.As(err, &uerr):
		// One line, where argparse prints its whole usage first: the
		// message names the flag, and --help is there for the rest.
		fmt.Fprintf(pio.Stderr, "%s: error: %s\n", prog, uerr.Msg)
		return bench.ExitUsage, true
	}
	fmt.Fprintf(pio.Stderr, "%s: error: %v\n", prog, err)
	return bench.ExitUsage, true
}

// exitCode maps a run's error to the exit code, printing its message.
func exitCode(err error, stderr io.Writer) int {
	if err == nil {
		return bench.ExitOK
	}
	var ee *bench.ExitError
	if errors.As(err, &ee) {
		if ee.Msg != "" {
			fmt.Fprintf(stderr, "%s: error: %s\n", prog, ee.Msg)
		}
		return ee.Code
	}
	fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
	return bench.ExitFailure
}
