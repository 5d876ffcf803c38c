package calibrate

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/metrics"
)

func TestTruth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"requests": [
			{"id": "cmpl-1", "ttft": 0.05, "error": "", "chunks": [[1.05, 1, 0.00001], [1.06, 1, 0.00001], [1.08, 2, 0.00001]]},
			{"id": "cmpl-2", "ttft": 0.07, "error": "", "chunks": [[2.07, 1, 0.00001]]},
			{"id": "cmpl-3", "ttft": null, "error": "the client closed the connection", "chunks": []}]}`)
	}))
	defer srv.Close()
	truth, err := (&simProc{url: srv.URL}).truth()
	if err != nil {
		t.Fatal(err)
	}
	if len(truth.ids) != 2 || truth.ids[0] != "cmpl-1" || len(truth.byID["cmpl-1"].chunks) != 3 {
		t.Errorf("truth = %+v, want the two finished requests by id", truth)
	}
	ttft, itl := truth.all()
	if len(ttft) != 2 || ttft[0] != 0.05 || ttft[1] != 0.07 {
		t.Errorf("ttft = %v, want the two finished requests'", ttft)
	}
	if len(itl) != 2 || itl[0] < 0.0099 || itl[0] > 0.0101 || itl[1] < 0.0199 || itl[1] > 0.0201 {
		t.Errorf("itl = %v, want the gaps between chunk writes", itl)
	}
}

func TestMatch(t *testing.T) {
	truth := truthLog{ids: []string{"a", "b", "c"}, byID: map[string]trueRequest{
		"a": {ttft: 0.050, chunks: []float64{1.000, 1.010, 1.020}},
		"b": {ttft: 0.060, chunks: []float64{2.000, 2.010, 2.030}},
		"c": {ttft: 0.070, chunks: []float64{3.000, 3.010}},
	}}
	dir := t.TempDir()
	path := filepath.Join(dir, "records.jsonl")
	lines := `{"id": "a", "success": true, "ttft": 0.051, "itl": [0.0105, 0.0095]}
{"id": "b", "success": true, "ttft": 0.062, "itl": [0.010, 0.022]}
{"id": "c", "success": true, "ttft": 0.070, "itl": [0.004, 0.006]}
{"id": "x", "success": true, "ttft": 0.5, "itl": [0.5]}
{"id": "a", "success": false, "ttft": 0, "itl": []}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := readRecords(path)
	if err != nil {
		t.Fatal(err)
	}
	m := match(recs, truth)
	// "x" is unknown to the simulator and the failed "a" is skipped; "c"
	// counts for TTFT but its gaps do not line up (two against one).
	if m.Requests != 3 || m.Gaps != 4 {
		t.Fatalf("matched %d requests, %d gaps; want 3 and 4", m.Requests, m.Gaps)
	}
	// TTFT errors 1, 2, 0 ms; gap errors +0.5, -0.5, 0, +2 ms.
	if math.Abs(m.TTFT.Median-1) > 1e-9 || math.Abs(m.TTFT.Mean-1) > 1e-9 {
		t.Errorf("TTFT error median %v mean %v, want 1 ms", m.TTFT.Median, m.TTFT.Mean)
	}
	if math.Abs(m.ITL.Median-0.25) > 1e-9 || math.Abs(m.ITL.Mean-0.5) > 1e-9 {
		t.Errorf("ITL error median %v mean %v, want 0.25 and 0.5 ms", m.ITL.Median, m.ITL.Mean)
	}
	if m.ITLAbsP99 < 1.9 || m.ITLAbsP99 > 2 {
		t.Errorf("ITL |error| p99 = %v, want just under 2 ms", m.ITLAbsP99)
	}
	os.WriteFile(path, []byte("{\"id\": \"a\"}\nnot json\n"), 0o644)
	if _, err := readRecords(path); err == nil || !strings.Contains(err.Error(), "records.jsonl:2") {
		t.Errorf("a bad line: err = %v, want one naming the file and line 2", err)
	}
}

func TestWriteMatrix(t *testing.T) {
	var p Point
	p.Concurrency, p.Requests, p.PeakRSSMB, p.CPUSeconds = 100, 200, 38.9, 0.3
	p.Reported.TTFT = metrics.Stats{Mean: 100.5, Median: 101, P99: 105}
	p.True.TTFT = metrics.Stats{Mean: 100, Median: 101.25, P99: 104}
	var b strings.Builder
	writeMatrix(&b, []Point{p})
	if !strings.Contains(b.String(), "| 100 | 200 | 100.50 / 100.00 / +0.50 | 101.00 / 101.25 / -0.25 | 105.00 / 104.00 / +1.00 |") {
		t.Errorf("matrix:\n%s", b.String())
	}
}
