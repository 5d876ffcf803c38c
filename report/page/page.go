package page

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"benchserve/metrics"
	"benchserve/record"
)

// RecordSet is one run's records from a --record-file: Name is the
// file, Run which of its runs when it holds several ("" when one), Start
// the run's benchmark_start_unix (0 when the file does not say).
type RecordSet struct {
	Name  string
	Run   string
	Start float64
	Recs  []record.Record
	// Steady is the run's steady state (report --steady-state-concurrency-ratio),
	// nil when not asked for: a paragraph and a band on the time series.
	Steady *metrics.Steady
}

// Input is what a report shows.
type Input struct {
	Lines   []Line
	Records []RecordSet
	Server  []ServerSeries
	// Made says what made the page (the client's version).
	Made string
}

// runFigures are the summary table's columns: key, heading.
var runFigures = [][2]string{
	{"completed", "completed"}, {"failed", "failed"}, {"duration", "duration (s)"},
	{"request_throughput", "req/s"}, {"output_throughput", "out tok/s"},
	{"mean_ttft_ms", "TTFT mean"}, {"median_ttft_ms", "TTFT p50"}, {"p99_ttft_ms", "TTFT p99"},
	{"mean_itl_ms", "ITL mean"}, {"p99_itl_ms", "ITL p99"},
	{"mean_e2e_latency_ms", "E2E mean"}, {"p99_e2e_latency_ms", "E2E p99"},
	{"request_goodput", "goodput"},
}

// runData is a run's row as the page's embedded data carries it.
type runData struct {
	File    string              `json:"file"`
	Figures map[string]*float64 `json:"figures"`
}

// Report is the report page: the runs' figures and settings, the load
// curves when there are several, each record file's distributions and
// time series, and the data behind them as JSON (id "report-data").
func Report(in Input) []byte {
	var body strings.Builder
	var charts []Chart
	var runs []runData
	body.WriteString(`<section id="runs"><h2>Runs</h2>`)
	body.WriteString(runTable(in.Lines, &runs))
	for _, l := range in.Lines {
		if l.Has("search_high") || l.Has("search_result") {
			// The runs made at each end (older files: the runs planned).
			kLo, kHi := l.Num["search_confirm_runs"], l.Num["search_confirm_runs"]
			if l.Has("search_low_runs") {
				kLo, kHi = l.Num["search_low_runs"], l.Num["search_high_runs"]
			}
			confirmed := fmt.Sprint(l.Str["search_confirmed"] == "true")
			if b := l.Str["search_budget_ended"]; b != "" && confirmed == "false" {
				confirmed += ": the run budget ended while " + esc(b)
			}
			fmt.Fprintf(&body, `<p class="answer">Search over %s for %s: answer <b>%s</b>, the boundary between %s and %s (met in %s of %s runs at the low end, in %s of %s at the high end; confirmed: %s).</p>`,
				esc(strings.ReplaceAll(l.Str["search_axis"], "_", " ")), esc(strings.Join(l.SLOs, ", ")), num(l.Num["search_result"]),
				num(l.Num["search_low"]), num(l.Num["search_high"]), num(l.Num["search_low_passed"]), num(kLo),
				num(l.Num["search_high_passed"]), num(kHi), confirmed)
		}
	}
	body.WriteString(`</section>`)
	if sc := cleanCharts(sweepCharts(in.Lines)); len(sc) > 0 {
		body.WriteString(`<section id="sweep"><h2>Load curve</h2>`)
		for i := range sc {
			body.WriteString(sc[i].SVG())
		}
		body.WriteString(`</section>`)
		charts = append(charts, sc...)
	}
	for i, rs := range in.Records {
		rc := cleanCharts(recordCharts(fmt.Sprintf("rec%d", i+1), rs.Recs))
		ok := 0
		for _, r := range rs.Recs {
			if r.Success {
				ok++
			}
		}
		fmt.Fprintf(&body, `<section class="records"><h2>Requests of %s</h2><p>%d requests, %d succeeded. Lines are drawn through at most %d points (largest-triangle downsampling); the figures in the table are exact.</p>`,
			esc(rs.title()), len(rs.Recs), ok, maxPoints)
		if st := rs.Steady; st != nil {
			body.WriteString(steadyParagraph(st))
			bandSteady(rc, st)
		}
		for k := range rc {
			body.WriteString(rc[k].SVG())
		}
		body.WriteString(`</section>`)
		charts = append(charts, rc...)
	}
	for i, ss := range in.Server {
		if len(ss.Rows) == 0 {
			continue
		}
		sc := cleanCharts(serverCharts(fmt.Sprintf("srv%d", i+1), ss))
		fmt.Fprintf(&body, `<section class="server"><h2>Server metrics of %s</h2><p>%d reads of the server's /metrics.</p>`, esc(filepath.Base(ss.Name)), len(ss.Rows))
		for k := range sc {
			body.WriteString(sc[k].SVG())
		}
		body.WriteString(`</section>`)
		charts = append(charts, sc...)
	}
	data, _ := json.Marshal(struct {
		Runs   []runData `json:"runs"`
		Charts []Chart   `json:"charts"`
	}{runs, charts})
	return page("benchserve report", in.Made, body.String(), data)
}

