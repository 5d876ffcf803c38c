package page

import (
	"fmt"
	"strings"

	"benchserve/metrics"
)

// steadyParagraph states a run's steady-state window and its figures
// (docs/metrics.md, "Steady state").
func steadyParagraph(st *metrics.Steady) string {
	if !st.Found {
		return fmt.Sprintf(`<p class="steady">Steady state at concurrency ratio %s: no window (no request succeeded).</p>`, fmt2(st.Ratio))
	}
	return fmt.Sprintf(`<p class="steady">Steady state at concurrency ratio %s (shaded on the time series): %s s to %s s (%s s) with at least %d requests in flight (peak %d, average %s); %d completed in it, input %s tok/s, output %s tok/s (busiest second %s tokens); of the %d requests sent in it %d failed, TTFT p99 %s ms, E2E p99 %s ms.</p>`,
		fmt2(st.Ratio), fmt2(st.WindowStart), fmt2(st.WindowEnd), fmt2(st.Duration), st.Threshold, st.PeakConcurrency, fmt2(st.AverageConcurrency),
		st.Completed, fmt2(st.InputThroughput), fmt2(st.OutputThroughput), fmt2(st.PeakOutputThroughput), st.Started, st.Failed, fmt2(st.TTFT.P99), fmt2(st.E2E.P99))
}

// bandSteady shades the window on the charts over time.
func bandSteady(cs []Chart, st *metrics.Steady) {
	if !st.Found {
		return
	}
	for i := range cs {
		if strings.HasSuffix(cs[i].ID, "-throughput") || strings.HasSuffix(cs[i].ID, "-inflight") || strings.HasSuffix(cs[i].ID, "-failures") {
			cs[i].Band = []float64{st.WindowStart, st.WindowEnd}
		}
	}
}
