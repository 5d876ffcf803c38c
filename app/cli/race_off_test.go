//go:build !race

package cli

const raceOn = false
