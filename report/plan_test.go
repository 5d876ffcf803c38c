package report

import (
	"math"
	"testing"

	"benchserve/internal/py/pyjson"
)

// A saved plan and a replayed one are said in the Load section and in
// keys of their own; a run with neither has none.
func TestLoadPlan(t *testing.T) {
	eight := 8
	l := Load{SavedPlan: "a.jsonl", Replay: &Replay{File: "p.jsonl", Requests: 20, Version: 1, SavedBy: "v1.2.0", Scale: 0.5, PlanRate: 10, PlanMaxConcurrency: &eight}}
	want := []Row{
		{"Plan saved to:", "a.jsonl"},
		{"Replayed plan:", "p.jsonl (20 requests, version 1, saved by benchserve v1.2.0)"},
		{"Plan offsets scaled by:", "0.50"},
		{"Plan's request rate:", "10.00"},
		{"Plan's max concurrency:", "8"},
	}
	rows := l.rows()
	if len(rows) != len(want) {
		t.Fatalf("rows %v", rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %v, want %v", i, rows[i], want[i])
		}
	}
	o := &pyjson.Object{}
	l.keys(o)
	const keys = `{"saved_plan": "a.jsonl", "replay_plan": "p.jsonl", "replay_requests": 20, "replay_plan_version": 1, "replay_saved_by": "v1.2.0", "replay_offset_scale": 0.5, "replay_plan_request_rate": 10.0, "replay_plan_max_concurrency": 8}`
	if b := string(o.Bytes()); b != keys {
		t.Errorf("keys %s\nwant %s", b, keys)
	}
	o = &pyjson.Object{}
	Load{Replay: &Replay{File: "p.jsonl", Scale: 0, PlanRate: math.Inf(1)}}.keys(o)
	if b := string(o.Bytes()); b != `{"replay_plan": "p.jsonl", "replay_requests": 0, "replay_plan_version": 0, "replay_saved_by": "", "replay_offset_scale": 0.0, "replay_plan_request_rate": Infinity, "replay_plan_max_concurrency": null}` {
		t.Errorf("keys %s", b)
	}
	if rows := (Load{}).rows(); len(rows) != 0 {
		t.Errorf("no plan: rows %v", rows)
	}
}
