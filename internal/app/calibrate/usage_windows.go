package calibrate

import (
	"os"
	"syscall"
)

// usageOf reads a finished process's CPU times. Windows gives no peak
// resident memory here: it reads 0, printed as such.
func usageOf(ps *os.ProcessState) usage {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return usage{}
	}
	return usage{cpuSeconds: (span(ru.KernelTime) + span(ru.UserTime)) / 1e9}
}

// span is a FILETIME that holds a duration, in ns (FILETIME counts 100 ns;
// its Nanoseconds method is for dates, from 1601).
func span(f syscall.Filetime) float64 {
	return float64(int64(f.HighDateTime)<<32|int64(f.LowDateTime)) * 100
}

// hardFileLimit: Windows has no open-file limit of this kind.
func hardFileLimit() (uint64, bool) { return 0, false }
