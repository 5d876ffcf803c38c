//go:build unix

package calibrate

import (
	"math"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// usageOf reads a finished process's rusage. ru_maxrss is in KiB on
// Linux and in bytes on macOS.
func usageOf(ps *os.ProcessState) usage {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return usage{peakRSSMB: math.NaN()}
	}
	rss := float64(ru.Maxrss) / 1024
	if runtime.GOOS == "darwin" {
		rss /= 1024
	}
	return usage{cpuSeconds: float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9, peakRSSMB: rss}
}

// hardFileLimit is the hard RLIMIT_NOFILE.
func hardFileLimit() (uint64, bool) {
	var l unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return l.Max, true
}
