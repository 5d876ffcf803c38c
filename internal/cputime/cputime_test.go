package cputime

import "testing"

// Work done shows in the CPU time.
func TestSelfGrows(t *testing.T) {
	before := Self()
	x := 0
	for i := range 50_000_000 {
		x ^= i
	}
	_ = x
	if after := Self(); after <= before {
		t.Errorf("CPU time %v after a busy loop, %v before", after, before)
	}
}
