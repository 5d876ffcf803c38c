package cli

import (
	"context"
	"fmt"
	"net"
	"strconv"

	"benchserve/bench"
	"benchserve/sim"
)

// SimMain runs "benchserve sim": the simulator in the foreground until ctx
// ends (Ctrl-C).
func SimMain(ctx context.Context, args []string, pio IO) int {
	cfg, err := ParseSim(args)
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	srv, err := sim.New(*cfg)
	if err != nil {
		return exitCode(&bench.ExitError{Code: bench.ExitUsage, Msg: err.Error()}, pio.Stderr)
	}
	defer srv.Close()
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return exitCode(&bench.ExitError{Code: bench.ExitFailure, Msg: fmt.Sprintf("--host/--port: cannot listen on %s: %v", addr, err)}, pio.Stderr)
	}
	if err := srv.Start(ln); err != nil {
		return exitCode(&bench.ExitError{Code: bench.ExitFailure, Msg: err.Error()}, pio.Stderr)
	}
	fmt.Fprintf(pio.Stdout, "benchserve sim: serving %q (preset %s, tokenizer %s) at %s; Ctrl-C stops it\n", cfg.Model, cfg.Preset, cfg.Tokenizer, srv.URL())
	select {
	case <-ctx.Done():
	case <-pio.Signals:
	}
	return bench.ExitOK
}

// demo is what --sim runs for each of these flags the user did not give.
var demo = struct {
	dataset           string
	prompts, in, outp int
}{"random-ids", 200, 256, 128}

// simDefaults refuses a target besides --sim and gives cfg the demo's
// settings for the flags the user did not give.
func simDefaults(cfg *bench.Config, given map[string]bool) error {
	for _, f := range []string{"--base-url", "--host", "--port"} {
		if given[f] {
			return &bench.ExitError{Code: bench.ExitUsage, Msg: "--sim starts its own server: drop " + f}
		}
	}
	if !given["--dataset-name"] {
		cfg.DatasetName = demo.dataset
	}
	if !given["--num-prompts"] {
		cfg.NumPrompts = demo.prompts
	}
	if !given["--random-input-len"] {
		cfg.RandomInputLen = demo.in
	}
	if !given["--random-output-len"] {
		cfg.RandomOutputLen = demo.outp
	}
	return nil
}

// startSim starts the simulator for --sim and points cfg at it. The
// returned stop closes it.
func startSim(cfg *bench.Config, pio IO) (stop func(), err error) {
	sc, err := sim.Preset(cfg.SimPreset)
	if err != nil {
		return nil, &bench.ExitError{Code: bench.ExitUsage, Msg: "--sim-preset: " + err.Error()}
	}
	if cfg.Model != nil {
		sc.Model = *cfg.Model
	}
	if cfg.Tokenizer != nil {
		sc.Tokenizer = *cfg.Tokenizer
	}
	srv, err := sim.New(sc)
	if err != nil {
		return nil, &bench.ExitError{Code: bench.ExitUsage, Msg: "--sim: " + err.Error()}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, &bench.ExitError{Code: bench.ExitFailure, Msg: "--sim: " + err.Error()}
	}
	if err := srv.Start(ln); err != nil {
		srv.Close()
		return nil, &bench.ExitError{Code: bench.ExitFailure, Msg: "--sim: " + err.Error()}
	}
	u := srv.URL()
	cfg.BaseURL = &u
	fmt.Fprintf(pio.Stdout, "Target: the built-in simulator (preset %s, model %q) at %s. Its timings come from an engine model, not a real server.\n", sc.Preset, sc.Model, u)
	return func() { srv.Close() }, nil
}
