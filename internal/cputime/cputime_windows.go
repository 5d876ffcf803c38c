package cputime

import (
	"syscall"
	"time"
)

// Self is the process's user plus system CPU time so far (0 if unknown).
func Self() time.Duration {
	var creation, exit, kernel, user syscall.Filetime
	h, err := syscall.GetCurrentProcess()
	if err != nil || syscall.GetProcessTimes(h, &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	return Span(kernel) + Span(user)
}

// Span is a FILETIME that holds a duration (FILETIME counts 100 ns; its
// Nanoseconds method is for dates, from 1601).
func Span(f syscall.Filetime) time.Duration {
	return time.Duration(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
}
