package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/internal/testenv"
	"benchserve/sim"
)

// perURL is the part of the result line's per_url entries the tests read.
type perURL struct {
	URL          string  `json:"url"`
	Completed    int     `json:"completed"`
	Failed       int     `json:"failed"`
	ReqTput      float64 `json:"request_throughput"`
	OutTput      float64 `json:"output_throughput"`
	OutputTokens int     `json:"total_output_tokens"`
	MeanTTFT     float64 `json:"mean_ttft_ms"`
	P99E2E       float64 `json:"p99_e2e_latency_ms"`
}

type urlResult struct {
	PerURL          []perURL `json:"per_url"`
	Completed       int      `json:"completed"`
	TotalOutput     int      `json:"total_output_tokens"`
	ReqTput         float64  `json:"request_throughput"`
	ServerGenerated *float64 `json:"server_generated_tokens"`
}

func readURLResult(t *testing.T, path string) urlResult {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var res urlResult
	line := strings.ReplaceAll(strings.TrimSpace(string(data)), "Infinity", "null")
	if err := json.Unmarshal([]byte(line), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// recordURLs counts the record file's lines by their "url" key (-1: none).
func recordURLs(t *testing.T, path string) map[int]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := map[int]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m struct {
			URL *int `json:"url"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if m.URL == nil {
			n[-1]++
		} else {
			n[*m.URL]++
		}
	}
	return n
}

// Two simulators behind --base-url A --base-url B: round-robin splits an
// even plan exactly in half, random (seeded, comma-separated form) about
// in half; either way each URL's per_url counts and output tokens are
// what its simulator recorded serving, the records say where each went,
// the URLs' figures add up to the run's, and the server view sums both
// servers' /metrics.
func TestTwoURLsMatchEachSimulatorsTruth(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	_, a := newSim(t, cfg)
	_, b := newSim(t, cfg)
	for _, tc := range []struct {
		name string
		url  []string
		n    int
	}{
		{"round-robin", []string{"--base-url", a, "--base-url", b + "/"}, 100},
		{"random", []string{"--base-url", a + "," + b, "--url-strategy", "random"}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, u := range []string{a, b} {
				if code, err := httpPost(u + "/sim/truth/reset"); err != nil || code != 200 {
					t.Fatalf("truth reset: %v %d", err, code)
				}
			}
			dir := t.TempDir()
			out, rec := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "rec.jsonl")
			args := append([]string{"--dataset-name", "random-ids", "--random-input-len", "16", "--random-output-len", "8",
				"--num-prompts", itoa(tc.n), "--max-concurrency", "8", "--warmup-requests", "0",
				"--output-file", out, "--record-file", rec}, tc.url...)
			code, stdout, stderr := run(t, nil, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			res := readURLResult(t, out)
			if len(res.PerURL) != 2 {
				t.Fatalf("per_url has %d entries, want 2", len(res.PerURL))
			}
			byRecord := recordURLs(t, rec)
			sumReq, sumOut, sumTput := 0, 0, 0.0
			for i, u := range []string{a, b} {
				p := res.PerURL[i]
				if p.URL != u {
					t.Errorf("per_url[%d].url = %q, want %q", i, p.URL, u)
				}
				truth := getJSON[simTruth](t, u+"/sim/truth")
				tokens := 0
				for _, r := range truth.Requests {
					tokens += r.CompletionTokens
				}
				if p.Completed != len(truth.Requests) || p.OutputTokens != tokens || p.Failed != 0 {
					t.Errorf("URL %d: per_url completed %d, output tokens %d, failed %d; the simulator served %d requests, %d tokens",
						i, p.Completed, p.OutputTokens, p.Failed, len(truth.Requests), tokens)
				}
				if byRecord[i] != p.Completed {
					t.Errorf("URL %d: %d record lines say url %d, per_url completed %d", i, byRecord[i], i, p.Completed)
				}
				if p.MeanTTFT <= 0 || p.P99E2E <= 0 || p.OutTput <= 0 {
					t.Errorf("URL %d: figures missing: %+v", i, p)
				}
				sumReq += p.Completed
				sumOut += p.OutputTokens
				sumTput += p.ReqTput
			}
			if byRecord[-1] != 0 {
				t.Errorf("%d record lines without a url", byRecord[-1])
			}
			if sumReq != tc.n || res.Completed != tc.n || sumOut != res.TotalOutput {
				t.Errorf("per_url adds up to %d requests and %d tokens; the run has %d (plan %d) and %d", sumReq, sumOut, res.Completed, tc.n, res.TotalOutput)
			}
			if d := sumTput - res.ReqTput; d > 1e-9*res.ReqTput || d < -1e-9*res.ReqTput {
				t.Errorf("per_url request throughputs add up to %v, the run's is %v", sumTput, res.ReqTput)
			}
			// Round-robin over an even plan is exactly half each; random
			// is a fair draw (its split is tested at scale in package bench).
			c0 := res.PerURL[0].Completed
			if tc.name == "round-robin" && c0 != tc.n/2 {
				t.Errorf("round-robin sent %d of %d to the first URL, want exactly half", c0, tc.n)
			}
			if tc.name == "random" && (c0 < tc.n/4 || c0 > 3*tc.n/4) {
				t.Errorf("random sent %d of %d to the first URL", c0, tc.n)
			}
			if res.ServerGenerated == nil || int(*res.ServerGenerated) != res.TotalOutput {
				t.Errorf("server_generated_tokens %v, want both servers' sum %d", res.ServerGenerated, res.TotalOutput)
			}
			if !strings.Contains(stdout, "---------------------Per URL----------------------") ||
				!strings.Contains(stdout, "URL 1:") {
				t.Errorf("no Per URL section in the output:\n%s", stdout)
			}
		})
	}
}

// One URL: no per_url key, no url in the records, no Per URL section.
func TestOneURLHasNoPerURL(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	_, a := newSim(t, cfg)
	dir := t.TempDir()
	out, rec := filepath.Join(dir, "r.jsonl"), filepath.Join(dir, "rec.jsonl")
	code, stdout, stderr := run(t, nil, "--base-url", a, "--dataset-name", "random-ids", "--random-input-len", "16",
		"--random-output-len", "8", "--num-prompts", "10", "--warmup-requests", "0", "--output-file", out, "--record-file", rec)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	line := readLine(t, out)
	if _, ok := line["per_url"]; ok {
		t.Error("a run of one URL has a per_url key")
	}
	if n := recordURLs(t, rec); n[-1] != 10 {
		t.Errorf("record lines by url: %v, want 10 without one", n)
	}
	if strings.Contains(stdout, "Per URL") {
		t.Error("a run of one URL prints a Per URL section")
	}
}

// A URL that is not ready fails the run before it starts, named.
func TestURLNotReadyFailsNamingIt(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	_, a := newSim(t, cfg)
	dead := "http://" + testenv.RefusedAddr(t)
	code, stdout, stderr := run(t, nil, "--base-url", a, "--base-url", dead, "--dataset-name", "random-ids",
		"--num-prompts", "4", "--ready-check-timeout-sec", "1", "--output-file", filepath.Join(t.TempDir(), "r.jsonl"))
	if code == 0 {
		t.Fatalf("exit 0 with a dead URL\n%s", stdout)
	}
	if !strings.Contains(stderr, "--base-url "+dead) {
		t.Errorf("the error does not name %s:\n%s\n%s", dead, stdout, stderr)
	}
}

// An empty item of --base-url is a usage error naming the flag, before
// any network call.
func TestBaseURLEmptyItem(t *testing.T) {
	for _, args := range [][]string{
		{"--base-url", "http://a:1,,http://b:2"},
		{"--base-url", "http://a:1", "--base-url", ""},
		{"--base-url", "http://a:1,"},
	} {
		code, _, stderr := run(t, nil, append(args, "--num-prompts", "1")...)
		if code != 2 || !strings.Contains(stderr, "--base-url: item") || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("%q: exit %d, stderr %q; want a usage error naming --base-url", args, code, stderr)
		}
	}
}

// Shards of a run of two URLs send each position where the single run
// would; merged, per_url is each simulator's truth.
func TestTwoURLsShardsMerge(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	_, a := newSim(t, cfg)
	_, b := newSim(t, cfg)
	dir := t.TempDir()
	var files []string
	for i := range 3 {
		rec := filepath.Join(dir, "shard-"+itoa(i)+".jsonl")
		files = append(files, rec)
		code, stdout, stderr := run(t, nil, "--base-url", a, "--base-url", b, "--dataset-name", "random-ids",
			"--random-input-len", "16", "--random-output-len", "8", "--num-prompts", "30", "--warmup-requests", "0",
			"--shard", itoa(i)+"/3", "--start-in", "0.1", "--record-file", rec, "--output-file", filepath.Join(dir, "s.jsonl"))
		if code != 0 {
			t.Fatalf("shard %d: exit %d\n%s\n%s", i, code, stdout, stderr)
		}
	}
	out := filepath.Join(dir, "merged.jsonl")
	if code, stdout, stderr := run(t, nil, append(append([]string{"merge"}, files...), "--output-file", out)...); code != 0 {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	res := readURLResult(t, out)
	if len(res.PerURL) != 2 {
		t.Fatalf("merged per_url has %d entries, want 2", len(res.PerURL))
	}
	for i, u := range []string{a, b} {
		truth := getJSON[simTruth](t, u+"/sim/truth")
		tokens := 0
		for _, r := range truth.Requests {
			tokens += r.CompletionTokens
		}
		if p := res.PerURL[i]; p.URL != u || p.Completed != 15 || p.Completed != len(truth.Requests) || p.OutputTokens != tokens {
			t.Errorf("merged per_url[%d] = %+v; the simulator at %s served %d requests, %d tokens (want 15 each)", i, p, u, len(truth.Requests), tokens)
		}
	}
}
