package cli

import (
	"bufio"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"benchserve/sim"
)

// planFile is a plan file as a test reads it: the header's fields, and
// each request's offset and body hash, by seq.
type planFile struct {
	head   map[string]any
	offset []float64
	hash   []string
	prompt []int
}

func readPlanFile(t *testing.T, path string) planFile {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	var p planFile
	for n := 0; sc.Scan(); n++ {
		if n == 0 {
			if err := json.Unmarshal(sc.Bytes(), &p.head); err != nil {
				t.Fatal(err)
			}
			continue
		}
		var l struct {
			Seq        int                 `json:"seq"`
			Offset     float64             `json:"offset"`
			Body       *string             `json:"body"`
			BodyBase64 *string             `json:"body_base64"`
			Headers    map[string][]string `json:"headers"`
			PromptLen  int                 `json:"prompt_len"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if l.Seq != n-1 {
			t.Fatalf("line %d has seq %d", n+1, l.Seq)
		}
		var body []byte
		if l.Body != nil {
			body = []byte(*l.Body)
		} else {
			body, _ = base64.StdEncoding.DecodeString(*l.BodyBase64)
		}
		sum := sha256.Sum256(body)
		p.offset = append(p.offset, l.Offset)
		p.hash = append(p.hash, hex.EncodeToString(sum[:]))
		p.prompt = append(p.prompt, l.PromptLen)
	}
	return p
}

// sentRecord is what a run's record file says of one request.
type sentRecord struct {
	ID       string  `json:"id"`
	Intended float64 `json:"intended"`
	Start    float64 `json:"start"`
	Success  bool    `json:"success"`
}

// planRecords reads a record file's requests, by seq.
func planRecords(t *testing.T, path string) map[int]sentRecord {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]sentRecord{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m struct {
			Seq *int `json:"seq"`
			sentRecord
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(line, "Infinity", "null")), &m); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		if m.Seq != nil {
			out[*m.Seq] = m.sentRecord
		}
	}
	return out
}

// truthHashes is the body hash of each request the simulator received,
// by request id, and its completion tokens in all; the truth is reset.
func truthHashes(t *testing.T, base string) (map[string]string, int) {
	t.Helper()
	doc := getJSON[struct {
		Requests []struct {
			ID               string `json:"id"`
			Body             string `json:"body_sha256"`
			CompletionTokens int    `json:"completion_tokens"`
		} `json:"requests"`
	}](t, base+"/sim/truth")
	out, tokens := map[string]string{}, 0
	for _, r := range doc.Requests {
		out[r.ID] = r.Body
		tokens += r.CompletionTokens
	}
	if code, err := httpPost(base + "/sim/truth/reset"); err != nil || code != 200 {
		t.Fatalf("truth reset: %v %d", err, code)
	}
	return out, tokens
}

// sentHashes is the body the simulator received for each seq of a run's
// record file.
func sentHashes(t *testing.T, recs map[int]sentRecord, truth map[string]string) []string {
	t.Helper()
	out := make([]string, len(recs))
	for seq, r := range recs {
		h, ok := truth[r.ID]
		if !ok || seq >= len(out) {
			t.Fatalf("request %d (id %s) is not in the simulator's truth", seq, r.ID)
		}
		out[seq] = h
	}
	return out
}

// A saved plan holds exactly the bytes the saving run sent; a replay of
// it sends those bytes again at its offsets, and so does a second replay;
// a given --request-rate scales the offsets. The replays read no dataset
// and load no tokenizer: their token counts are the plan's and the
// server's.
func TestPlanSaveAndReplay(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	_, base := newSim(t, cfg)
	dir := t.TempDir()
	plan := filepath.Join(dir, "plan.jsonl")
	env := map[string]string{"OPENAI_API_KEY": "sk-secret-1"}
	common := []string{"--base-url", base, "--warmup-requests", "0", "--output-file", filepath.Join(dir, "out.jsonl")}
	save := append([]string{"--backend", "vllm-chat", "--dataset-name", "random-ids", "--num-prompts", "12",
		"--random-input-len", "24", "--random-output-len", "5", "--request-rate", "400", "--max-concurrency", "3",
		"--header", "X-Team=blue", "--save-plan", plan, "--record-file", filepath.Join(dir, "saved.rec")}, common...)
	if code, out, errs := run(t, env, save...); code != 0 {
		t.Fatalf("saving run: exit %d\n%s\n%s", code, out, errs)
	}
	p := readPlanFile(t, plan)
	raw, _ := os.ReadFile(plan)
	if strings.Contains(string(raw), "sk-secret-1") || !strings.Contains(string(raw), `"X-Team":["blue"]`) {
		t.Errorf("the plan file leaks the key or lost --header:\n%.600s", raw)
	}
	if got := p.head["omitted_headers"]; len(p.hash) != 12 || p.head["version"] != 1.0 || p.head["backend"] != "vllm-chat" ||
		p.head["path"] != "/v1/chat/completions" || p.head["request_rate"] != 400.0 || p.head["max_concurrency"] != 3.0 ||
		got == nil || len(got.([]any)) != 1 || got.([]any)[0] != "Authorization" {
		t.Fatalf("plan header %v, %d requests", p.head, len(p.hash))
	}
	truth, _ := truthHashes(t, base)
	saved := sentHashes(t, planRecords(t, filepath.Join(dir, "saved.rec")), truth)
	if strings.Join(saved, ",") != strings.Join(p.hash, ",") {
		t.Fatalf("the plan's bodies are not what the saving run sent:\nplan %v\nsent %v", p.hash, saved)
	}

	replay := func(name string, extra ...string) (map[int]sentRecord, []string, map[string]any, int, string) {
		t.Helper()
		rec, out := filepath.Join(dir, name+".rec"), filepath.Join(dir, name+".jsonl")
		args := append([]string{"--base-url", base, "--warmup-requests", "0", "--replay-plan", plan, "--record-file", rec, "--output-file", out}, extra...)
		code, stdout, errs := run(t, env, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", name, code, stdout, errs)
		}
		recs := planRecords(t, rec)
		truth, tokens := truthHashes(t, base)
		return recs, sentHashes(t, recs, truth), readLine(t, out), tokens, stdout
	}
	recs, first, line, tokens, stdout := replay("replay1")
	if strings.Join(first, ",") != strings.Join(p.hash, ",") {
		t.Fatalf("the replay sent other bytes:\nplan %v\nsent %v", p.hash, first)
	}
	if !strings.Contains(stdout, "no tokenizer is loaded") || !strings.Contains(stdout, "Replayed plan:") {
		t.Errorf("the console does not say it replayed:\n%s", stdout)
	}
	inputs := 0
	for seq, r := range recs {
		inputs += p.prompt[seq]
		// The offsets are the plan's, and no request left before its own.
		if math.Abs(r.Intended-p.offset[seq]) > 1e-9 || r.Start < r.Intended || !r.Success {
			t.Errorf("request %d: intended %v, started %v, success %v; the plan's offset %v", seq, r.Intended, r.Start, r.Success, p.offset[seq])
		}
	}
	num := func(k string) float64 {
		f, err := strconv.ParseFloat(string(line[k].(json.Number)), 64)
		if err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		return f
	}
	if num("completed") != 12 || num("total_output_tokens") != float64(tokens) || tokens == 0 || num("total_input_tokens") != float64(inputs) ||
		line["replay_plan"] != plan || num("replay_requests") != 12 || num("replay_offset_scale") != 1 ||
		num("replay_plan_request_rate") != 400 || num("replay_plan_max_concurrency") != 3 || num("max_concurrency") != 3 || line["backend"] != "vllm-chat" {
		t.Errorf("replay result: %v (the server generated %d tokens; the plan's inputs %d)", line, tokens, inputs)
	}

	_, second, _, _, _ := replay("replay2")
	if strings.Join(second, ",") != strings.Join(first, ",") {
		t.Errorf("a second replay sent other bytes:\nfirst  %v\nsecond %v", first, second)
	}

	// Twice the plan's rate: every offset halved; the cap given replaces
	// the plan's.
	recs, fast, line, _, _ := replay("fast", "--request-rate", "800", "--max-concurrency", "1")
	if strings.Join(fast, ",") != strings.Join(p.hash, ",") {
		t.Errorf("the scaled replay sent other bytes")
	}
	for seq, r := range recs {
		if math.Abs(r.Intended-p.offset[seq]/2) > 1e-9 {
			t.Errorf("request %d: intended %v, want half the plan's %v", seq, r.Intended, p.offset[seq])
		}
	}
	if num("replay_offset_scale") != 0.5 || num("max_concurrency") != 1 {
		t.Errorf("scaled replay result: %v", line)
	}
}

// A plan file written by an earlier build (testdata/plan_v1.jsonl,
// committed, never regenerated) still replays, byte for byte.
func TestPlanV1Replays(t *testing.T) {
	const golden = "testdata/plan_v1.jsonl"
	p := readPlanFile(t, golden)
	cfg, _ := sim.Preset(sim.PresetInstant)
	cfg.Model = p.head["model"].(string)
	_, base := newSim(t, cfg)
	dir := t.TempDir()
	rec := filepath.Join(dir, "r.rec")
	code, out, errs := run(t, nil, "--base-url", base, "--replay-plan", golden, "--warmup-requests", "0",
		"--record-file", rec, "--output-file", filepath.Join(dir, "out.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	truth, tokens := truthHashes(t, base)
	sent := sentHashes(t, planRecords(t, rec), truth)
	if len(sent) != len(p.hash) || strings.Join(sent, ",") != strings.Join(p.hash, ",") || tokens == 0 {
		t.Errorf("sent %v (%d tokens), want the plan's %v", sent, tokens, p.hash)
	}
}

// A plan file of an unknown version, or with a bad line, is refused with
// one line naming the file and line, before any request reaches the
// server.
func TestPlanFileRefused(t *testing.T) {
	cfg, _ := sim.Preset(sim.PresetInstant)
	s, base := newSim(t, cfg)
	_ = s
	golden, err := os.ReadFile("testdata/plan_v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(golden), "\n")
	dir := t.TempDir()
	for _, c := range []struct {
		name, text, want string
	}{
		{"v9.jsonl", strings.Replace(lines[0], `"version":1`, `"version":9`, 1) + strings.Join(lines[1:], ""), "v9.jsonl:1: plan format version 9: this benchserve reads version 1 only"},
		{"bad.jsonl", lines[0] + lines[1] + "{\"seq\": 1, oops\n" + strings.Join(lines[3:], ""), "bad.jsonl:3: not a request line"},
		{"cut.jsonl", lines[0] + lines[1], "cut.jsonl:2: the file ends after 1 requests"},
	} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := run(t, nil, "--base-url", base, "--replay-plan", path, "--output-file", filepath.Join(dir, "out.jsonl"))
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line with %q", c.name, code, errs, c.want)
		}
	}
	if n := getJSON[struct {
		Requests []any `json:"requests"`
	}](t, base+"/sim/truth"); len(n.Requests) != 0 {
		t.Errorf("%d requests reached the server", len(n.Requests))
	}
	// What a plan cannot hold is refused before the run too.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dataset-name", "random-ids", "--session-turns", "3", "--backend", "vllm-chat", "--save-plan", filepath.Join(dir, "x.jsonl")}, "--save-plan: --dataset-name random-ids makes conversations"},
		{[]string{"--dataset-name", "random-ids", "--max-concurrency", "2", "--duration", "5", "--save-plan", filepath.Join(dir, "x.jsonl")}, "--save-plan: a closed loop by --duration"},
		{[]string{"--replay-plan", "testdata/plan_v1.jsonl", "--duration", "5"}, "--replay-plan with --duration"},
		{[]string{"--replay-plan", "testdata/plan_v1.jsonl", "--backend", "sglang"}, "holds --backend"},
		{[]string{"--replay-plan", "testdata/plan_v1.jsonl", "--save-plan", filepath.Join(dir, "x.jsonl")}, "--save-plan with --replay-plan"},
	} {
		code, _, errs := run(t, nil, append([]string{"--base-url", base, "--output-file", filepath.Join(dir, "out.jsonl")}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	if n := getJSON[struct {
		Requests []any `json:"requests"`
	}](t, base+"/sim/truth"); len(n.Requests) != 0 {
		t.Errorf("%d requests reached the server", len(n.Requests))
	}
}
