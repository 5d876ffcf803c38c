package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"benchserve/bench"
	"benchserve/internal/exit"
	"benchserve/sim"
)

// SimMain runs "benchserve sim": the simulator in the foreground until ctx
// ends (Ctrl-C).
func SimMain(ctx context.Context, args []string, pio IO) int {
	cfg, err := parseSim(args, pio.columns())
	if code, done := parseOutcome(err, pio); done {
		return code
	}
	cfg.Getenv = pio.Getenv
	srv, err := sim.New(*cfg)
	if err != nil {
		return exitCode(&exit.Error{Code: exit.Usage, Msg: err.Error()}, pio.Stderr)
	}
	defer srv.Close()
	addr := net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return exitCode(&exit.Error{Code: exit.Failure, Msg: fmt.Sprintf("--host/--port: cannot listen on %s: %v", addr, err)}, pio.Stderr)
	}
	if err := srv.Start(ln); err != nil {
		return exitCode(&exit.Error{Code: exit.Failure, Msg: err.Error()}, pio.Stderr)
	}
	fmt.Fprintf(pio.Stdout, "benchserve sim: serving %q (preset %s, tokenizer %s) at %s; Ctrl-C stops it\n", cfg.Model, cfg.Preset, cfg.Tokenizer, srv.URL())
	if cfg.TLSSelfSigned != "" {
		fmt.Fprintf(pio.Stdout, "benchserve sim: its self-signed certificate is in %s (benchserve --cacert %s)\n", cfg.TLSSelfSigned, cfg.TLSSelfSigned)
	}
	select {
	case <-ctx.Done():
	case <-pio.Signals:
	}
	return exit.OK
}

// demo is what --sim alone runs: a short run on data that needs no
// network.
var demo = struct {
	dataset           string
	prompts, in, outp int
}{"random-ids", 200, 256, 128}

// demoFlags is the demo as flags, for the line that says what it set.
var demoFlags = fmt.Sprintf("--dataset-name %s --num-prompts %d --random-input-len %d --random-output-len %d",
	demo.dataset, demo.prompts, demo.in, demo.outp)

// simDefaults refuses a target besides --sim. When --sim is the whole
// command line (with --sim-preset at most, which only picks the engine) it
// gives cfg the demo's settings; any other flag means the user is
// rehearsing a command of their own, which keeps the main command's
// defaults. notes say what --sim changed, or what a flag given with it
// will need.
func simDefaults(cfg *bench.Config, given map[string]bool) (notes []string, err error) {
	for _, f := range []string{"--base-url", "--host", "--port"} {
		if given[f] {
			return nil, &exit.Error{Code: exit.Usage, Msg: "--sim starts its own server: drop " + f}
		}
	}
	if simAlone(given) {
		cfg.DatasetName, cfg.NumPrompts = demo.dataset, demo.prompts
		cfg.RandomInputLen, cfg.RandomOutputLen = demo.in, demo.outp
		return []string{"--sim alone runs a short demo: " + demoFlags + " (with any other flag, the main command's defaults apply)"}, nil
	}
	if what := datasetSpec(cfg).Downloads; what != "" && cfg.DatasetPath == "" && cfg.ReplayPlan == nil {
		name := "--dataset-name " + cfg.DatasetName
		if !given["--dataset-name"] {
			name += " (the default)"
		}
		notes = append(notes, fmt.Sprintf("--sim with %s downloads %s unless it is cached; offline, give --dataset-path with a local copy or use --dataset-name random-ids", name, what))
	}
	return notes, nil
}

// simAlone is whether the flags given are --sim and at most --sim-preset.
func simAlone(given map[string]bool) bool {
	for f := range given {
		if f != "--sim" && f != "--sim-preset" {
			return false
		}
	}
	return true
}

// simResultFile is the file a --sim run without --output-file appended
// its line to: the default name, dated when the run prepared, which is
// after start and (but for a setup that straddles midnight) on its day.
func simResultFile(cfg *bench.Config, start time.Time) string {
	if cfg.OutputFile != nil {
		return ""
	}
	for _, t := range []time.Time{start, time.Now()} {
		if name := bench.OutputFile(cfg, t); fileExists(name) {
			return name
		}
	}
	return ""
}

// lineWritten is whether a run that ended with err appended its result
// line and did not already say where (an interrupt's message does).
func lineWritten(err error) bool {
	var ee *exit.Error
	if err == nil {
		return true
	}
	return errors.As(err, &ee) && (ee.Code == exit.AllFailed || ee.Code == exit.Thresholds)
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// startSim starts the simulator for --sim and points cfg at it. The
// returned stop closes it.
func startSim(cfg *bench.Config, pio IO) (stop func(), err error) {
	sc, err := simConfig(cfg, pio)
	if err != nil {
		return nil, err
	}
	var certDir string
	if cfg.HTTP2 {
		// --http2 speaks h2 over TLS: the simulator serves a self-signed
		// certificate, which this run trusts unless told otherwise.
		if certDir, err = os.MkdirTemp("", "benchserve-sim-tls"); err != nil {
			return nil, &exit.Error{Code: exit.Failure, Msg: "--sim --http2: " + err.Error()}
		}
		sc.TLSSelfSigned = filepath.Join(certDir, "cert.pem")
		if cfg.CACert == nil && !cfg.Insecure {
			cfg.CACert = &sc.TLSSelfSigned
		}
	}
	srv, err := serveSim(sc)
	if err != nil {
		os.RemoveAll(certDir)
		return nil, err
	}
	u := srv.URL()
	cfg.BaseURL = &u
	fmt.Fprintf(pio.Stdout, "Target: the built-in simulator (preset %s, model %q) at %s. Its timings come from an engine model, not a real server.\n", sc.Preset, sc.Model, u)
	return func() { srv.Close(); os.RemoveAll(certDir) }, nil
}

// serveSim starts an in-process simulator of sc on a free loopback port.
func serveSim(sc sim.Config) (*sim.Server, error) {
	srv, err := sim.New(sc)
	if err != nil {
		return nil, &exit.Error{Code: exit.Usage, Msg: "--sim: " + err.Error()}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		srv.Close()
		return nil, &exit.Error{Code: exit.Failure, Msg: "--sim: " + err.Error()}
	}
	if err := srv.Start(ln); err != nil {
		srv.Close()
		return nil, &exit.Error{Code: exit.Failure, Msg: "--sim: " + err.Error()}
	}
	return srv, nil
}

// simConfig is the in-process simulator's configuration for a run's
// flags: --sim-preset, with its --model and --tokenizer.
func simConfig(cfg *bench.Config, pio IO) (sim.Config, error) {
	sc, err := sim.Preset(cfg.SimPreset)
	if err != nil {
		return sc, &exit.Error{Code: exit.Usage, Msg: "--sim-preset: " + err.Error()}
	}
	if cfg.Model != nil {
		sc.Model = *cfg.Model
	}
	if cfg.Tokenizer != nil {
		sc.Tokenizer = *cfg.Tokenizer
	}
	sc.Getenv = pio.Getenv
	return sc, nil
}
