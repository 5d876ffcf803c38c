package bench

import (
	"context"
	"fmt"
	"sort"
	"time"

	"benchserve/metrics"
	"benchserve/serverctl"
)

// startFleet starts reading the /metrics of every --base-url after the
// first, so that the server view is the fleet's: each series summed over
// the servers. When one of them exposes none, no sum would be whole: the
// view stays the first server's, and a warning says so.
func (r *runner) startFleet(ctx context.Context, every time.Duration) {
	if len(r.Servers) <= 1 || r.ab != nil { // A/B: side A's view only
		return
	}
	var fleet []*serverctl.Scraper
	for _, s := range r.Servers[1:] {
		sc, why := s.StartScraper(ctx, s.Base+"/metrics", every, r.Env.Stderr)
		if sc == nil {
			for _, f := range fleet {
				f.Stop(ctx)
			}
			fmt.Fprintf(r.Env.Stderr, "benchserve: warning: --base-url %s: server metrics %s; the server view is the first URL's (%s) alone\n",
				serverctl.Redact(s.Base), why, serverctl.Redact(r.Server.Base))
			return
		}
		fleet = append(fleet, sc)
	}
	r.fleet = fleet
}

// fleetSnapshots stops the fleet's reads and sums them with the first
// server's (first, firstFailed) tick by tick: a tick counts when every
// server's read of it succeeded. It returns the sums and the failed
// reads of all the servers.
func (r *runner) fleetSnapshots(ctx context.Context, first []serverctl.Scrape, firstFailed int) ([]metrics.Snapshot, int) {
	per := [][]serverctl.Scrape{first}
	failed := firstFailed
	for _, sc := range r.fleet {
		s, f := sc.Stop(ctx)
		per = append(per, s)
		failed += f
	}
	return sumByTick(per), failed
}

// sumByTick sums the servers' scrapes (per[server]) of each tick they
// all read, in tick order with the "after" read last. The series' keys
// are made over every server's scrapes, so that a key is the same in all.
func sumByTick(per [][]serverctl.Scrape) []metrics.Snapshot {
	var all []serverctl.Scrape
	for _, s := range per {
		all = append(all, s...)
	}
	snaps := serverctl.Snapshots(all)
	byTick := map[int][]metrics.Snapshot{}
	off := 0
	for _, s := range per {
		for j := range s {
			byTick[s[j].Tick] = append(byTick[s[j].Tick], snaps[off+j])
		}
		off += len(s)
	}
	var ticks []int
	for t, ss := range byTick {
		if len(ss) == len(per) {
			ticks = append(ticks, t)
		}
	}
	order := func(t int) int {
		if t == serverctl.AfterTick {
			return int(^uint(0) >> 1)
		}
		return t
	}
	sort.Slice(ticks, func(i, j int) bool { return order(ticks[i]) < order(ticks[j]) })
	out := make([]metrics.Snapshot, len(ticks))
	for i, t := range ticks {
		out[i] = metrics.SumSnapshots(byTick[t])
	}
	return out
}
