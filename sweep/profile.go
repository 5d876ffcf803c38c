package sweep

import (
	"context"
	"math"
)

// ceiling is the throughput-ceiling point of base: every request at once,
// under the user's cap if any. A run by --duration (or with
// --warmup-duration) has no "every request": it becomes a closed loop of
// as many requests in flight as the dataset has prompts, the number the
// ceiling by count sends at once, held for the duration. More than the
// server can batch only queues there, so the throughput is its ceiling
// either way.
func (r *runner) ceiling(ctx context.Context, base Point) (Point, error) {
	pt := base
	pt.Rate, pt.Phase = math.Inf(1), "ceiling"
	b := r.cfg.Base
	timed := b.Duration != nil && *b.Duration > 0 || b.WarmupDuration != nil && *b.WarmupDuration > 0
	if pt.Conc > 0 || !timed {
		return pt, nil
	}
	probe := pt
	probe.Conc = 1 // a load a timed run can be prepared at
	p, err := r.plan(ctx, probe)
	if err != nil {
		return pt, err
	}
	pt.Conc = max(1, len(p.Rows))
	r.table.CeilingLoop(pt.Conc)
	return pt, nil
}
