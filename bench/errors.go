package bench

// Exit codes, documented in docs/compat.md.
const (
	ExitOK        = 0
	ExitFailure   = 1 // the run could not start or was aborted (server not ready, warmup failed...)
	ExitUsage     = 2 // bad flags or flag combinations
	ExitAllFailed = 3 // the run finished but no request succeeded
	// ExitThresholds: the run finished and a --threshold failed.
	ExitThresholds = 4
	// ExitInterrupted: the run was stopped by SIGINT or SIGTERM (the
	// result, if it had started, covers what completed).
	ExitInterrupted = 130
)

// ExitError ends a run with Code. Msg, when not empty, is printed by main as
// "benchserve: error: <Msg>"; an empty Msg means the run already printed the
// reference tool's own lines.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

func usage(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Msg: sprintf(format, a...)}
}

func failure(format string, a ...any) error {
	return &ExitError{Code: ExitFailure, Msg: sprintf(format, a...)}
}
