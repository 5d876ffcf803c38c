package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"

	"benchserve/internal/exit"
	"benchserve/internal/release"
	"benchserve/internal/testenv"
)

// A plan split over 2 and over 4 shards (processes sharing the simulator
// and a common start), merged, is the single run with the same seed: the
// same planned send times and prompts for the same requests, the same
// completed count and token totals, latency percentiles within the
// measurement error; and merging a run's own records gives its figures
// exactly.
func TestShardsMergeToTheSingleRun(t *testing.T) {
	testenv.Slow(t) // shards' starts within 50 ms of the common start, and latencies against a single run's
	_, base := newSim(t, steadySim(10*time.Millisecond, 2*time.Millisecond))
	dir := t.TempDir()
	common := []string{"--backend", "sglang", "--base-url", base, "--dataset-name", "random-ids",
		"--random-input-len", "32", "--random-output-len", "6", "--num-prompts", "48", "--request-rate", "40",
		"--warmup-requests", "0", "--no-server-metrics"}
	single, singleRec := filepath.Join(dir, "single.jsonl"), filepath.Join(dir, "single.rec")
	if code, out, errb := run(t, nil, append([]string{"--output-file", single, "--record-file", singleRec, "--shard", "0/1", "--start-in", "0.2"}, common...)...); code != 0 {
		t.Fatalf("single: exit %d\n%s\n%s", code, out, errb)
	}
	want := readLine(t, single)
	wantRecs := recordsBySeq(t, singleRec)

	// The single run's own records, merged, give its figures exactly.
	mergedSelf := filepath.Join(dir, "self.jsonl")
	if code, out, errb := run(t, nil, "merge", singleRec, "--output-file", mergedSelf); code != 0 {
		t.Fatalf("merge of one: exit %d\n%s\n%s", code, out, errb)
	}
	self := readLine(t, mergedSelf)
	for _, k := range []string{"completed", "total_input_tokens", "total_output_tokens", "mean_ttft_ms", "p99_ttft_ms", "median_itl_ms", "p99_itl_ms", "mean_e2e_latency_ms", "p99_e2e_latency_ms"} {
		if self[k] != want[k] {
			t.Errorf("merge of the single run's records: %s = %v, the run's %v", k, self[k], want[k])
		}
	}

	for _, n := range []int{2, 4} {
		t.Run(strconv.Itoa(n)+" shards", func(t *testing.T) {
			// Time for every shard to prepare first (tokenizer, plan, warmup
			// under -race on a loaded machine): a shard ready after the
			// common start reports how late it was, which fails the check.
			start := float64(time.Now().Add(5*time.Second).UnixNano()) / 1e9
			var wg sync.WaitGroup
			var files []string
			errs := make([]string, n)
			for i := range n {
				rec := filepath.Join(dir, "n"+strconv.Itoa(n)+"-"+strconv.Itoa(i)+".rec")
				files = append(files, rec)
				wg.Add(1)
				go func() {
					defer wg.Done()
					code, out, errb := run(t, nil, append([]string{"--shard", strconv.Itoa(i) + "/" + strconv.Itoa(n), "--start-at", strconv.FormatFloat(start, 'f', -1, 64),
						"--record-file", rec, "--output-file", filepath.Join(dir, "n"+strconv.Itoa(n)+"-"+strconv.Itoa(i)+".jsonl")}, common...)...)
					if code != 0 {
						errs[i] = out + errb
					}
				}()
			}
			wg.Wait()
			for i, e := range errs {
				if e != "" {
					t.Fatalf("shard %d: %s", i, e)
				}
			}
			merged := filepath.Join(dir, "merged"+strconv.Itoa(n)+".jsonl")
			code, out, errb := run(t, nil, append([]string{"merge", "--output-file", merged}, files...)...)
			if code != 0 || !strings.Contains(out, "Serving Benchmark Result") || !strings.Contains(out, "Shard "+strconv.Itoa(n-1)+"/"+strconv.Itoa(n)+":") {
				t.Fatalf("merge: exit %d\n%s\n%s", code, out, errb)
			}
			got := readLine(t, merged)
			for _, k := range []string{"completed", "total_input_tokens", "total_output_tokens", "request_rate", "random_input_len"} {
				if got[k] != want[k] {
					t.Errorf("%s = %v merged, %v in the single run", k, got[k], want[k])
				}
			}
			// The same requests, planned at the same times, with the same prompts.
			var gotRecs []recLine
			for _, f := range files {
				gotRecs = append(gotRecs, recordsBySeq(t, f)...)
			}
			sort.Slice(gotRecs, func(a, b int) bool { return gotRecs[a].Seq < gotRecs[b].Seq })
			if len(gotRecs) != len(wantRecs) {
				t.Fatalf("%d records in the shards, %d in the single run", len(gotRecs), len(wantRecs))
			}
			for i := range gotRecs {
				g, w := gotRecs[i], wantRecs[i]
				if g.Seq != w.Seq || g.Intended != w.Intended || g.InputLen != w.InputLen || g.OutputLen != w.OutputLen {
					t.Fatalf("request %d: %+v in the shards, %+v alone", i, g, w)
				}
			}
			// Latencies: the same server and load, so the same order of
			// magnitude. The simulator's steps are real time, and n client
			// processes beside it on a loaded 2-core machine make them run
			// late (a 4-shard run's mean E2E read 30 ms against 22 alone), so
			// the bound is loose; that merging computes the figures exactly
			// is shown above, by merging the single run's own records.
			for _, k := range []string{"median_ttft_ms", "mean_e2e_latency_ms", "median_itl_ms"} {
				if g, w := num(t, got, k), num(t, want, k); g > 2*w+5 || g < w/2-5 {
					t.Errorf("%s = %v merged, %v alone", k, got[k], want[k])
				}
			}
			shards := got["shards"].([]any)
			if len(shards) != n {
				t.Errorf("%d shard checks", len(shards))
			}
			if got["complete"] != true || num(t, got, "planned_requests") != 48 || num(t, got, "merged_records") != 48 {
				t.Errorf("complete %v, %v of %v planned requests merged", got["complete"], got["merged_records"], got["planned_requests"])
			}
			for _, s := range shards {
				if st := s.(map[string]any)["status"]; st != "finished" {
					t.Errorf("shard %v: status %v", s.(map[string]any)["shard"], st)
				}
				if off := num(t, s.(map[string]any), "start_offset_ms"); math.Abs(off) > 50 {
					t.Errorf("shard %v started %v ms off the common start", s.(map[string]any)["shard"], off)
				}
			}
		})
	}
}

