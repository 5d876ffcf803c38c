package livemetrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"benchserve/metrics"
	"benchserve/record"

	dto "github.com/prometheus/client_model/go"
)

// dashboard is the part of a Grafana dashboard the test reads; decoding
// refuses a panel or target field it does not know, so a misspelt key
// fails.
type dashboard struct {
	Title, UID, Description string
	SchemaVersion           int
	// Read by Grafana, not by the test.
	Tags, Editable, GraphTooltip, Refresh, Version, Time, Timepicker, Timezone, Annotations, Links any
	Templating                                                                                     struct {
		List []struct {
			Name, Type, Label, Definition string
			Query, Datasource, Current    any
			IncludeAll, Multi             bool
			AllValue                      string
			Refresh, Sort, Hide           int
			Options                       []any
		}
	}
	Panels []struct {
		ID          int
		Type, Title string
		Description string
		Collapsed   bool
		Datasource  *struct{ Type, UID string }
		GridPos     struct{ H, W, X, Y int }
		FieldConfig json.RawMessage
		Options     json.RawMessage
		Panels      []any
		Targets     []struct {
			RefID        string `json:"refId"`
			Datasource   struct{ Type, UID string }
			Expr         string
			LegendFormat string
			Range        bool
		}
	}
}

// exported is every series name benchserve serves (a histogram's _bucket,
// _sum and _count), with --goodput's.
func exported(t *testing.T) map[string]bool {
	s := New()
	bound := 1.0
	s.Begin("vllm", "m", &metrics.SLO{TTFT: &bound})
	s.Sending()
	s.Ended(&record.Record{Sent: true, ErrorKind: record.KindTimeout}) // a kind of failure to show
	fams, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range fams {
		names[f.GetName()] = true
		if f.GetType() == dto.MetricType_HISTOGRAM {
			for _, suf := range []string{"_bucket", "_sum", "_count"} {
				names[f.GetName()+suf] = true
			}
		}
	}
	return names
}

// engineNames are the servers' names in metrics/names.go (their label
// selectors cut), a histogram's _bucket, _sum and _count among them.
func engineNames() map[string]bool {
	names := map[string]bool{}
	for _, e := range metrics.Engines {
		for _, n := range []string{e.Running, e.Waiting, e.KVUsage, e.Preemptions, e.CacheHits, e.CacheQueries, e.PromptTokens,
			e.GenTokens, e.Accepted, e.Drafted, e.AcceptLength, e.TTFT, e.ITL, e.E2E} {
			n, _, _ = strings.Cut(n, "{")
			if n != "" {
				names[n] = true
			}
		}
		for _, h := range []string{e.TTFT, e.ITL, e.E2E} {
			if h != "" {
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					names[h+suf] = true
				}
			}
		}
	}
	return names
}

