// Command benchserve benchmarks LLM inference servers; it is a drop-in for
// python -m sglang.bench_serving.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"benchserve/app/cli"
)

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	fi, err := os.Stderr.Stat()
	tty := err == nil && fi.Mode()&os.ModeCharDevice != 0
	ctx, cancel := context.WithCancel(context.Background())
	code := cli.Main(ctx, os.Args[1:], cli.IO{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		StderrIsTerminal: tty, Signals: sigs, Exit: os.Exit,
	})
	cancel()
	os.Exit(code)
}
