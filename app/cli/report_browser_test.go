package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
)

// browse loads a page in headless Chromium: the DOM it built, the console
// messages it logged (any, error or not, since our pages run no script),
// and a screenshot.
func browse(t *testing.T, chromium, path, shot string) (dom string, console []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, chromium, append(flags, "--dump-dom", "file://"+path)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium --dump-dom %s: %v\n%s", path, err, errb.String())
	}
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			console = append(console, l)
		}
	}
	if shot != "" {
		sc := exec.CommandContext(ctx, chromium, append(flags, "--hide-scrollbars", "--window-size=1600,3200", "--screenshot="+shot, "file://"+path)...)
		if b, err := sc.CombinedOutput(); err != nil {
			t.Fatalf("chromium --screenshot: %v\n%s", err, b)
		}
		if st, err := os.Stat(shot); err != nil || st.Size() < 20000 {
			t.Errorf("screenshot %s: %v (%v bytes)", shot, err, st)
		}
		if keep := os.Getenv("BENCHSERVE_KEEP_PAGES"); keep != "" {
			b, _ := os.ReadFile(shot)
			os.WriteFile(filepath.Join(keep, filepath.Base(shot)), b, 0o644)
		}
	}
	return out.String(), console
}

// checkCharts compares the charts the browser built with the page's own
// data: the same charts, in order, each with one mark per data point.
func checkCharts(t *testing.T, dom string, want int) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("no report-data in the DOM")
	}
	var d struct {
		Charts []struct {
			ID     string `json:"id"`
			Series []struct {
				X []float64 `json:"x"`
			} `json:"series"`
		} `json:"charts"`
	}
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatal(err)
	}
	svgs := regexp.MustCompile(`(?s)<svg class="chart" id="([^"]+)".*?</svg>`).FindAllStringSubmatch(dom, -1)
	if len(svgs) != len(d.Charts) || len(svgs) < want {
		t.Fatalf("%d charts in the DOM, %d in the data, want at least %d", len(svgs), len(d.Charts), want)
	}
	for i, s := range svgs {
		n := 0
		for _, se := range d.Charts[i].Series {
			n += len(se.X)
		}
		if s[1] != d.Charts[i].ID || strings.Count(s[0], `class="pt"`) != n || n == 0 {
			t.Errorf("chart %s: %d marks in the DOM, %d points in the data", s[1], strings.Count(s[0], `class="pt"`), n)
		}
	}
}

// The report of a run with its records plus a sweep, and the comparison
// of two runs, each loaded in headless Chromium: no console message, every
// chart there with its data points, a screenshot taken. A page with a
// script error shows that the console check can fail.
func TestReportPagesInBrowser(t *testing.T) {
	t.Parallel()
	chromium := testenv.Chromium(t)
	_, base := newSim(t, steadySim(10*time.Millisecond, 2*time.Millisecond))
	dir := t.TempDir()
	common := []string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "32", "--random-output-len", "8", "--num-prompts", "60", "--warmup-requests", "0"}
	for _, r := range []struct{ name, rate string }{{"a", "40"}, {"b", "80"}} {
		if code, out, errb := run(t, nil, append([]string{"--request-rate", r.rate, "--output-file", filepath.Join(dir, r.name+".jsonl"),
			"--record-file", filepath.Join(dir, r.name+".rec"), "--server-metrics-interval", "0.1",
			"--server-metrics-file", filepath.Join(dir, r.name+".server")}, common...)...); code != 0 {
			t.Fatalf("run %s: exit %d\n%s\n%s", r.name, code, out, errb)
		}
	}
	if code, out, errb := run(t, nil, append([]string{"sweep", "--request-rate", "20,40,80", "--sweep-pause", "0",
		"--output-file", filepath.Join(dir, "s.jsonl")}, common...)...); code != 0 {
		t.Fatalf("sweep: exit %d\n%s\n%s", code, out, errb)
	}
	report := filepath.Join(dir, "report.html")
	if code, out, errb := run(t, nil, "report", filepath.Join(dir, "s.jsonl"), filepath.Join(dir, "a.jsonl"),
		"--records", filepath.Join(dir, "a.rec"), "--server-metrics", filepath.Join(dir, "a.server"), "-o", report); code != 0 || !strings.Contains(out, "Wrote "+report) {
		t.Fatalf("report: exit %d\n%s\n%s", code, out, errb)
	}
	cmp := filepath.Join(dir, "compare.html")
	code, out, errb := run(t, nil, "compare", filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"),
		"--records", filepath.Join(dir, "a.rec"), filepath.Join(dir, "b.rec"), "--html", cmp)
	if code != 0 || !strings.Contains(out, "P99 TTFT (ms)") || !strings.Contains(out, "95% interval of B − A") {
		t.Fatalf("compare: exit %d\n%s\n%s", code, out, errb)
	}
	// Report: 7 load-curve charts, 6 distributions, throughput, in flight,
	// TTFT against send time, and the server's queue, KV cache and
	// generated tokens. Compare: 3 overlaid CDFs.
	for _, p := range []struct {
		path   string
		charts int
	}{{report, 19}, {cmp, 3}} {
		dom, console := browse(t, chromium, p.path, strings.TrimSuffix(p.path, ".html")+".png")
		if len(console) > 0 {
			t.Errorf("%s: console messages:\n%s", p.path, strings.Join(console, "\n"))
		}
		checkCharts(t, dom, p.charts)
	}
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<html><body><script>undefinedFunction()</script></body></html>`), 0o644)
	if _, console := browse(t, chromium, bad, ""); len(console) == 0 {
		t.Error("a page with a script error logged nothing: the console check sees nothing")
	}
}

func TestReportUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"report"}, 2, "give at least one result file"},
		{[]string{"report", "/nonexistent.jsonl"}, 1, "/nonexistent.jsonl: no such file"},
		{[]string{"compare", "a.jsonl"}, 2, "give two result files, A and B"},
		{[]string{"compare", "/x.jsonl", "/y.jsonl", "--records", "r"}, 1, "/x.jsonl"},
	} {
		code, _, stderr := run(t, nil, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte("{\"completed\": 1}\nnot json\n"), 0o644)
	if code, _, stderr := run(t, nil, "report", bad); code != 1 || !strings.Contains(stderr, "bad.jsonl:2: not a result line") {
		t.Errorf("bad line: exit %d, %q", code, stderr)
	}
}
