//go:build !linux

package testenv

// probeStamps: wire/netstamp asks for receive times on Linux only.
func probeStamps() (bool, string) {
	return false, "benchserve reads kernel receive times on Linux only"
}
