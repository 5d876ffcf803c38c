package bench

import "benchserve/internal/exit"

func usage(format string, a ...any) error {
	return &exit.Error{Code: exit.Usage, Msg: sprintf(format, a...)}
}

func failure(format string, a ...any) error {
	return &exit.Error{Code: exit.Failure, Msg: sprintf(format, a...)}
}
