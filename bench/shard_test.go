package bench

import (
	"bytes"
	"testing"
	"time"

	"benchserve/internal/exit"
	"benchserve/metrics"
)

// A common start up to a minute past is a late shard, which still runs;
// further back it is a typo, refused with the time it names.
func TestCheckStartAt(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, c := range []struct {
		ago  time.Duration
		want string
	}{
		{-30 * time.Second, ""},
		{0, ""},
		{59 * time.Second, ""},
		{time.Minute, ""},
		{61 * time.Second, "--start-at 1799999939: that was 1m1s ago; give a time to come (e.g. $(( $(date +%s) + 30 ))) or --start-in SECONDS"},
		{3 * time.Hour, "--start-at 1799989200: that was 3h0m0s ago; give a time to come (e.g. $(( $(date +%s) + 30 ))) or --start-in SECONDS"},
		{now.Sub(time.Unix(1000, 0)), "--start-at 1000: that was 20833 days ago; give a time to come (e.g. $(( $(date +%s) + 30 ))) or --start-in SECONDS"},
	} {
		at := now.Add(-c.ago)
		err := checkStartAt(float64(at.Unix()), at, now)
		got := ""
		if err != nil {
			got = err.Error()
			if ee, ok := err.(*exit.Error); !ok || ee.Code != exit.Usage {
				t.Errorf("%v ago: %T %v, want a usage error", c.ago, err, err)
			}
		}
		if got != c.want {
			t.Errorf("%v ago: %q, want %q", c.ago, got, c.want)
		}
	}
}

// The server counting twice the client's tokens is worth a warning for a
// run alone, not for one of two shards, which share the server.
func TestWarnServerTokens(t *testing.T) {
	gen := func(v float64) metrics.Snapshot {
		return metrics.Snapshot{Samples: map[string]metrics.Sample{"vllm:generation_tokens_total": {
			Key: "vllm:generation_tokens_total", Name: "vllm:generation_tokens_total", Kind: metrics.Counter, Value: v}}}
	}
	view := metrics.ServerSummary([]metrics.Snapshot{gen(100), gen(300)}, 0)
	for _, c := range []struct {
		shards, client int
		want           string
	}{
		{0, 200, ""},
		{0, 100, "benchserve: warning: the server counted 200 generated tokens during the run, the client 100: they differ by more than 1% (other clients on the server, or token counts that do not match)\n"},
		{1, 100, "benchserve: warning: the server counted 200 generated tokens during the run, the client 100: they differ by more than 1% (other clients on the server, or token counts that do not match)\n"},
		{2, 100, ""},
	} {
		var errb bytes.Buffer
		p := &Plan{Env: Env{Stderr: &errb}, traffic: traffic{shards: c.shards}}
		p.warnServerTokens(&view, c.client)
		if errb.String() != c.want {
			t.Errorf("%d shards, client %d: %q, want %q", c.shards, c.client, errb.String(), c.want)
		}
	}
}
