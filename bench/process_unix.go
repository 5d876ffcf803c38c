//go:build unix

package bench

import (
	"fmt"
	"io"

	"golang.org/x/sys/unix"
)

// raiseFileLimit lifts the soft open-files limit to 65535 (or the hard
// limit, if lower), as the reference does, so thousands of streams fit.
func raiseFileLimit(out io.Writer) {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return
	}
	const target = 65535
	if lim.Cur >= target {
		return
	}
	lim.Cur = min(target, lim.Max)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		fmt.Fprintf(out, "Fail to set RLIMIT_NOFILE: %v\n", err)
	}
}
