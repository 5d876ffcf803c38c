package bench

import (
	"fmt"
	"sort"
	"time"

	"benchserve/internal/py/pyfmt"
	"benchserve/internal/py/pyrand"
	"benchserve/schedule"
)

// plan schedules the rows: by their trace times when they carry them
// (sorted by time, stretched by --mooncake-slowdown-factor; unlike the
// reference, whose --use-trace-timestamps only relabels the rate, the times
// really drive sending), else by --request-rate and --arrival, or a ramp;
// by count, or for --duration. Then --warmup-duration's plan and the
// concurrency ramp's steps.
func (p *Plan) plan(lora schedule.LoRA, py *pyrand.Python, np *pyrand.NumPy) error {
	cfg, rows, ld := p.Config, p.Rows, &p.traffic
	if rows[0].HasTimestamp {
		return p.planTrace(lora, py, np)
	}
	// Ignored, as the command line's note says: the result shows the rate
	// the requests were sent at, not the reference's "trace".
	cfg.UseTraceTimestamps = false
	arr := p.arrival()
	if r := ld.ramp; r != nil {
		r.Over = ld.duration
		if r.Over == 0 {
			r.Over = schedule.RampSpan(len(rows), *r)
		}
	}
	var err error
	switch {
	case ld.duration > 0 && p.Closed():
		p.Slots, err = schedule.Plan(len(rows), arr, lora, py, np)
		p.cyclic = true
	case ld.duration > 0:
		p.Slots, err = schedule.PlanFor(ld.duration, arr, lora, py, np)
	default:
		p.Slots, err = schedule.Plan(len(rows), arr, lora, py, np)
	}
	if err != nil {
		return usage("%v", err)
	}
	if ld.warmup > 0 {
		if p.Closed() {
			p.warmupSlots, p.warmupCyclic = p.Slots, true
		} else {
			// Its own draws, so that the measured plan is the same with
			// or without a warmup; a ramp runs over the warmup's length.
			if r := arr.Ramp; r != nil {
				w := *r
				w.Over = ld.warmup
				arr.Ramp = &w
			}
			seed := int64(cfg.Seed) + 1
			p.warmupSlots, err = schedule.PlanFor(ld.warmup, arr, lora, pyrand.NewPython(seed), pyrand.NewNumPy(uint32(seed)))
			if err != nil {
				return usage("%v", err)
			}
		}
	}
	if ld.capRamp > 0 {
		p.capSteps = schedule.CapSteps(*cfg.MaxConcurrency, ld.capRamp)
	}
	return nil
}

func (p *Plan) arrival() schedule.Arrival {
	cfg := p.Config
	return schedule.Arrival{Rate: cfg.RequestRate, Constant: cfg.Arrival == "constant", Burstiness: cfg.Burstiness, Ramp: p.traffic.ramp}
}

// planTrace schedules rows that carry trace times; --duration and
// --warmup-duration take the trace's first seconds.
func (p *Plan) planTrace(lora schedule.LoRA, py *pyrand.Python, np *pyrand.NumPy) error {
	cfg, rows, out := p.Config, p.Rows, p.Env.Stdout
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Timestamp < rows[j].Timestamp })
	times := make([]float64, len(rows))
	for i := range rows {
		times[i] = rows[i].Timestamp
	}
	fmt.Fprintf(out, "Sending each request at its trace time (slowdown factor %s), ignoring --request-rate.\n", pyfmt.Float(cfg.MooncakeSlowdown))
	slots, err := schedule.PlanTrace(times, cfg.MooncakeSlowdown, lora, py, np)
	if err != nil {
		return usage("%v", err)
	}
	p.Slots = slots
	if d := p.traffic.duration; d > 0 {
		p.Slots = before(slots, d)
		if len(p.Slots) == len(slots) {
			fmt.Fprintf(out, "The trace's last request leaves at %.2f s, before --duration %s s ends: the run ends with the trace.\n", slots[len(slots)-1].At.Seconds(), fmtFloat(d.Seconds()))
		}
	}
	if w := p.traffic.warmup; w > 0 {
		p.warmupSlots = before(slots, w)
	}
	return nil
}

// before is the slots that leave before d.
func before(slots []schedule.Slot, d time.Duration) []schedule.Slot {
	n := sort.Search(len(slots), func(i int) bool { return slots[i].At >= d })
	return slots[:n]
}
