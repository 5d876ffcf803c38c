package bench

import (
	"fmt"
	"testing"
	"time"

	"benchserve/metrics"
	"benchserve/serverctl"
)

// The fleet's view sums the servers' reads tick by tick, leaves out a
// tick one server failed to read, and ends with the "after" reads; the
// counters' deltas over the run are then the sums of each server's.
func TestSumByTick(t *testing.T) {
	t0 := time.Unix(1000, 0)
	scrape := func(tick int, gen float64, running float64) serverctl.Scrape {
		fams, err := serverctl.ParseMetrics([]byte(fmt.Sprintf(
			"# TYPE sglang:generation_tokens_total counter\nsglang:generation_tokens_total %g\n# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs %g\n", gen, running)))
		if err != nil {
			t.Fatal(err)
		}
		return serverctl.Scrape{At: t0.Add(time.Duration(tick) * time.Second), Fams: fams, Tick: tick}
	}
	a := []serverctl.Scrape{scrape(0, 100, 0), scrape(1, 110, 2), scrape(2, 130, 4), scrape(serverctl.AfterTick, 150, 0)}
	b := []serverctl.Scrape{scrape(0, 5, 0), scrape(2, 25, 6), scrape(serverctl.AfterTick, 45, 0)} // its tick 1 failed
	snaps := sumByTick([][]serverctl.Scrape{a, b})
	if len(snaps) != 3 {
		t.Fatalf("%d fleet reads, want 3 (ticks 0, 2 and after)", len(snaps))
	}
	wantGen := []float64{105, 155, 195}
	for i, s := range snaps {
		if g := s.Samples["sglang:generation_tokens_total"].Value; g != wantGen[i] {
			t.Errorf("read %d: generated %v, want %v", i, g, wantGen[i])
		}
	}
	v := metrics.ServerSummary(snaps, 1)
	gen, _ := v.Get("sglang:generation_tokens_total")
	run, _ := v.Get("sglang:num_running_reqs")
	if gen.Delta != 90 || run.Max != 10 || run.Last != 0 {
		t.Errorf("fleet view: generated %v (want 50+40), running max %v (want 4+6), last %v", gen.Delta, run.Max, run.Last)
	}
}
