package bench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"benchserve/internal/py/pyjson"
	"benchserve/internal/version"
	"benchserve/metrics"
	"benchserve/record"
	"benchserve/serverctl"
	"benchserve/wire/http1"
)

// startServerMetrics starts reading the server's /metrics for the
// measured run, unless --no-server-metrics; nil, with why, when the
// server exposes none (a note, not a warning: many servers do not).
func (r *runner) startServerMetrics(ctx context.Context) (*serverctl.Scraper, string) {
	cfg := r.Config
	if cfg.NoServerMetrics {
		return nil, "not read (--no-server-metrics)"
	}
	u := r.Server.Base + "/metrics"
	if cfg.ServerMetricsURL != nil {
		u = *cfg.ServerMetricsURL
	}
	every := time.Duration(cfg.ServerMetricsInterval * float64(time.Second))
	sc, why := r.Server.StartScraper(ctx, u, every, r.Env.Stderr)
	if sc == nil {
		return nil, why
	}
	if cfg.ServerMetricsURL == nil {
		r.startFleet(ctx, every)
	}
	if r.traffic.soak {
		sc.Keep(soakScrapes)
		for _, f := range r.fleet {
			f.Keep(soakScrapes)
		}
	}
	return sc, ""
}

// serverView ends the reads and summarizes them; the time series go to
// --server-metrics-file.
func (r *runner) serverView(ctx context.Context, sc *serverctl.Scraper, start time.Time) *metrics.ServerView {
	if sc == nil {
		return nil
	}
	scrapes, failed := sc.Stop(ctx)
	snaps := serverctl.Snapshots(scrapes)
	if r.fleet != nil {
		snaps, failed = r.fleetSnapshots(ctx, scrapes, failed)
	}
	if f := r.Config.ServerMetricsFile; f != nil {
		if err := writeServerSeries(*f, snaps, start); err != nil {
			fmt.Fprintf(r.Env.Stderr, "benchserve: warning: --server-metrics-file: %v\n", err)
		}
	}
	v := metrics.ServerSummary(snaps, failed)
	return &v
}

// writeServerSeries appends one line per read: "t" (seconds after the
// run's start; the first read is just before it) and each gauge's and
// counter's value by key.
func writeServerSeries(path string, snaps []metrics.Snapshot, start time.Time) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	var b []byte
	for _, s := range snaps {
		o := &pyjson.Object{}
		o.Set("t", pyjson.Float(s.At.Sub(start).Seconds()))
		for _, k := range sortedKeys(s.Samples) {
			if x := s.Samples[k]; x.Kind == metrics.Gauge || x.Kind == metrics.Counter {
				o.Set(k, pyjson.Float(x.Value))
			}
		}
		b = append(o.Append(b), '\n')
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func sortedKeys(m map[string]metrics.Sample) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ignoredContinuousUsage is the note for --continuous-usage-stats
// against a server that ignores it: replies of several chunks came, but
// none with the usage in every chunk, so there is no per-token ITL. ""
// otherwise.
func ignoredContinuousUsage(cfg *Config, perToken *metrics.PerTokenITL, recs []record.Record) string {
	if !cfg.ContinuousUsageStats || perToken != nil {
		return ""
	}
	for i := range recs {
		if recs[i].Success && recs[i].Gaps.Len() > 0 {
			return "benchserve: note: --continuous-usage-stats: the server sent no usage in the chunks before the last (it ignores stream_options.continuous_usage_stats), so there is no per-token ITL"
		}
	}
	return ""
}

// provenance is what defines the server and the client of a run: the
// server's /v1/models, /get_model_info, /version and /server_info as they
// answered before the run, its engine's *_info gauges, the cache flushes
// done, and the client's version and host.
func (r *runner) provenance(ctx context.Context, flushed int, first *serverctl.Scraper) *pyjson.Object {
	o := &pyjson.Object{}
	srv := &pyjson.Object{}
	for _, path := range []string{"/v1/models", "/get_model_info", "/version", "/server_info"} {
		if body, ok := r.Server.GetJSON(ctx, path); ok {
			srv.Set(path, body)
		} else if path == "/server_info" {
			// Older SGLang serves only /get_server_info.
			if body, ok := r.Server.GetJSON(ctx, "/get_server_info"); ok {
				srv.Set("/get_server_info", body)
			}
		}
	}
	if info := first.InfoLabels(); info.Len() > 0 {
		srv.Set("info_metrics", info.Bytes())
	}
	srv.Set("cache_flushes", pyjson.Int(flushed))
	o.Set("server", srv.Bytes())
	cl := &pyjson.Object{}
	cl.Set("version", pyjson.String(version.String()))
	host, _ := os.Hostname()
	cl.Set("host", pyjson.String(host))
	cl.Set("os", pyjson.String(runtime.GOOS+"/"+runtime.GOARCH))
	cl.Set("cores", pyjson.Int(runtime.NumCPU()))
	cl.Set("gomaxprocs", pyjson.Int(runtime.GOMAXPROCS(0)))
	if la, ok := loadAverage(); ok {
		cl.Set("load_average", la)
	}
	// The receiver of plain-HTTP responses (https reads through Go's
	// poller whatever it says), and why not io_uring when it was wanted.
	name, why := http1.Receiver(r.Env.Receive)
	cl.Set("receiver", pyjson.String(name))
	if why != "" {
		cl.Set("receiver_note", pyjson.String(why))
	}
	o.Set("client", cl.Bytes())
	return o
}

// loadAverage is /proc/loadavg's 1, 5 and 15 minute figures.
func loadAverage() ([]byte, bool) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil, false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return nil, false
	}
	return []byte("[" + f[0] + ", " + f[1] + ", " + f[2] + "]"), true
}
