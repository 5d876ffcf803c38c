package bench

import (
	"context"
	"fmt"
	"strings"

	"benchserve/backend"
	"benchserve/internal/hist"
	"benchserve/record"
	"benchserve/serverctl"
)

// The --url-strategy values: how a run of several --base-url spreads its
// requests.
const (
	URLRoundRobin = "round-robin"
	URLRandom     = "random"
)

// URLStrategies are the --url-strategy choices, the default first.
var URLStrategies = []string{URLRoundRobin, URLRandom}

// splitBaseURL is --base-url's items: the flag given several times joins
// its values with commas, and one value may list several. An empty item
// is refused, naming the flag.
func splitBaseURL(v string) ([]string, error) {
	items := strings.Split(v, ",")
	for i, it := range items {
		items[i] = strings.TrimSpace(it)
		if items[i] == "" {
			return nil, usage("--base-url: item %d of %d is empty (give one URL per --base-url, or a comma-separated list with no empty item)", i+1, len(items))
		}
	}
	return items, nil
}

// baseURLs is the run's servers: --base-url's items (replicas of one
// deployment), else the one http://host:port.
func baseURLs(cfg *Config, port int) []string {
	if cfg.BaseURL == nil || !strings.Contains(*cfg.BaseURL, ",") {
		return []string{baseURL(cfg, port)}
	}
	items, _ := splitBaseURL(*cfg.BaseURL) // checkTarget refused a bad list
	for i, it := range items {
		items[i] = strings.TrimRight(it, "/")
	}
	return items
}

// urlIndex is which of k URLs the request at plan position i goes to.
// round-robin: i mod k, so that a conversation (one position) stays on
// one server and an even plan splits exactly; random: a draw from the
// seed and the position alone, the same in every shard and on every run.
func urlIndex(strategy string, seed uint64, i, k int) int {
	if k <= 1 {
		return 0
	}
	if strategy == URLRandom {
		h := splitmix(seed ^ splitmix(uint64(i)))
		return int((h >> 32) * uint64(k) >> 32)
	}
	return i % k
}

// splitmix is SplitMix64's output function: a well-mixed 64-bit hash.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// urlOf is the index of the client plan position i sends through.
func (r *runner) urlOf(i int) int {
	if r.ab != nil {
		return ABSide(uint64(r.Config.Seed), i)
	}
	return urlIndex(r.Config.URLStrategy, uint64(r.Config.Seed), i, len(r.Clients))
}

// checkReplicas runs the first URL's checks against each other one: it
// must be ready, and serve the model the first one listed when that was
// detected. A URL that fails ends the run before it starts, named.
func (p *Plan) checkReplicas(ctx context.Context, model string, detected bool) error {
	cfg, out := p.Config, p.Env.Stdout
	spec, _ := backend.Lookup(cfg.Backend)
	for _, s := range p.Servers[1:] {
		if cfg.ReadyCheckTimeoutSec > 0 {
			if err := s.WaitReady(ctx, out, s.Base+spec.ReadyPath, cfg.ReadyCheckTimeoutSec); err != nil {
				return failure("--base-url %s: %v", serverctl.Redact(s.Base), err)
			}
		}
		if !detected {
			continue
		}
		m, err := s.FirstModel(ctx)
		switch {
		case err != nil:
			return failure("--base-url %s: /v1/models: %v", serverctl.Redact(s.Base), err)
		case m != model:
			return failure("--base-url %s serves model %q, not %q as %s does: the URLs must be replicas of one deployment (or give --model)",
				serverctl.Redact(s.Base), m, model, serverctl.Redact(p.Servers[0].Base))
		}
	}
	return nil
}

// clientOf is the client rec's request goes through.
func (r *runner) clientOf(rec *record.Record) *backend.Client {
	if rec.URL < len(r.Clients) {
		return r.Clients[rec.URL]
	}
	return r.Client
}

// clients is the run's clients: Clients, or Client for a plan made
// without them.
func (p *Plan) clients() []*backend.Client {
	if len(p.Clients) > 0 {
		return p.Clients
	}
	return []*backend.Client{p.Client}
}

// readDelays is every client's read delays together.
func (p *Plan) readDelays() hist.H {
	cs := p.clients()
	h := cs[0].ReadDelays()
	for _, c := range cs[1:] {
		d := c.ReadDelays()
		h.Merge(&d)
	}
	return h
}

// flush empties each server's prefix cache.
func (p *Plan) flush(ctx context.Context, style serverctl.Flush) error {
	cfg := p.Config
	if len(p.Servers) <= 1 {
		return p.Server.Flush(ctx, style, cfg.FlushCacheTimeout)
	}
	for _, s := range p.Servers {
		if err := s.Flush(ctx, style, cfg.FlushCacheTimeout); err != nil {
			return fmt.Errorf("--base-url %s: %w", serverctl.Redact(s.Base), err)
		}
	}
	return nil
}

// shownURLs is the run's URLs as the output names them (credentials
// redacted) when it has several; nil with one.
func (p *Plan) shownURLs() []string {
	if len(p.URLs) <= 1 {
		return nil
	}
	out := make([]string, len(p.URLs))
	for i, u := range p.URLs {
		out[i] = serverctl.Redact(u)
	}
	return out
}
