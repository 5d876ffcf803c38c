package bench

import "testing"

func TestABSide(t *testing.T) {
	for _, seed := range []uint64{0, 1, 42, 1 << 31} {
		first := [2]int{}
		for k := range 1000 {
			a, b := ABSide(seed, 2*k), ABSide(seed, 2*k+1)
			if a+b != 1 || a < 0 || a > 1 {
				t.Fatalf("seed %d pair %d: sides %d and %d, want one of each", seed, k, a, b)
			}
			if a != ABSide(seed, 2*k) {
				t.Fatalf("seed %d pair %d: not repeatable", seed, k)
			}
			first[a]++
		}
		// Which side goes first is a fair draw per pair.
		if first[0] < 430 || first[0] > 570 {
			t.Errorf("seed %d: A first in %d of 1000 pairs", seed, first[0])
		}
	}
	differ := 0
	for i := range 200 {
		if ABSide(1, i) != ABSide(2, i) {
			differ++
		}
	}
	if differ < 60 || differ > 140 {
		t.Errorf("seeds 1 and 2 send %d of 200 slots to different sides; want about half", differ)
	}
}