type recLine struct {
	Seq       int     `json:"seq"`
	Intended  float64 `json:"intended"`
	InputLen  int     `json:"input_len"`
	OutputLen int     `json:"output_len"`
}

func recordsBySeq(t *testing.T, path string) []recLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []recLine
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.Contains(l, `"seq"`) {
			continue // the shard's header and end lines
		}
		var r recLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Seq < out[b].Seq })
	return out
}

// The sample manifest in deploy/k8s is what k8s-job prints for its
// flags, and every object in it decodes into the Kubernetes API's own
// types with no unknown field: an Indexed Job of 4 pods, each running
// shard $(JOB_COMPLETION_INDEX)/4 from the common start, and the merge Job.
func TestK8sManifest(t *testing.T) {
	code, out, errb := run(t, nil, "k8s-job", "--shards", "4", "--start-at", "1798000000", "--image", "registry.example.com/benchserve:v1", "--",
		"--backend", "vllm", "--base-url", "http://vllm.default.svc:8000", "--model", "meta-llama/Llama-3.1-8B-Instruct",
		"--dataset-name", "random-ids", "--random-input-len", "1024", "--random-output-len", "256", "--request-rate", "400",
		"--duration", "600", "--max-concurrency", "2048")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	sample, err := os.ReadFile("../../deploy/k8s/benchserve-job.json")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(sample) {
		t.Errorf("deploy/k8s/benchserve-job.json is not what k8s-job prints; regenerate it (the command is in docs/scale-out.md)")
	}
	var list struct{ APIVersion, Kind string }
	if err := json.Unmarshal(sample, &list); err != nil || list.APIVersion != "v1" || list.Kind != "List" {
		t.Fatalf("list: %v %s %s", err, list.APIVersion, list.Kind)
	}
	jobs := strictJobs(t, string(sample))
	shards, merge := jobs[0], jobs[1]
	if *shards.Spec.CompletionMode != batchv1.IndexedCompletion || *shards.Spec.Completions != 4 || *shards.Spec.Parallelism != 4 {
		t.Errorf("shard job spec %+v", shards.Spec)
	}
	// A lost shard fails its index only, not retried, and the others run on.
	if p := shards.Spec.BackoffLimitPerIndex; p == nil || *p != 0 || shards.Spec.BackoffLimit != nil {
		t.Errorf("shard job: backoffLimitPerIndex %v, backoffLimit %v; want 0 and unset", p, shards.Spec.BackoffLimit)
	}
	c := shards.Spec.Template.Spec.Containers[0]
	if !reflect.DeepEqual(c.Args[:4], []string{"--shard", "$(JOB_COMPLETION_INDEX)/4", "--start-at", "1798000000"}) || c.Env[0].Name != "JOB_COMPLETION_INDEX" {
		t.Errorf("shard container %v %v", c.Args, c.Env)
	}
	if c.Resources.Requests.Memory().String() != "128Mi" || c.Resources.Requests.Cpu().String() != "762m" {
		t.Errorf("requests for 512 streams: %v %v", c.Resources.Requests.Memory(), c.Resources.Requests.Cpu())
	}
	if m := merge.Spec.Template.Spec.Containers[0]; m.Args[0] != "merge" || m.Args[1] != "/records/records-*.jsonl" {
		t.Errorf("merge container %v", m.Args)
	}
	// The pods can write the volume as the release image's user.
	for _, j := range jobs {
		if sc := j.Spec.Template.Spec.SecurityContext; sc == nil || sc.FSGroup == nil || *sc.FSGroup != release.UID {
			t.Errorf("%s: pod securityContext %+v, want fsGroup %d", j.Name, sc, release.UID)
		}
		if a := j.Spec.Template.Spec.AutomountServiceAccountToken; a == nil || *a {
			t.Errorf("%s: automountServiceAccountToken %v, want false: the pods need no API credentials", j.Name, a)
		}
	}
	// The benchmark flags are checked as the main command checks them.
	if code, _, errb := run(t, nil, "k8s-job", "--shards", "2", "--", "--request-rat", "x"); code != 2 || !strings.Contains(errb, "the benchmark flags after --") {
		t.Errorf("bad flags: exit %d %q", code, errb)
	}
	if code, _, errb := run(t, nil, "k8s-job", "--shards", "2", "--", "--shard", "0/2"); code != 2 || !strings.Contains(errb, "--shard: the manifest sets it") {
		t.Errorf("--shard given: exit %d %q", code, errb)
	}
}

