package schedule

import (
	"context"
	"time"

	"benchserve/internal/clock"
)

// WaitUntil is the client's pacer: it releases a request at its planned
// time, or reports false as soon as ctx has ended (at once when it already
// has, even for a deadline in the past). It waits with clock.WaitUntil,
// the deadline wait the simulator uses too; the client's release policy
// is decided here, so that changing it leaves the simulator alone.
func WaitUntil(ctx context.Context, deadline time.Time) bool {
	return clock.WaitUntil(ctx, deadline)
}
