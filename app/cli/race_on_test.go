//go:build race

package cli

// raceOn: the race detector slows every memory access, and with it the
// client's send path (about threefold, measured on turn lag).
const raceOn = true
