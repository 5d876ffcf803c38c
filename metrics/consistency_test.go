package metrics

import "testing"

func TestConsistencyFigures(t *testing.T) {
	c := Consistency{Planned: 10, Compared: 8, Diverged: 3, FirstDiff: []int{7, 2, 30}}
	if c.Rate() != 3.0/8 {
		t.Errorf("rate %v", c.Rate())
	}
	if m, ok := c.FirstDiffMedian(); !ok || m != 7 {
		t.Errorf("median %v %v", m, ok)
	}
	c.FirstDiff = append(c.FirstDiff, 9)
	if m, _ := c.FirstDiffMedian(); m != 8 {
		t.Errorf("median of 4: %v", m)
	}
	if lo, ok := c.FirstDiffMin(); !ok || lo != 2 {
		t.Errorf("min %v", lo)
	}
	var none Consistency
	if _, ok := none.FirstDiffMedian(); ok || none.Rate() != 0 {
		t.Error("no probe: a median or a rate")
	}
	for _, c := range []struct {
		a, b []int
		at   int
		diff bool
	}{{[]int{1, 2, 3}, []int{1, 2, 3}, 3, false}, {[]int{1, 2, 3}, []int{1, 5, 3}, 1, true}, {[]int{1, 2}, []int{1, 2, 3}, 2, true}, {nil, []int{4}, 0, true}} {
		if at, diff := FirstDifference(c.a, c.b); at != c.at || diff != c.diff {
			t.Errorf("%v vs %v: %d %v", c.a, c.b, at, diff)
		}
	}
}
