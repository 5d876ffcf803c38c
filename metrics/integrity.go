package metrics

import (
	"fmt"
	"strings"

	"benchserve/record"
)

// StreamIntegrity counts the streams of a run with each integrity problem
// (record.Integrity; docs/metrics.md, "Stream integrity").
type StreamIntegrity struct {
	// Streams counts the streamed replies checked; Flawed those with any
	// problem.
	Streams, Flawed int
	// Counts holds, per record.IntegrityProblems entry, the streams with
	// that problem.
	Counts [5]int
}

// Add counts one record.
func (s *StreamIntegrity) Add(r *record.Record) {
	if !r.Sent || !r.Stream.Has(record.StreamRead) {
		return
	}
	s.Streams++
	if r.Stream != record.StreamRead {
		s.Flawed++
	}
	for i, b := range record.IntegrityProblems {
		if r.Stream.Has(b) {
			s.Counts[i]++
		}
	}
}

// Count is the streams with problem b.
func (s *StreamIntegrity) Count(b record.Integrity) int {
	for i, p := range record.IntegrityProblems {
		if p == b {
			return s.Counts[i]
		}
	}
	return 0
}

// IntegrityLabel is the console's words for each problem.
func IntegrityLabel(b record.Integrity) string {
	switch b {
	case record.NoTerminator:
		return "streams without terminator"
	case record.NoFinish:
		return "streams without finish reason"
	case record.UsageMismatch:
		return "usage disagreeing with content"
	case record.BadIndex:
		return "non-monotonic or duplicate index"
	case record.ErrorAfterContent:
		return "error event after content"
	}
	return ""
}

// warning is the verdict's note on flawed streams, "" when none.
func (s *StreamIntegrity) warning() string {
	if s.Flawed == 0 {
		return ""
	}
	var parts []string
	for _, b := range record.IntegrityProblems {
		if n := s.Count(b); n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, IntegrityLabel(b)))
		}
	}
	return fmt.Sprintf("; warning: %d of %d streams incomplete or inconsistent (%s): the server's answers, not the client's timing",
		s.Flawed, s.Streams, strings.Join(parts, ", "))
}
