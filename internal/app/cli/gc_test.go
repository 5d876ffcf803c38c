package cli

import (
	"runtime/debug"
	"testing"
)

// A benchmark client runs its collector at clientGCPercent unless GOGC
// says otherwise.
func TestClientGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	clientGC(IO{Getenv: func(string) string { return "" }})
	if got := debug.SetGCPercent(100); got != clientGCPercent {
		t.Errorf("GC percent %d without GOGC, want %d", got, clientGCPercent)
	}
	clientGC(IO{Getenv: func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	}})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC set, want it left at 100", got)
	}
}
