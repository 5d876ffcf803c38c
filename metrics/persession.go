package metrics

import (
	"slices"

	"benchserve/record"
)

// PerSession are a multi-turn run's figures per conversation (session).
type PerSession struct {
	// Started counts the sessions whose first turn was sent; Completed
	// those whose every planned turn was sent and succeeded; Truncated
	// the others, ended early by a failed or cancelled turn, the end of
	// --duration or the interrupt.
	Started, Completed, Truncated int
	// Duration runs from a completed session's first send to the end of
	// its last reply, in milliseconds.
	Duration Stats
	// TurnsMean is the mean number of successful turns of a started
	// session; ByTurns[n] counts the started sessions with n of them.
	TurnsMean float64
	ByTurns   []int
	// Gaps counts the turns after a session's first that were sent;
	// Between is the time from the end of turn k-1 to the send of turn
	// k, and Lag its excess over the planned think time (the client's
	// lag), both in milliseconds.
	Gaps         int
	Between, Lag Stats
	// ArrivalLag is how late each session's first turn left against its
	// slot in the schedule, in milliseconds.
	ArrivalLag Stats
}

// ComputePerSession gives the per-session figures of recs, or nil when
// none is a conversation's round. It reads only what record files carry:
// a round's previous end is its due time less its planned delay, and a
// reply's end its start plus its latency, so merge gives the same
// figures. A record without its session's planned turn count (an older
// record file) counts its session complete when every round it has
// succeeded.
func ComputePerSession(recs []record.Record) *PerSession {
	type session struct {
		first          *record.Record
		sent, ok, plan int
		end            float64
	}
	by := map[int]*session{}
	var order []int
	var ps PerSession
	var between, lag []float64
	for i := range recs {
		r := &recs[i]
		if !r.Round || !r.Sent {
			continue
		}
		s := by[r.Session]
		if s == nil {
			s = &session{}
			by[r.Session] = s
			order = append(order, r.Session)
		}
		s.sent++
		s.plan = max(s.plan, r.SessionTurns)
		if r.Success {
			s.ok++
		}
		if s.first == nil || r.Turn < s.first.Turn {
			s.first = r
		}
		s.end = max(s.end, r.Start+r.Latency)
		if r.Turn > 0 {
			ps.Gaps++
			between = append(between, r.Start-(r.Intended-r.PlannedDelay))
			lag = append(lag, r.Start-r.Intended)
		}
	}
	if len(order) == 0 {
		return nil
	}
	slices.Sort(order) // the plan's order, for the sums' order
	var durations, arrival []float64
	turns := 0
	for _, id := range order {
		s := by[id]
		ps.Started++
		arrival = append(arrival, s.first.Start-s.first.Intended)
		if s.ok == s.sent && s.sent >= s.plan {
			ps.Completed++
			durations = append(durations, s.end-s.first.Start)
		}
		for len(ps.ByTurns) <= s.ok {
			ps.ByTurns = append(ps.ByTurns, 0)
		}
		ps.ByTurns[s.ok]++
		turns += s.ok
	}
	ps.Truncated = ps.Started - ps.Completed
	ps.TurnsMean = float64(turns) / float64(ps.Started)
	ps.Duration = describeInPlace(durations)
	ps.Between, ps.Lag = describeInPlace(between), describeInPlace(lag)
	ps.ArrivalLag = describeInPlace(arrival)
	return &ps
}
