package metrics

import (
	"strings"
	"testing"

	"benchserve/record"
)

// Streams are counted per problem; records not read as streams, and
// those never sent, are not; any problem adds a warning to the verdict.
func TestStreamIntegrityTally(t *testing.T) {
	recs := []record.Record{
		{Sent: true, Success: true, Stream: record.StreamRead},
		{Sent: true, Success: true, Stream: record.StreamRead | record.NoFinish | record.BadIndex},
		{Sent: true, Stream: record.StreamRead | record.NoTerminator},
		{Sent: true, Success: true},                            // a whole reply
		{Stream: record.StreamRead | record.ErrorAfterContent}, // not sent
	}
	c := Check(recs, ClientStats{}, Shape{Closed: true}, 0)
	s := c.Integrity
	if s.Streams != 3 || s.Flawed != 2 || s.Count(record.NoFinish) != 1 || s.Count(record.BadIndex) != 1 ||
		s.Count(record.NoTerminator) != 1 || s.Count(record.ErrorAfterContent) != 0 || s.Count(record.UsageMismatch) != 0 {
		t.Errorf("tally %+v", s)
	}
	if !strings.Contains(c.Verdict, "warning: 2 of 3 streams incomplete or inconsistent (1 streams without terminator, 1 streams without finish reason, 1 non-monotonic or duplicate index)") {
		t.Errorf("verdict %q", c.Verdict)
	}
	clean := Check(recs[:1], ClientStats{}, Shape{Closed: true}, 0)
	if strings.Contains(clean.Verdict, "warning") || clean.Integrity.Streams != 1 {
		t.Errorf("clean run: %q %+v", clean.Verdict, clean.Integrity)
	}
	// A soak's fold counts alike.
	f := NewFold(nil, Options{}, SLO{}, 1)
	for i := range recs {
		f.Add(&recs[i])
	}
	if got := f.Check(ClientStats{}, Shape{Closed: true}, 0, 1).Integrity; got != s {
		t.Errorf("fold %+v, want %+v", got, s)
	}
}
