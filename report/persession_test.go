package report

import (
	"bytes"
	"strings"
	"testing"

	"benchserve/metrics"
	"benchserve/record"
)

// A multi-turn run's output has a Per session section and a per_session
// key; a run without conversations has neither.
func TestPerSessionInResult(t *testing.T) {
	run, s := completionsRun()
	recs := []record.Record{
		{Round: true, Session: 0, Turn: 0, SessionTurns: 2, Sent: true, Success: true, Intended: 0, Start: 0.001, Latency: 0.5},
		{Round: true, Session: 0, Turn: 1, SessionTurns: 2, Sent: true, Success: true, Intended: 0.511, PlannedDelay: 0.01, Start: 0.513, Latency: 0.2},
		{Round: true, Session: 1, Turn: 0, SessionTurns: 2, Sent: true, Error: "x", ErrorKind: record.KindHTTP5xx, Intended: 0.1, Start: 0.1},
	}
	res := &Result{Run: run, Summary: s, Records: recs, PerSession: metrics.ComputePerSession(recs)}
	var b bytes.Buffer
	if err := res.Print(&b, false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, l := range []string{
		"-" + perSessionTitle + "-",
		"Sessions started:                        2",
		"Sessions completed / truncated:          1 / 1",
		"Session duration mean/med/P99 (ms):      712.00 / 712.00 / 712.00",
		"Sessions by turns completed:             0: 1, 2: 1",
		"Turn lag mean/med/P99/max (ms):          2.00 / 2.00 / 2.00 / 2.00",
		"Arrival lag mean/med/P99/max (ms):       0.50 / 0.50 / 0.99 / 1.00",
	} {
		if !strings.Contains(out, l) {
			t.Errorf("no %q in\n%s", l, out)
		}
	}
	line := string(res.Line())
	for _, k := range []string{`"per_session": {"started": 2, "completed": 1, "truncated": 1, "mean_duration_ms": 712.0`,
		`"sessions_by_turns_completed": [1, 0, 1], "turns_after_first": 1`, `"max_arrival_lag_ms": 1.0`} {
		if !strings.Contains(line, k) {
			t.Errorf("no %s in\n%s", k, line)
		}
	}

	res = &Result{Run: run, Summary: s, Records: recs[:0], PerSession: metrics.ComputePerSession(nil)}
	b.Reset()
	if err := res.Print(&b, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), perSessionTitle) || strings.Contains(string(res.Line()), "per_session") {
		t.Errorf("per-session figures for a run without conversations")
	}
}
