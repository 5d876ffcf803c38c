package hist

import (
	"math/rand/v2"
	"testing"
	"time"
)

// Counting through a Few and adding it gives the H that counting directly
// gives, bucket for bucket, with the same count and max.
func TestFewMatchesH(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var direct, via H
	var f Few
	for round := range 50 {
		f.Reset()
		for range rng.IntN(40) {
			d := time.Duration(rng.Int64N(int64(50 * time.Millisecond)))
			if round%7 == 0 {
				d = -d // counted as 0
			}
			direct.Add(d)
			f.Add(d)
		}
		via.AddFew(&f)
	}
	if direct != via {
		t.Fatalf("through Few: count %d max %v, direct: count %d max %v", via.Count(), via.Max(), direct.Count(), direct.Max())
	}
	if via.Count() == 0 {
		t.Fatal("nothing was counted")
	}
}
