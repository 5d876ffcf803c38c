//go:build unix

package dataset

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuTime is the process's user and system time so far; beside the wall
// time it shows how much of a load ran in parallel, and it is less
// disturbed by other work on a shared machine.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
