// Command benchserve benchmarks LLM inference servers; it is a drop-in for
// python -m sglang.bench_serving.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"benchserve/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	fi, err := os.Stderr.Stat()
	tty := err == nil && fi.Mode()&os.ModeCharDevice != 0
	code := cli.Main(ctx, os.Args[1:], cli.IO{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, StderrIsTerminal: tty})
	stop()
	os.Exit(code)
}
