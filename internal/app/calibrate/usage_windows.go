package calibrate

import (
	"os"
	"syscall"

	"benchserve/internal/cputime"
)

// usageOf reads a finished process's CPU times. Windows gives no peak
// resident memory here: it reads 0, printed as such.
func usageOf(ps *os.ProcessState) usage {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return usage{}
	}
	return usage{cpuSeconds: (cputime.Span(ru.KernelTime) + cputime.Span(ru.UserTime)).Seconds()}
}

// hardFileLimit: Windows has no open-file limit of this kind.
func hardFileLimit() (uint64, bool) { return 0, false }
