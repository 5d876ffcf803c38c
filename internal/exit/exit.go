// Package exit holds the process's exit codes and the error that carries
// one, shared by every command (the main run, sweep, one-batch, the tools)
// so that none imports another's stages for them. They are documented in
// docs/compat.md.
package exit

import "time"

// The exit codes.
const (
	OK        = 0
	Failure   = 1 // the run could not start or was aborted (server not ready, warmup failed...)
	Usage     = 2 // bad flags or flag combinations
	AllFailed = 3 // the run finished but no request succeeded
	// Thresholds: the run finished and a --threshold failed.
	Thresholds = 4
	// Interrupted: the run was stopped by SIGINT or SIGTERM (the result, if
	// it had started, covers what completed).
	Interrupted = 130
)

// Grace is how long requests in flight may finish after an interrupt,
// unless a command is told otherwise.
const Grace = 5 * time.Second

// Error ends a command with Code. Msg, when not empty, is printed by main as
// "benchserve: error: <Msg>"; an empty Msg means the command already printed
// its own lines (the reference tool's, for the main run).
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
