package dataset

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	var creation, exit, kernel, user syscall.Filetime
	h, err := syscall.GetCurrentProcess()
	if err != nil || syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	span := func(f syscall.Filetime) int64 { return (int64(f.HighDateTime)<<32 | int64(f.LowDateTime)) * 100 }
	return time.Duration(span(kernel) + span(user))
}
