package calibrate

import (
	"math"
	"os"
	"syscall"

	"benchserve/internal/cputime"
)

// usageOf reads a finished process's CPU times. Windows gives no peak
// resident memory here: it reads NaN, printed as "-".
func usageOf(ps *os.ProcessState) usage {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return usage{peakRSSMB: math.NaN()}
	}
	return usage{cpuSeconds: (cputime.Span(ru.KernelTime) + cputime.Span(ru.UserTime)).Seconds(), peakRSSMB: math.NaN()}
}

// hardFileLimit: Windows has no open-file limit of this kind.
func hardFileLimit() (uint64, bool) { return 0, false }