// -o yaml prints the same manifest as YAML: read back, it is the JSON
// form, and each Job in it decodes strictly into batch/v1's types.
func TestK8sManifestYAML(t *testing.T) {
	args := []string{"k8s-job", "--shards", "3", "--start-at", "1798000000", "--", "--backend", "vllm", "--base-url", "http://vllm:8000",
		"--model", "m", "--dataset-name", "random-ids", "--num-prompts", "100"}
	code, js, errb := run(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb)
	}
	for _, o := range [][]string{{"-o", "yaml"}, {"--output=yaml"}} {
		code, ys, errb := run(t, nil, append(append([]string{"k8s-job"}, o...), args[1:]...)...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s", o, code, errb)
		}
		if strings.HasPrefix(ys, "{") || !strings.Contains(ys, "\nkind: List\n") {
			t.Fatalf("%q: not YAML:\n%s", o, ys)
		}
		fromYAML, err := yaml.YAMLToJSON([]byte(ys))
		if err != nil {
			t.Fatal(err)
		}
		var a, b any
		if err := json.Unmarshal(fromYAML, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(js), &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%q: the YAML read back is not the JSON form:\n%s\n%s", o, fromYAML, js)
		}
		var list struct {
			APIVersion string `json:"apiVersion"`
			Kind       string
			Items      []batchv1.Job
		}
		if err := yaml.UnmarshalStrict([]byte(ys), &list); err != nil || len(list.Items) != 2 || list.Items[1].Name != "benchserve-merge" {
			t.Errorf("%q: %v, %d items", o, err, len(list.Items))
		}
		// The numbers among the arguments stay strings.
		if args := list.Items[0].Spec.Template.Spec.Containers[0].Args; args[3] != "1798000000" {
			t.Errorf("%q: args %q", o, args)
		}
	}
	if code, _, errb := run(t, nil, "k8s-job", "-o", "xml", "--shards", "2", "--", "--backend", "vllm"); code != 2 || !strings.Contains(errb, "invalid choice: 'xml'") {
		t.Errorf("-o xml: exit %d %q", code, errb)
	}
}

var _ = exit.OK
