//go:build linux || darwin

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminalColumns is the width of the terminal f is, or 0.
func terminalColumns(f *os.File) int {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
