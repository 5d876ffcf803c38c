//go:build unix

package cputime

import (
	"time"

	"golang.org/x/sys/unix"
)

// Self is the process's user plus system CPU time so far (0 if unknown).
func Self() time.Duration {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