// runTable is the runs' settings and figures, one row per result line
// (a search's last line has its own paragraph).
func runTable(lines []Line, runs *[]runData) string {
	var b strings.Builder
	b.WriteString(`<table class="runs"><thead><tr><th>#</th><th>file</th><th>backend</th><th>dataset</th><th>rate</th><th>max conc.</th><th>in/out len</th>`)
	for _, f := range runFigures {
		fmt.Fprintf(&b, `<th>%s</th>`, esc(f[1]))
	}
	b.WriteString(`<th>client verdict</th></tr></thead><tbody>`)
	n := 0
	for _, l := range lines {
		if !l.Has("completed") {
			continue
		}
		n++
		rd := runData{File: l.File, Figures: map[string]*float64{}}
		rate := rateOf(&l)
		conc := "none"
		if v, ok := l.Num["max_concurrency"]; ok {
			conc = num(v)
		}
		fmt.Fprintf(&b, `<tr><td>%d</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s/%s</td>`, n, esc(filepath.Base(l.File)),
			esc(backendOf(&l)), esc(l.Str["dataset_name"]), rate, conc, num(l.Num["random_input_len"]), num(l.Num["random_output_len"]))
		for _, f := range runFigures {
			v, ok := l.Num[f[0]]
			if !ok {
				b.WriteString(`<td>–</td>`)
				continue
			}
			fmt.Fprintf(&b, `<td class="num">%s</td>`, fmt2(v))
			if !math.IsInf(v, 0) && !math.IsNaN(v) {
				x := v
				rd.Figures[f[0]] = &x
			}
		}
		v := l.Str["client_verdict"]
		fmt.Fprintf(&b, `<td class="verdict" title="%s">%s</td></tr>`, esc(v), esc(verdictWord(v)))
		*runs = append(*runs, rd)
	}
	b.WriteString(`</tbody></table><p class="note">Latencies in ms. "goodput" is request goodput (req/s) with --goodput.</p>`)
	return b.String()
}

// backendOf is a line's backend, with its side for a run of benchserve
// ab (each side is a row of its own).
func backendOf(l *Line) string {
	if side := l.Str["ab_side"]; side != "" {
		return l.Str["backend"] + " (side " + side + ")"
	}
	return l.Str["backend"]
}

// verdictWord is a client verdict in one word, for the runs table (the
// whole verdict is the cell's title): ok, unverified, distorted, merged
// (older files' wordings included).
func verdictWord(v string) string {
	switch {
	case v == "":
		return "–"
	case strings.HasPrefix(v, "may be distorted"):
		return "distorted"
	case strings.HasPrefix(v, "not verified"), strings.Contains(v, "not verified"):
		return "unverified"
	case strings.HasPrefix(v, "ok"), strings.HasPrefix(v, "the client had headroom"):
		return "ok"
	case strings.HasPrefix(v, "merged"):
		return "merged"
	}
	if w, _, _ := strings.Cut(v, " "); len(w) <= 12 {
		return strings.TrimRight(w, ":,")
	}
	return "see title"
}

// rateOf is a result line's request rate as the page writes it.
func rateOf(l *Line) string {
	v, ok := l.Num["request_rate"]
	switch {
	case !ok:
		return l.Str["request_rate"]
	case math.IsInf(v, 1):
		return "inf"
	}
	return num(v)
}

func fmt2(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

// cleanCharts drops points JSON cannot carry (NaN, infinities).
func cleanCharts(cs []Chart) []Chart {
	for i := range cs {
		for k := range cs[i].Series {
			s := &cs[i].Series[k]
			var x, y []float64
			for j := range s.X {
				if finite(s.X[j]) && finite(s.Y[j]) {
					x, y = append(x, s.X[j]), append(y, s.Y[j])
				}
			}
			s.X, s.Y = x, y
		}
	}
	return cs
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// page wraps a body in the document: inline style, no script but the
// data, nothing fetched.
func page(title, made, body string, data []byte) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>%s</title><style>%s</style></head><body><header><h1>%s</h1><p class="meta">%s</p></header>`,
		esc(title), css, esc(title), esc(made))
	b.WriteString(body)
	// "</" cannot end the script early: encoding/json escapes < as \u003c.
	fmt.Fprintf(&b, `<script type="application/json" id="report-data">%s</script></body></html>`, data)
	return []byte(b.String())
}

const css = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1600px;padding:0 16px;color:#222}
h1{font-size:22px;margin:0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}.meta,.note{color:#666}
table{border-collapse:collapse;font-size:12.5px;margin:8px 0}th,td{border:1px solid #ddd;padding:3px 6px;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums}
th{background:#f4f4f4}.verdict{max-width:360px;font-size:11.5px;color:#444}.answer{background:#eef6ee;border-left:4px solid #2ca02c;padding:6px 10px}
.better{color:#1a7f37}.worse{color:#c62828}
svg.chart{width:49%;min-width:420px;height:auto;display:inline-block;vertical-align:top;margin:4px 0}
svg .title{font-size:14px;font-weight:600;text-anchor:middle}svg .tick{font-size:11px;fill:#555}svg .axis{font-size:12px;fill:#333}
svg .plot{fill:#fff;stroke:#bbb}svg .grid{stroke:#eee}svg .line{stroke-width:1.6}svg .pt{stroke:none}svg circle.pt:hover{r:5}
svg .ref{stroke:#c62828;stroke-dasharray:5 4}svg .reflabel{font-size:11px;fill:#c62828}svg .band{fill:#2ca02c;opacity:.15}svg .legend text{font-size:11px}
@media print{body{max-width:none;margin:0}svg.chart{width:48%;min-width:0;break-inside:avoid}section{break-inside:avoid-page}}`

// title names the set on the page: the file, and the run in it.
func (rs RecordSet) title() string {
	if rs.Run == "" {
		return filepath.Base(rs.Name)
	}
	return filepath.Base(rs.Name) + ", " + rs.Run
}
