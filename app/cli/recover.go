package cli

import (
	"fmt"

	"benchserve/internal/exit"
)

// tracebackEnv, when set, lets a panic through with Go's stack trace.
const tracebackEnv = "BENCHSERVE_TRACEBACK"

// lastResort turns a panic on the command's goroutine into one line and
// exit code 1: a user should see what went wrong, not a stack trace. It
// must be deferred directly by Main, as recover only works there.
func lastResort(pio IO, code *int) {
	if pio.Getenv(tracebackEnv) != "" {
		return
	}
	r := recover()
	if r == nil {
		return
	}
	fmt.Fprintf(pio.Stderr, "%s: internal error: %v; set %s=1 for the stack\n", prog, r, tracebackEnv)
	*code = exit.Failure
}
