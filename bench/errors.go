package bench

import "benchserve/internal/exit"

// The exit codes and their error, under the names bench's callers use
// (internal/exit defines them for every command).
const (
	ExitOK          = exit.OK
	ExitFailure     = exit.Failure
	ExitUsage       = exit.Usage
	ExitAllFailed   = exit.AllFailed
	ExitThresholds  = exit.Thresholds
	ExitInterrupted = exit.Interrupted
)

// ExitError is exit.Error.
type ExitError = exit.Error

func usage(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Msg: sprintf(format, a...)}
}

func failure(format string, a ...any) error {
	return &ExitError{Code: ExitFailure, Msg: sprintf(format, a...)}
}
