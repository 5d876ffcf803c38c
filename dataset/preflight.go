package dataset

import (
	"fmt"
	"math"
	"strconv"
)

// preflightLens is randomLens's check of the range, for the input and the
// output lengths: numpy's randint(max(int(full*ratio), 1), full+1) needs
// int(full*ratio) <= full, so a ratio a little above 1 may pass.
func preflightLens(p Params) error {
	for _, l := range []struct {
		flag string
		full int
	}{{"--random-input-len", p.RandomInputLen}, {"--random-output-len", p.RandomOutputLen}} {
		if l.full <= 0 {
			continue
		}
		r := p.RandomRangeRatio
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("--random-range-ratio %v: not a finite number", r)
		}
		if low := math.Trunc(float64(l.full) * r); low > float64(l.full) {
			return fmt.Errorf("--random-range-ratio %s: the shortest length %.0f exceeds %s %d",
				strconv.FormatFloat(r, 'g', -1, 64), low, l.flag, l.full)
		}
	}
	return nil
}
