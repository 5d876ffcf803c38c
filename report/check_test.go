package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"benchserve/internal/py/pyjson"
	"benchserve/metrics"
	"benchserve/record"
)

// A closed-loop run prints n/a for the schedule-anchored figures and writes
// null for their keys; an open-loop one has them. The output-length sources
// are shares on the console and counts in the result line.
func TestCheckRowsAndKeys(t *testing.T) {
	src := map[record.OutputSource]int{record.OutputServer: 3, record.OutputRetokenized: 2, record.OutputRequested: 3}
	closed := &metrics.SelfCheck{Target: math.Inf(1), Planned: math.Inf(1), OK: 8, Sources: src, Verdict: "v"}
	x := &pyjson.Object{}
	checkKeys(x, closed, 2, 8)
	if v, _ := x.Get("failed_rate"); string(v) != "0.25" {
		t.Errorf("failed_rate = %s, want 0.25 (2 of 8)", v)
	}
	for _, k := range []string{"mean_ttft_from_schedule_ms", "p99_e2e_latency_from_schedule_ms", "mean_send_lag_ms"} {
		if v, _ := x.Get(k); string(v) != string(pyjson.Null) {
			t.Errorf("closed loop: %s = %s, want null", k, v)
		}
	}
	if v, _ := x.Get("output_tokens_source"); string(v) != `{"server": 3, "retokenized": 2, "requested": 3}` {
		t.Errorf("output_tokens_source = %s", v)
	}
	rows, _ := checkRows(closed, false)
	for _, r := range rows["Schedule-anchored latency"] {
		if r.Value != "n/a" {
			t.Errorf("closed loop: %s %s, want n/a", r.Label, r.Value)
		}
	}
	var sources string
	for _, r := range rows["Client self-check"] {
		if r.Label == "Output token counts from:" {
			sources = r.Value
		}
	}
	if sources != "server 37.50%, retokenized 25.00%, requested 37.50%" {
		t.Errorf("sources %q", sources)
	}
	open := *closed
	open.Anchored = &metrics.Anchored{TTFT: metrics.Stats{Mean: 12.5}}
	y := &pyjson.Object{}
	checkKeys(y, &open, 2, 8)
	if v, _ := y.Get("mean_ttft_from_schedule_ms"); string(v) != "12.5" {
		t.Errorf("open loop: anchored TTFT %s", v)
	}
	if rows, _ := checkRows(&open, false); rows["Schedule-anchored latency"][0].Value != "12.50" {
		t.Errorf("open loop: %v", rows["Schedule-anchored latency"][0])
	}
}

// The most common error texts come first, with counts and kinds; ties keep
// the order they first came in; long texts are cut at a character.
func TestCommonErrors(t *testing.T) {
	long := strings.Repeat("é", 200)
	var recs []record.Record
	add := func(n int, kind, text string) {
		for range n {
			recs = append(recs, record.Record{Sent: true, Error: text, ErrorKind: kind})
		}
	}
	add(1, record.KindReset, "reset")
	add(3, record.KindHTTP5xx, "500 Internal Server Error: boom")
	add(1, record.KindTimeout, long)
	add(2, "", "odd")
	recs = append(recs, record.Record{Sent: true, Success: true})
	rows := commonErrors(ErrorCounts(recs), 3)
	want := []string{"3 requests, http_5xx:", "2 requests, other:", "1 requests, reset:"}
	if len(rows) != 3 {
		t.Fatalf("rows %v", rows)
	}
	for i, r := range rows {
		if r.Label != want[i] {
			t.Errorf("row %d: %q, want %q", i, r.Label, want[i])
		}
	}
	// Errors that differ only in numbers are one, the first as example.
	ctx := func(n int) string {
		return fmt.Sprintf("This model's maximum context length is 4096 tokens. However, you requested %d tokens", n)
	}
	var ctxRecs []record.Record
	for _, n := range []int{4108, 5002, 4200} {
		ctxRecs = append(ctxRecs, record.Record{Sent: true, Error: ctx(n), ErrorKind: record.KindHTTP4xx})
	}
	ctxRecs = append(ctxRecs, record.Record{Sent: true, Error: ctx(4108), ErrorKind: record.KindStreamError})
	grouped := commonErrors(ErrorCounts(ctxRecs), 3)
	if len(grouped) != 2 || grouped[0] != (Row{"3 requests, http_4xx:", "e.g. " + ctx(4108)}) || grouped[1] != (Row{"1 requests, stream_error:", ctx(4108)}) {
		t.Errorf("grouped rows %v", grouped)
	}
	if got := withoutDigits("port 8000, 12 of 3"); got != "port #, # of #" {
		t.Errorf("withoutDigits: %q", got)
	}
	cut := commonErrors(ErrorCounts(recs[4:5]), 3)[0].Value
	if !strings.HasSuffix(cut, "...") || len(cut) > 303 || !strings.HasPrefix(cut, "é") || !utf8.ValidString(cut) {
		t.Errorf("cut text %q", cut)
	}
}

