package page

import (
	"benchserve/record"

	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// pageData is the page's embedded data.
type pageData struct {
	Runs []struct {
		File    string              `json:"file"`
		Figures map[string]*float64 `json:"figures"`
	} `json:"runs"`
	Charts []Chart `json:"charts"`
	Rows   []Row   `json:"rows"`
}

func embedded(t *testing.T, html []byte) pageData {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindSubmatch(html)
	if m == nil {
		t.Fatal("no report-data")
	}
	var d pageData
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func chartByID(t *testing.T, d pageData, id string) Chart {
	t.Helper()
	for _, c := range d.Charts {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no chart %s", id)
	return Chart{}
}

// fixedRecords: 40 requests sent 0.1 s apart; request i has TTFT
// (10 + i) ms and 4 gaps of 5 ms (5 tokens), every 10th fails (kind
// http_5xx).
func fixedRecords() []record.Record {
	var rs []record.Record
	for i := range 40 {
		r := record.Record{Start: float64(i) * 0.1, TTFT: float64(10+i) / 1000, Success: i%10 != 9, OutputLen: 5}
		r.Latency = r.TTFT + 4*0.005
		if r.Success {
			ms5 := 5 * time.Millisecond
			r.Gaps = record.GapsOf(ms5, ms5, ms5, ms5)
		} else {
			r.ErrorKind, r.OutputLen = "http_5xx", 0
		}
		rs = append(rs, r)
	}
	return rs
}

func fixedLines() []Line {
	var ls []Line
	for i, rate := range []float64{10, 20, 40} {
		ls = append(ls, Line{File: "sweep.jsonl", Num: map[string]float64{
			"completed": 100, "failed": 0, "duration": 10, "request_rate": rate, "request_throughput": rate * 0.98,
			"output_throughput": rate * 100, "median_ttft_ms": 20 + float64(i)*10, "p99_ttft_ms": 40 + float64(i)*100,
			"median_itl_ms": 5, "p99_itl_ms": 7 + float64(i), "median_e2e_latency_ms": 500, "p99_e2e_latency_ms": 900,
			"mean_ttft_ms": 25, "mean_tpot_ms": 5 + float64(i),
		}, Str: map[string]string{"backend": "sglang", "dataset_name": "random", "client_verdict": "ok"},
			Point: map[string]float64{"request_rate": rate}, Phase: "search"})
	}
	ls = append(ls, Line{File: "sweep.jsonl", Num: map[string]float64{"search_result": 20, "search_low": 20, "search_high": 40,
		"search_low_passed": 3, "search_high_passed": 0, "search_confirm_runs": 3}, Str: map[string]string{"search_axis": "request_rate", "search_confirmed": "true"},
		SLOs: []string{"p99_ttft_ms<200"}})
	return ls
}

// The page's embedded data is its inputs: the run figures as given, the
// distributions' ends at the data's extremes, histogram counts that add
// up to the successes, throughput buckets that add up to the tokens, the
// failures by kind, the search's SLO line and interval; and every chart
// is drawn with one mark per data point.
func TestReportDataMatchesInputs(t *testing.T) {
	recs := fixedRecords()
	html := Report(Input{Lines: fixedLines(), Records: []RecordSet{{Name: "r.jsonl", Recs: recs}}, Made: "test"})
	d := embedded(t, html)
	if len(d.Runs) != 3 || *d.Runs[2].Figures["p99_ttft_ms"] != 240 || *d.Runs[0].Figures["request_throughput"] != 9.8 {
		t.Errorf("runs %+v", d.Runs)
	}
	// TTFTs of the 36 successes: 10..48 ms without 19, 29, 39, 49.
	c := chartByID(t, d, "rec1-ttft-cdf")
	s := c.Series[0]
	if s.X[0] != 10 || s.X[len(s.X)-1] != 48 || s.Y[len(s.Y)-1] != 1 || math.Abs(s.Y[0]-1.0/36) > 1e-12 {
		t.Errorf("TTFT CDF from (%v, %v) to (%v, %v)", s.X[0], s.Y[0], s.X[len(s.X)-1], s.Y[len(s.Y)-1])
	}
	h := chartByID(t, d, "rec1-ttft-hist")
	total := 0.0
	for _, v := range h.Series[0].Y {
		total += v
	}
	if total != 36 || h.Series[0].X[0] != 10 {
		t.Errorf("TTFT histogram holds %v requests from %v", total, h.Series[0].X[0])
	}
	// 36 successes × 5 tokens, counted per bucket and divided by its width.
	tp := chartByID(t, d, "rec1-throughput")
	bw := tp.Series[0].X[1] - tp.Series[0].X[0]
	tokens := 0.0
	for _, v := range tp.Series[0].Y {
		tokens += v * bw
	}
	if math.Abs(tokens-180) > 1e-6 {
		t.Errorf("throughput buckets add up to %v tokens, want 180", tokens)
	}
	f := chartByID(t, d, "rec1-failures")
	fails := 0.0
	for _, v := range f.Series[0].Y {
		fails += v
	}
	if f.Series[0].Name != "http_5xx" || fails != 4 {
		t.Errorf("failures %s %v, want http_5xx 4", f.Series[0].Name, fails)
	}
	if inf := chartByID(t, d, "rec1-inflight"); maxOf(inf.Series[0].Y) != 1 {
		t.Errorf("in flight peaks at %v; requests 0.1 s apart lasting < 0.07 s never overlap", maxOf(inf.Series[0].Y))
	}
	sc := chartByID(t, d, "sweep-ttft-rate")
	if len(sc.Series) != 2 || sc.Series[1].Name != "p99" || sc.Series[1].Y[2] != 240 || sc.Series[1].X[0] != 9.8 || sc.HRefs[0].At != 200 {
		t.Errorf("sweep TTFT chart %+v", sc)
	}
	if s := chartByID(t, d, "search"); len(s.Band) != 2 || s.Band[0] != 20 || s.Band[1] != 40 || len(s.Series[0].X) != 3 {
		t.Errorf("search chart %+v", s)
	}
	if !strings.Contains(string(html), "answer <b>20</b>, the boundary between 20 and 40") || !strings.Contains(string(html), "confirmed: true") {
		t.Error("no search answer paragraph")
	}
	// Each chart in the page, with a mark per point.
	svgs := regexp.MustCompile(`(?s)<svg class="chart" id="([^"]+)".*?</svg>`).FindAllSubmatch(html, -1)
	if len(svgs) != len(d.Charts) {
		t.Fatalf("%d svg charts for %d in the data", len(svgs), len(d.Charts))
	}
	for i, m := range svgs {
		want := 0
		for _, s := range d.Charts[i].Series {
			want += len(s.X)
		}
		if got := strings.Count(string(m[0]), `class="pt"`); string(m[1]) != d.Charts[i].ID || got != want {
			t.Errorf("chart %s: %d marks, want %d", m[1], got, want)
		}
	}
	if bytesOf := len(html); bytesOf > 1<<20 {
		t.Errorf("page of %d bytes", bytesOf)
	}
	if os.Getenv("BENCHSERVE_KEEP_PAGES") != "" {
		os.WriteFile(filepath.Join(os.Getenv("BENCHSERVE_KEEP_PAGES"), "fixed.html"), html, 0o644)
	}
}

func maxOf(v []float64) float64 {
	m := math.Inf(-1)
	for _, x := range v {
		m = math.Max(m, x)
	}
	return m
}

// LTTB keeps the ends and the spike of a long flat line.
func TestLTTBKeepsPeaks(t *testing.T) {
	x, y := make([]float64, 10000), make([]float64, 10000)
	for i := range x {
		x[i] = float64(i)
	}
	y[5000] = 100
	ox, oy := LTTB(x, y, 100)
	if len(ox) != 100 || ox[0] != 0 || ox[99] != 9999 || maxOf(oy) != 100 {
		t.Errorf("%d points from %v to %v, peak %v", len(ox), ox[0], ox[len(ox)-1], maxOf(oy))
	}
	if a, _ := LTTB(x[:50], y[:50], 100); len(a) != 50 {
		t.Error("short series changed")
	}
}

// Two runs compared: differences, and a bootstrap interval that sees a
// 10 ms shift of every TTFT and not a reshuffle of the same values.
func TestCompareRows(t *testing.T) {
	a, b := fixedRecords(), fixedRecords()
	for i := range b {
		b[i].TTFT += 0.010
	}
	la := Line{Num: map[string]float64{"completed": 36, "mean_ttft_ms": 28.5, "request_throughput": 10}}
	lb := Line{Num: map[string]float64{"completed": 36, "mean_ttft_ms": 38.5, "request_throughput": 8}}
	rows := Rows(&Compared{A: la, B: lb, RA: a, RB: b})
	byKey := map[string]Row{}
	for _, r := range rows {
		byKey[r.Key] = r
	}
	tt := byKey["mean_ttft_ms"]
	if *tt.Diff != 10 || *tt.Beyond != true || !(*tt.CILow <= 10 && 10 <= *tt.CIHigh) || better(tt) != "B worse" {
		t.Errorf("mean TTFT row %+v (ci %v %v)", tt, *tt.CILow, *tt.CIHigh)
	}
	if r := byKey["request_throughput"]; *r.Pct != -20 || r.CILow != nil {
		t.Errorf("throughput row %+v", r)
	}
	same := Rows(&Compared{A: la, B: la, RA: a, RB: fixedRecords()})
	for _, r := range same {
		if r.Key == "median_ttft_ms" && r.Beyond != nil && *r.Beyond {
			t.Errorf("the same data is beyond noise: %v %v", *r.CILow, *r.CIHigh)
		}
	}
	var sb strings.Builder
	Text(&sb, &Compared{NameA: "a", NameB: "b", A: la, B: lb, RA: a, RB: b}, rows)
	if !strings.Contains(sb.String(), "beyond noise, B worse") {
		t.Errorf("text:\n%s", sb.String())
	}
	html := ComparePage(&Compared{NameA: "a", NameB: "b", A: la, B: lb, RA: a, RB: b}, rows)
	d := embedded(t, html)
	if len(d.Rows) != len(rows) || len(d.Charts) != 3 || len(d.Charts[0].Series) != 2 {
		t.Errorf("compare page data: %d rows, %d charts", len(d.Rows), len(d.Charts))
	}
}

// A 100k-request record file makes a page under 5 MB (the build time is
// the benchmark's to show).
func TestLargeReportSize(t *testing.T) {
	recs := bigRecords(100000)
	html := Report(Input{Records: []RecordSet{{Name: "big", Recs: recs}}})
	if len(html) > 5<<20 {
		t.Errorf("page of %d bytes for 100k requests", len(html))
	}
}

func bigRecords(n int) []record.Record {
	recs := make([]record.Record, n)
	for i := range recs {
		r := &recs[i]
		r.Start, r.Success, r.OutputLen = float64(i)*0.001, i%97 != 0, 16
		r.TTFT = 0.02 + float64(i%1000)*1e-5
		for k := range 15 {
			r.Gaps.Append(5*time.Millisecond + time.Duration((i+k)%7)*100*time.Microsecond)
		}
		r.Latency = r.TTFT + 15*0.005
		if !r.Success {
			r.ErrorKind = "timeout"
		}
	}
	return recs
}

// BenchmarkReport100k reads a 100k-request record file and builds its
// page: `go test ./report/page -bench Report100k -benchtime 3x`.
func BenchmarkReport100k(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.jsonl")
	f, _ := os.Create(path)
	for i, r := range bigRecords(100000) {
		fmt.Fprintf(f, `{"seq": %d, "id": "x", "intended": %g, "start": %g, "success": %v, "latency": %g, "ttft": %g, "itl": [%s], "prompt_len": 100, "output_len": %d, "error": "", "error_kind": %q}`+"\n",
			i, r.Start, r.Start, r.Success, r.Latency, r.TTFT, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(r.Gaps.Seconds())), ", "), "[]"), r.OutputLen, r.ErrorKind)
	}
	f.Close()
	b.ResetTimer()
	for b.Loop() {
		recs, err := ReadRecords(path)
		if err != nil {
			b.Fatal(err)
		}
		html := Report(Input{Records: []RecordSet{{Name: path, Recs: recs}}})
		b.ReportMetric(float64(len(html))/1e6, "MB")
	}
}

