package report

import (
	"fmt"
	"strconv"

	"benchserve/internal/py/pyjson"
)

// Replay is the plan file a run sent (--replay-plan), and how the run's
// flags changed it.
type Replay struct {
	File     string
	Requests int
	// Version is the file's format version, SavedBy the benchserve that
	// wrote it.
	Version int
	SavedBy string
	// Scale multiplied the plan's offsets (--request-rate against the
	// plan's PlanRate; 0: all at once); PlanMaxConcurrency is the saving
	// run's cap (nil: none), which the run's own --max-concurrency
	// replaces.
	Scale              float64
	PlanRate           float64
	PlanMaxConcurrency *int
}

// planRows are the Load section's lines of a saved or replayed plan.
func (l Load) planRows() []Row {
	var rows []Row
	if l.SavedPlan != "" {
		rows = append(rows, Row{"Plan saved to:", l.SavedPlan})
	}
	if r := l.Replay; r != nil {
		mc := "none"
		if m := r.PlanMaxConcurrency; m != nil {
			mc = strconv.Itoa(*m)
		}
		rows = append(rows,
			Row{"Replayed plan:", fmt.Sprintf("%s (%d requests, version %d, saved by benchserve %s)", r.File, r.Requests, r.Version, r.SavedBy)},
			Row{"Plan offsets scaled by:", F(r.Scale)},
			Row{"Plan's request rate:", F(r.PlanRate)},
			Row{"Plan's max concurrency:", mc})
	}
	return rows
}

// planKeys write the same as JSONL keys.
func (l Load) planKeys(o *pyjson.Object) {
	if l.SavedPlan != "" {
		o.Set("saved_plan", pyjson.String(l.SavedPlan))
	}
	r := l.Replay
	if r == nil {
		return
	}
	o.Set("replay_plan", pyjson.String(r.File))
	o.Set("replay_requests", pyjson.Int(r.Requests))
	o.Set("replay_plan_version", pyjson.Int(r.Version))
	o.Set("replay_saved_by", pyjson.String(r.SavedBy))
	o.Set("replay_offset_scale", pyjson.Float(r.Scale))
	o.Set("replay_plan_request_rate", pyjson.Float(r.PlanRate))
	if m := r.PlanMaxConcurrency; m != nil {
		o.Set("replay_plan_max_concurrency", pyjson.Int(*m))
	} else {
		o.Set("replay_plan_max_concurrency", pyjson.Null)
	}
}
