//go:build !linux && !darwin

package cli

import "os"

// terminalColumns returns 0: here the help is laid out for $COLUMNS or 80.
func terminalColumns(*os.File) int { return 0 }