// The server's reads over time: gauges as read, the generated-token
// counter as its rate between reads (a drop, a restart, left out).
func TestServerCharts(t *testing.T) {
	rows := []map[string]float64{
		{"t": 0, "vllm:num_requests_running": 0, "vllm:generation_tokens_total": 100},
		{"t": 0.5, "vllm:num_requests_running": 4, "vllm:generation_tokens_total": 150},
		{"t": 1.0, "vllm:num_requests_running": 3, "vllm:generation_tokens_total": 10},
		{"t": 2.0, "vllm:num_requests_running": 0, "vllm:generation_tokens_total": 210},
	}
	cs := serverCharts("s", ServerSeries{Name: "x", Rows: rows})
	if len(cs) != 2 || cs[0].ID != "s-queue" || cs[1].ID != "s-gen" {
		t.Fatalf("charts %v", cs)
	}
	if y := cs[0].Series[0].Y; len(y) != 4 || y[1] != 4 {
		t.Errorf("running %v", y)
	}
	if g := cs[1].Series[0]; len(g.X) != 2 || g.Y[0] != 100 || g.Y[1] != 200 || g.X[1] != 2 {
		t.Errorf("generated tok/s %v at %v, want 100 at 0.5 and 200 at 2", g.Y, g.X)
	}
}

