package dataset

import (
	"time"

	"benchserve/internal/cputime"
)

// cpuTime is the process's user and system time so far; beside the wall
// time it shows how much of a load ran in parallel, and it is less
// disturbed by other work on a shared machine.
func cpuTime() time.Duration { return cputime.Self() }
