package bench

import (
	"strings"
	"testing"
	"time"

	"benchserve/metrics"
	"benchserve/record"
)

// --continuous-usage-stats against a server that ignores it (replies of
// several chunks, none with a running count) gives one note; a server
// that honours it, a run of one-chunk replies, or a run without the flag
// gives none.
func TestIgnoredContinuousUsage(t *testing.T) {
	multi := record.Record{Success: true}
	multi.Gaps.Append(time.Millisecond)
	one := record.Record{Success: true}
	on, off := &Config{ContinuousUsageStats: true}, &Config{}
	if n := ignoredContinuousUsage(on, nil, []record.Record{one, multi}); !strings.Contains(n, "note: --continuous-usage-stats: the server sent no usage in the chunks before the last") {
		t.Errorf("ignored: %q", n)
	}
	for name, n := range map[string]string{
		"honoured":   ignoredContinuousUsage(on, &metrics.PerTokenITL{Requests: 1}, []record.Record{multi}),
		"one chunk":  ignoredContinuousUsage(on, nil, []record.Record{one}),
		"no flag":    ignoredContinuousUsage(off, nil, []record.Record{multi}),
		"all failed": ignoredContinuousUsage(on, nil, []record.Record{{Gaps: multi.Gaps}}),
	} {
		if n != "" {
			t.Errorf("%s: %q", name, n)
		}
	}
}
