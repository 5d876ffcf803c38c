package cli

import (
	"fmt"

	"benchserve/bench"
	"benchserve/internal/exit"
	"benchserve/livemetrics"
)

// serveMetrics starts --metrics-addr's server, the run's Observer (nil
// without the flag), before anything else starts. stop shuts it down:
// call it once the result is printed. An address it cannot listen on is
// a usage error.
func serveMetrics(cfg *bench.Config, pio IO, name string) (obs bench.Observer, stop func(), err error) {
	stop = func() {}
	if cfg.MetricsAddr == nil {
		return nil, stop, nil
	}
	addr := *cfg.MetricsAddr
	srv, err := livemetrics.Listen(addr)
	if err != nil {
		return nil, stop, &exit.Error{Code: exit.Usage, Msg: fmt.Sprintf("--metrics-addr %s: cannot serve there: %v", addr, err)}
	}
	fmt.Fprintf(pio.Stderr, "%s: note: serving client metrics at %s (run_id %s) until the result is printed\n", name, srv.URL(), srv.RunID())
	return srv, func() {
		if pio.beforeMetricsClose != nil {
			pio.beforeMetricsClose(srv.URL())
		}
		srv.Close()
	}, nil
}
