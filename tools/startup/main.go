// Command startup measures a benchserve client's start-up: from just
// before the process is started to the simulator's receive time of its
// first request (the simulator's GET /sim/truth: started_unix plus the
// earliest arrival), for one or more builds, runs alternating:
//
//	benchserve sim --port 43210 &
//	go run ./tools/startup -url http://127.0.0.1:43210 -n 10 ./old ./new
//
// Each run is a random-ids run of 100 prompts of 128 tokens, 8 out, at
// once (docs/performance.md, Start-up). It prints each run and, for each
// build, the minimum, median and maximum in ms.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:30000", "a running benchserve sim")
	n := flag.Int("n", 10, "runs of each build")
	flag.Parse()
	bins := flag.Args()
	if len(bins) == 0 {
		fmt.Fprintln(os.Stderr, "startup: name one or more benchserve binaries")
		os.Exit(2)
	}
	dir, err := os.MkdirTemp("", "startup")
	if err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "result.jsonl")
	ms := map[string][]float64{}
	for i := range *n {
		for j := range bins {
			bin := bins[(i+j)%len(bins)] // each build first in turn
			d, err := once(*url, bin, out)
			if err != nil {
				fmt.Fprintf(os.Stderr, "startup: %s: %v\n", bin, err)
				os.RemoveAll(dir)
				os.Exit(1)
			}
			ms[bin] = append(ms[bin], d)
			fmt.Printf("%s %.1f ms\n", bin, d)
		}
	}
	for _, bin := range bins {
		v := ms[bin]
		slices.Sort(v)
		fmt.Printf("%s: %d runs, min %.1f, median %.1f, max %.1f ms\n", bin, len(v), v[0], median(v), v[len(v)-1])
	}
}

// once runs bin against url (its result line appended to out) and returns the time from its start to the
// simulator's receipt of its first request, in ms.
func once(url, bin, out string) (float64, error) {
	resp, err := http.Post(url+"/sim/truth/reset", "", nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	cmd := exec.Command(bin, "--backend", "sglang", "--base-url", url, "--dataset-name", "random-ids",
		"--random-input-len", "128", "--random-output-len", "8", "--num-prompts", "100",
		"--request-rate", "inf", "--disable-tqdm", "--output-file", out)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	resp, err = http.Get(url + "/sim/truth")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var truth struct {
		Started  float64 `json:"started_unix"`
		Requests []struct {
			Arrival float64 `json:"arrival"`
		} `json:"requests"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&truth); err != nil {
		return 0, fmt.Errorf("/sim/truth: %v", err)
	}
	first := math.Inf(1)
	for _, r := range truth.Requests {
		first = min(first, r.Arrival)
	}
	if math.IsInf(first, 1) {
		return 0, fmt.Errorf("the simulator received no request")
	}
	return ((truth.Started+first)*1e9 - float64(start.UnixNano())) / 1e6, nil
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