var (
	promStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promMatchers = regexp.MustCompile(`\{[^}]*\}`)
	promRanges   = regexp.MustCompile(`\[[^\]]*\]`)
	promGrouping = regexp.MustCompile(`\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	promIdent    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promNumber   = regexp.MustCompile(`\b\d+(\.\d+)?\b`)
)

// promFuncs are the PromQL functions and aggregations the dashboard may
// call.
var promFuncs = map[string]bool{"histogram_quantile": true, "sum": true, "max": true, "min": true, "avg": true, "rate": true,
	"increase": true, "label_values": true}

// metricNames are the series names expr reads: what is left of it once
// strings, label matchers, ranges and groupings are cut, and that is not
// a function; a function the test does not know is an error.
func metricNames(expr string) ([]string, error) {
	e := promStrings.ReplaceAllString(expr, `""`)
	e = promMatchers.ReplaceAllString(e, "")
	e = promRanges.ReplaceAllString(e, "")
	e = promGrouping.ReplaceAllString(e, "")
	e = promNumber.ReplaceAllString(e, "")
	var names []string
	for _, m := range promIdent.FindAllStringSubmatch(e, -1) {
		id := strings.TrimRight(strings.TrimSuffix(strings.TrimSpace(m[0]), "("), " ")
		if m[1] != "" {
			if !promFuncs[id] {
				return nil, fmt.Errorf("%q: function %s", expr, id)
			}
			continue
		}
		names = append(names, id)
	}
	return names, nil
}

// The dashboard in deploy/ loads as Grafana JSON (strictly, for the
// fields read), and every query names series benchserve exports or the
// engines' names of metrics/names.go; each panel has the client's side.
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	data, err := os.ReadFile("../deploy/grafana/benchserve.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var d dashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("benchserve.json: %v", err)
	}
	if d.Title == "" || d.UID == "" || d.SchemaVersion < 36 || len(d.Panels) == 0 {
		t.Fatalf("title %q, uid %q, schemaVersion %d, %d panels", d.Title, d.UID, d.SchemaVersion, len(d.Panels))
	}
	ours, servers := exported(t), engineNames()
	used := map[string]bool{}
	ids := map[int]bool{}
	vars := map[string]bool{}
	for _, v := range d.Templating.List {
		vars[v.Name] = true
	}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Type != "timeseries" || p.Datasource == nil || p.Datasource.Type != "prometheus" || p.GridPos.W == 0 || p.GridPos.H == 0 || len(p.Targets) == 0 {
			t.Errorf("panel %q: type %s, datasource %v, gridPos %v, %d targets", p.Title, p.Type, p.Datasource, p.GridPos, len(p.Targets))
		}
		client := false
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if refs[tg.RefID] || tg.RefID == "" {
				t.Errorf("panel %q: refId %q", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			for _, v := range regexp.MustCompile(`\$(\w+)`).FindAllStringSubmatch(tg.Expr, -1) {
				if !vars[v[1]] && v[1] != "__rate_interval" {
					t.Errorf("panel %q: $%s is no variable of the dashboard", p.Title, v[1])
				}
			}
			names, err := metricNames(tg.Expr)
			if err != nil {
				t.Errorf("panel %q: %v", p.Title, err)
			}
			if len(names) == 0 {
				t.Errorf("panel %q: %q reads no series", p.Title, tg.Expr)
			}
			for _, n := range names {
				used[n] = true
				switch {
				case ours[n]:
					client = true
				case servers[n]:
				default:
					t.Errorf("panel %q: %s is neither benchserve's nor in metrics/names.go (%q)", p.Title, n, tg.Expr)
				}
			}
		}
		if !client && !strings.Contains(p.Title, "KV cache") && !strings.Contains(p.Title, "Preemptions") {
			t.Errorf("panel %q: no client series", p.Title)
		}
	}
	// Every family benchserve serves is on the dashboard.
	for n := range ours {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_sum"), "_count")
		if n == base && !used[n] && !used[n+"_bucket"] {
			t.Errorf("%s is on no panel", n)
		}
	}
	// The run filter reads one of ours.
	for _, v := range d.Templating.List {
		if v.Name == "run_id" && !strings.Contains(v.Query.(map[string]any)["query"].(string), "benchserve_requests_total") {
			t.Errorf("run_id variable: %v", v.Query)
		}
	}
}

// The check of names itself: a misspelt series and an unknown function
// are caught.
func TestMetricNames(t *testing.T) {
	got, err := metricNames(`histogram_quantile(0.99, sum by (le) (rate(benchserve_ttft_seconds_bucket{run_id=~"$run_id", x="a}b"}[$__rate_interval]))) / sum(vllm:num_requests_running)`)
	if err != nil || strings.Join(got, ",") != "benchserve_ttft_seconds_bucket,vllm:num_requests_running" {
		t.Errorf("names %q, %v", got, err)
	}
	if _, err := metricNames(`irate(x[5m])`); err == nil {
		t.Error("an unknown function passed")
	}
}
