package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"benchserve/internal/testenv"
	"benchserve/metrics"
)

// abFigure is one figure of the "ab" key of B's result line.
type abFigure struct {
	Key     string   `json:"key"`
	A       *float64 `json:"a"`
	B       *float64 `json:"b"`
	Diff    *float64 `json:"diff"`
	Pct     *float64 `json:"pct"`
	Low     *float64 `json:"ci95_low"`
	High    *float64 `json:"ci95_high"`
	PctLow  *float64 `json:"pct_ci95_low"`
	PctHigh *float64 `json:"pct_ci95_high"`
	Verdict string   `json:"verdict"`
	TooFew  string   `json:"too_few"`
}

type abLines struct {
	sides   []map[string]any
	pairs   int
	figures map[string]abFigure
	regs    []struct {
		Limit  string  `json:"limit"`
		Bound  float64 `json:"bound"`
		Failed bool    `json:"failed"`
	}
}

// readAB reads an A/B run's two result lines.
func readAB(t *testing.T, path string) abLines {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out abLines
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		l = strings.NewReplacer("NaN", "null", "-Infinity", "null", "Infinity", "null").Replace(l)
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		out.sides = append(out.sides, m)
		var ab struct {
			AB *struct {
				Pairs   int        `json:"pairs"`
				Figures []abFigure `json:"figures"`
				Regs    []struct {
					Limit  string  `json:"limit"`
					Bound  float64 `json:"bound"`
					Failed bool    `json:"failed"`
				} `json:"regressions"`
			} `json:"ab"`
		}
		if err := json.Unmarshal([]byte(l), &ab); err != nil {
			t.Fatal(err)
		}
		if ab.AB != nil {
			out.pairs, out.regs = ab.AB.Pairs, ab.AB.Regs
			out.figures = map[string]abFigure{}
			for _, f := range ab.AB.Figures {
				out.figures[f.Key] = f
			}
		}
	}
	if len(out.sides) != 2 || out.sides[0]["ab_side"] != "A" || out.sides[1]["ab_side"] != "B" || out.figures == nil {
		t.Fatalf("want lines of sides A then B, B's with the comparison; got %d lines: %s", len(out.sides), data)
	}
	return out
}

func TestABSim(t *testing.T) {
	out := filepath.Join(t.TempDir(), "ab.jsonl")
	recs := filepath.Join(t.TempDir(), "recs.jsonl")
	code, stdout, stderr := run(t, nil, "ab", "--sim", "--sim-preset", "instant", "--dataset-name", "random-ids", "--num-prompts", "12",
		"--random-input-len", "16", "--random-output-len", "6", "--random-range-ratio", "1", "--max-concurrency", "3",
		"--output-file", out, "--record-file", recs, "--goodput", "ttft:1000")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"Side A: http://", "Side B: http://", "A/B (B − A)", "Pairs: 6 ", "Mean TTFT (ms):", "Request goodput (req/s):"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in the output:\n%s", want, stdout)
		}
	}
	l := readAB(t, out)
	if l.pairs != 6 {
		t.Errorf("pairs %d, want 6", l.pairs)
	}
	for s, side := range l.sides {
		if side["completed"] != 6.0 || side["max_concurrency"] != 3.0 {
			t.Errorf("side %d: completed %v, max_concurrency %v; want 6 and 3 (each side its own limit)", s, side["completed"], side["max_concurrency"])
		}
	}
	keys := metrics.ABKeys(true)
	if len(l.figures) != len(keys) {
		t.Errorf("figures %v, want %v", l.figures, keys)
	}
	for _, k := range keys {
		f, ok := l.figures[k]
		switch {
		case !ok:
			t.Errorf("no figure %s", k)
		case f.Verdict != metrics.ABBetter && f.Verdict != metrics.ABWorse && f.Verdict != metrics.ABSame && f.Verdict != metrics.ABTooFew:
			t.Errorf("%s: verdict %q", k, f.Verdict)
		case f.Verdict == metrics.ABTooFew && f.TooFew == "", f.Verdict != metrics.ABTooFew && (f.Low == nil || f.High == nil):
			t.Errorf("%s: verdict %q with interval %v %v (%q)", k, f.Verdict, f.Low, f.High, f.TooFew)
		}
	}
	// benchserve report draws each side as a run of its own.
	html := filepath.Join(t.TempDir(), "r.html")
	if code, so, se := run(t, nil, "report", out, "-o", html); code != 0 {
		t.Fatalf("report: exit %d\n%s\n%s", code, so, se)
	}
	page, _ := os.ReadFile(html)
	if !strings.Contains(string(page), "sglang (side A)") || !strings.Contains(string(page), "sglang (side B)") {
		t.Errorf("the report page has no row for each side")
	}
	// The records carry their side as the URL index, and each pair has
	// one of each.
	data, err := os.ReadFile(recs)
	if err != nil {
		t.Fatal(err)
	}
	sides := map[int]int{}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r struct {
			Seq *int `json:"seq"`
			URL int  `json:"url"`
		}
		if json.Unmarshal([]byte(line), &r) != nil || r.Seq == nil {
			continue
		}
		n++
		sides[*r.Seq/2] += 1 << (2 * r.URL) // one A (1) and one B (4) per pair
	}
	if n != 12 {
		t.Fatalf("%d records, want 12", n)
	}
	for k, v := range sides {
		if v != 5 {
			t.Errorf("pair %d: sides %b, want one each", k, v)
		}
	}
}

func TestABUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--num-prompts", "4"}, "--b-base-url: required"},
		{[]string{"--b-base-url", "http://127.0.0.1:1", "--b-sim-decode-scale", "1.1"}, "--b-sim-decode-scale: only with --sim"},
		{[]string{"--sim", "--b-base-url", "http://127.0.0.1:1"}, "--sim starts both servers"},
		{[]string{"--sim", "--b-sim-decode-scale", "0"}, "--b-sim-decode-scale: must be a number > 0"},
		{[]string{"--sim", "--ab-max-regression", "p99_ttft_ms"}, "expected KEY:PERCENT%"},
		{[]string{"--sim", "--ab-max-regression", "p99_tft_ms:5%"}, `"p99_tft_ms" is not a figure`},
		{[]string{"--sim", "--ab-max-regression", "p99_ttft_ms:-5%"}, "is not a number >= 0"},
		{[]string{"--sim", "--ab-max-regression", "request_goodput:5%"}, "request_goodput needs --goodput"},
		{[]string{"--b-base-url", "127.0.0.1:1"}, "--b-base-url 127.0.0.1:1: no scheme"},
		{[]string{"--b-base-url", "http://127.0.0.1:1", "--b-backend", "vllm-chat"}, "--b-backend vllm-chat: B sends A's prompts"},
		{[]string{"--b-base-url", "http://127.0.0.1:1", "--shard", "0/2"}, "--shard: an A/B run is one process"},
		{[]string{"--b-base-url", "http://127.0.0.1:1", "--b-extra-request-body", "{"}, "--b-extra-request-body:"},
	} {
		code, stdout, stderr := run(t, nil, append([]string{"ab"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q (want 2 and one line with %q)\n%s", c.args, code, stderr, c.want, stdout)
		}
	}
}

// abSims starts two steady simulators (see steadySim), B's decode steps
// scale times A's, and returns their URLs.
func abSims(t *testing.T, step time.Duration, scale float64) (string, string) {
	a := steadySim(0, step)
	b := steadySim(0, time.Duration(float64(step)*scale))
	_, ua := newSim(t, a)
	_, ub := newSim(t, b)
	return ua, ub
}

// TestABSlowerDecode is issue 31's first check: against a B whose decode
// steps take 10% longer, the comparison finds B worse on ITL and TPOT
// (mean and median), the intervals of the mean ITL and TPOT covering the
// true +10%; and --ab-max-regression fails on it (exit 4) but not on a
// bound the interval does not reach. Few arrivals per decode step: a
// simulator that runs late (a loaded machine) moves its clock at each
// arrival, which adds the same to both sides' gaps and pulls the ratio
// below 1.1 (at 100 requests/s, to +9.3% on a 2-core machine at load 15).
func TestABSlowerDecode(t *testing.T) {
	testenv.Statistical(t)
	a, b := abSims(t, 20*time.Millisecond, 1.1)
	out := filepath.Join(t.TempDir(), "ab.jsonl")
	code, stdout, stderr := run(t, nil, "ab", "--base-url", a, "--b-base-url", b, "--dataset-name", "random-ids",
		"--num-prompts", "200", "--random-input-len", "32", "--random-output-len", "32", "--random-range-ratio", "1",
		"--request-rate", "25", "--warmup-requests", "0", "--output-file", out, "--seed", "7",
		"--ab-max-regression", "mean_itl_ms:2%", "--ab-max-regression", "mean_itl_ms:30%")
	if code != 4 || !strings.Contains(stderr, "mean_itl_ms:2%") || strings.Contains(stderr, "mean_itl_ms:30%") {
		t.Fatalf("exit %d, want 4 for mean_itl_ms:2%% alone\n%s\n%s", code, stdout, stderr)
	}
	l := readAB(t, out)
	for _, k := range []string{"mean_itl_ms", "median_itl_ms", "mean_tpot_ms", "median_tpot_ms"} {
		f := l.figures[k]
		t.Logf("%s: %s, %+.2f%% in [%+.2f%%, %+.2f%%]", k, f.Verdict, deref(f.Pct), deref(f.PctLow), deref(f.PctHigh))
		covers := f.PctLow != nil && *f.PctLow <= 10 && 10 <= *f.PctHigh
		if f.Verdict != metrics.ABWorse || strings.HasPrefix(k, "mean") && !covers {
			t.Errorf("%s: %s, %+v%% in [%v, %v]; want B worse (for a mean, with the interval covering +10%%)\n%s",
				k, f.Verdict, deref(f.Pct), deref(f.PctLow), deref(f.PctHigh), stdout)
		}
	}
	if len(l.regs) != 2 || !l.regs[0].Failed || l.regs[1].Failed {
		t.Errorf("regressions %+v, want the 2%% one failed and the 30%% one passed", l.regs)
	}
}

// TestABIdentical is issue 31's second check: two identical simulators
// show no difference on any figure in at least 9 runs of 10 (seeds 1 to
// 10), P99s included (600 requests a side resolve them).
func TestABIdentical(t *testing.T) {
	testenv.Statistical(t)
	a, b := abSims(t, 10*time.Millisecond, 1)
	clean := 0
	var report []string
	for seed := 1; seed <= 10; seed++ {
		out := filepath.Join(t.TempDir(), "ab.jsonl")
		code, stdout, stderr := run(t, nil, "ab", "--base-url", a, "--b-base-url", b, "--dataset-name", "random-ids",
			"--num-prompts", "1200", "--random-input-len", "16", "--random-output-len", "8", "--random-range-ratio", "1",
			"--request-rate", "300", "--output-file", out, "--seed", fmt.Sprint(seed))
		if code != 0 {
			t.Fatalf("seed %d: exit %d\n%s\n%s", seed, code, stdout, stderr)
		}
		l := readAB(t, out)
		var differ []string
		for k, f := range l.figures {
			switch f.Verdict {
			case metrics.ABSame:
			case metrics.ABTooFew:
				t.Errorf("seed %d: %s has no interval: %s", seed, k, f.TooFew)
			default:
				differ = append(differ, fmt.Sprintf("%s %s (%+.2f%% in [%+.2f%%, %+.2f%%])", k, f.Verdict, deref(f.Pct), deref(f.PctLow), deref(f.PctHigh)))
			}
		}
		if len(differ) == 0 {
			clean++
		}
		report = append(report, fmt.Sprintf("seed %d: %d figures differ %v", seed, len(differ), differ))
	}
	t.Logf("%s", strings.Join(report, "\n"))
	if clean < 9 {
		t.Fatalf("no difference on every figure in %d of 10 runs, want at least 9:\n%s", clean, strings.Join(report, "\n"))
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}