// The runs table's verdict is one word, the whole verdict on hover; the
// ITL charts count gaps, the TTFT ones requests.
func TestReportVerdictWordAndGapAxes(t *testing.T) {
	ls := fixedLines()
	long := "may be distorted: 3.0% of chunks bunched by late reads (limit 1%): each timed late by up to one gap"
	ls[0].Str["client_verdict"] = long
	ls[1].Str["client_verdict"] = "ok: timing held (0.0% of chunks bunched by late reads, read delay p99 0.10 ms)"
	ls[2].Str["client_verdict"] = "not verified: 60% of responses were timed when read"
	html := string(Report(Input{Lines: ls, Records: []RecordSet{{Name: "r.jsonl", Recs: fixedRecords()}}, Made: "test"}))
	for _, want := range []string{
		`<td class="verdict" title="` + long + `">distorted</td>`,
		`<td class="verdict" title="ok: timing held (0.0% of chunks bunched by late reads, read delay p99 0.10 ms)">ok</td>`,
		`">unverified</td>`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("no %s", want)
		}
	}
	d := embedded(t, []byte(html))
	if c := chartByID(t, d, "rec1-itl-hist"); c.YLabel != "gaps" {
		t.Errorf("ITL histogram y axis %q", c.YLabel)
	}
	if c := chartByID(t, d, "rec1-itl-cdf"); c.YLabel != "fraction of gaps" {
		t.Errorf("ITL CDF y axis %q", c.YLabel)
	}
	if c := chartByID(t, d, "rec1-ttft-hist"); c.YLabel != "requests" {
		t.Errorf("TTFT histogram y axis %q", c.YLabel)
	}
	for _, w := range []struct{ v, word string }{{"the client had headroom and its timing held", "ok"},
		{"the client had headroom, but timing is not verified: 3%", "unverified"}, {`merged from shards: each shard's check is under "shards"`, "merged"}, {"", "–"}} {
		if got := verdictWord(w.v); got != w.word {
			t.Errorf("verdictWord(%q) = %q, want %q", w.v, got, w.word)
		}
	}
}

// The failures chart counts failures by kind; requests cancelled on
// purpose (--request-cancellation-rate) are not failures there either.
func TestFailuresChartLeavesCancelledOut(t *testing.T) {
	recs := []record.Record{
		{Sent: true, Success: true, Start: 0.1, Latency: 0.2, OutputLen: 2},
		{Sent: true, Start: 0.2, Latency: 0.1, Error: "500", ErrorKind: record.KindHTTP5xx},
		{Sent: true, Start: 0.3, Latency: 0.1, Error: "cancelled", ErrorKind: record.KindCancelled},
	}
	for _, c := range recordCharts("r", recs) {
		if c.ID != "r-failures" {
			continue
		}
		if len(c.Series) != 1 || c.Series[0].Name != record.KindHTTP5xx || maxOf(c.Series[0].Y) != 1 {
			t.Errorf("failures chart %+v: want one series, http_5xx, one failure", c.Series)
		}
		return
	}
	t.Errorf("no failures chart")
}
