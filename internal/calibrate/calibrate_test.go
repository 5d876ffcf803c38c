package calibrate

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"benchserve/metrics"
)

func TestTruth(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"requests": [
			{"ttft": 0.05, "error": "", "chunks": [[1.05, 1, 0.00001], [1.06, 1, 0.00001], [1.08, 2, 0.00001]]},
			{"ttft": 0.07, "error": "", "chunks": [[2.07, 1, 0.00001]]},
			{"ttft": null, "error": "the client closed the connection", "chunks": []}]}`)
	}))
	defer srv.Close()
	ttft, itl, err := (&simProc{url: srv.URL}).truth()
	if err != nil {
		t.Fatal(err)
	}
	if len(ttft) != 2 || ttft[0] != 0.05 || ttft[1] != 0.07 {
		t.Errorf("ttft = %v, want the two finished requests'", ttft)
	}
	if len(itl) != 2 || itl[0] < 0.0099 || itl[0] > 0.0101 || itl[1] < 0.0199 || itl[1] > 0.0201 {
		t.Errorf("itl = %v, want the gaps between chunk writes", itl)
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