// An embedding run (no output tokens) says n/a for the CPU per output
// token, not 0.00; a generating run gives the figure.
func TestCheckRowsCPUPerToken(t *testing.T) {
	perToken := func(r *metrics.SelfCheck, embedding bool) string {
		rows, _ := checkRows(r, embedding)
		for _, row := range rows["Client self-check"] {
			if row.Label == "Client CPU per output token (us):" {
				return row.Value
			}
		}
		return "missing"
	}
	if v := perToken(&metrics.SelfCheck{Planned: 1}, true); v != "n/a" {
		t.Errorf("embedding: %q, want n/a", v)
	}
	if v := perToken(&metrics.SelfCheck{Planned: 1, CPUPerToken: 39.5}, false); v != "39.50" {
		t.Errorf("generating: %q, want 39.50", v)
	}
	if v := perToken(&metrics.SelfCheck{Planned: 1}, false); v != "n/a" {
		t.Errorf("no output token: %q, want n/a", v)
	}
}

// The stream integrity lines: one when every stream is whole, else one
// per problem found; the keys hold every count.
func TestIntegrityRowsAndKeys(t *testing.T) {
	clean := metrics.StreamIntegrity{Streams: 200}
	if rows := integrityRows(&clean); len(rows) != 1 || rows[0] != (Row{"Stream integrity:", "all 200 streams complete"}) {
		t.Errorf("clean rows %v", rows)
	}
	bad := metrics.StreamIntegrity{Streams: 200, Flawed: 5, Counts: [5]int{3, 0, 2, 0, 0}}
	rows := integrityRows(&bad)
	if len(rows) != 2 || rows[0] != (Row{"Streams without terminator:", "3 of 200"}) || rows[1] != (Row{"Usage disagreeing with content:", "2 of 200"}) {
		t.Errorf("rows %v", rows)
	}
	o := &pyjson.Object{}
	integrityKeys(o, &bad)
	if got := string(o.Bytes()); got != `{"stream_integrity": {"streams": 200, "no_terminator": 3, "no_finish_reason": 0, "usage_mismatch": 2, "bad_index": 0, "error_after_content": 0}, "flawed_streams": 5}` {
		t.Errorf("keys %s", got)
	}
}

func TestConsistencyRowsAndKeys(t *testing.T) {
	c := &metrics.Consistency{Planned: 20, Compared: 19, Diverged: 2, FirstDiff: []int{4, 10},
		Pairs: []metrics.ProbePair{{Row: 3, FirstDiff: 4, Idle: "a b", Loaded: "a c"}}}
	rows := consistencyRows(c)
	if len(rows) != 3 || rows[0].Value != "19 of 20" || rows[1].Value != "10.53" || rows[2].Value != "7.00, 4" {
		t.Errorf("rows %v", rows)
	}
	o := &pyjson.Object{}
	consistencyKeys(o, c, true)
	want := `{"consistency_probes": 20, "consistency_probes_compared": 19, "consistency_diverged": 2, "consistency_divergence_rate": 0.10526315789473684, ` +
		`"consistency_first_diff_median": 7.0, "consistency_first_diff_min": 4, "consistency_divergent_pairs": [{"row": 3, "first_diff": 4, "idle": "a b", "loaded": "a c"}]}`
	if got := string(o.Bytes()); got != want {
		t.Errorf("keys\n%s\nwant\n%s", got, want)
	}
	none := &metrics.Consistency{Planned: 5, Compared: 5}
	if rows := consistencyRows(none); rows[2].Value != "n/a" {
		t.Errorf("rows %v", rows)
	}
}
