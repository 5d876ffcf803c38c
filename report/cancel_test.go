package report

import (
	"bytes"
	"strings"
	"testing"

	"benchserve/record"
)

// Requests cancelled on purpose have their own console line and result
// key, and are in neither the failures nor their breakdowns.
func TestCancelledApart(t *testing.T) {
	run, s := failuresRun()
	s.Failed, s.Cancelled = 1, 2
	var buf bytes.Buffer
	if err := Console(&buf, run, s); err != nil {
		t.Fatal(err)
	}
	want := "Failed requests:                         1         \nCancelled requests (injected):           2         \n"
	if !strings.HasSuffix(buf.String(), want) {
		t.Errorf("block does not end with the failed and cancelled lines:\n%s", buf.String())
	}
	recs := []record.Record{
		{Sent: true, Success: true},
		{Sent: true, Error: "500 Internal Server Error: boom", ErrorKind: record.KindHTTP5xx},
		{Sent: true, Error: "cancelled", ErrorKind: record.KindCancelled},
		{Sent: true, Error: "cancelled", ErrorKind: record.KindCancelled},
	}
	if got := string(errorKinds(ErrorCounts(recs))); got != `{"http_5xx": 1}` {
		t.Errorf("errors_by_kind %s", got)
	}
	if rows := commonErrors(ErrorCounts(recs), 3); len(rows) != 1 || rows[0].Label != "1 requests, http_5xx:" {
		t.Errorf("common errors %v", rows)
	}
	res := &Result{Run: run, Summary: s, Records: recs}
	if line := string(res.Line()); !strings.Contains(line, `"failed": 1, "failed_rate": 0.25`) || !strings.Contains(line, `"cancelled_requests": 2`) {
		t.Errorf("result line without failed 1 of 4 and cancelled_requests 2:\n%s", line)
	}
}
